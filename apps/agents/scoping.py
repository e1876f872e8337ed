"""The admin keeps to the staff user's teams (superusers see every team), and every change made
in it is recorded as an audit event (source "admin"): who, what, when, before and after."""

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path
from django.contrib.admin.views.main import ChangeList
from django.db import models, transaction
from django.db.models import QuerySet
from django.db.models.fields.related import RelatedField
from django.forms import ModelForm
from django.http import HttpRequest
from django.http.response import HttpResponseBase

from apps.agents.models import Agent, Team
from apps.agents.services import audit_record, json_safe

# The foreign keys followed, in this order, from a model to its team.
_HOPS = ("team", "agent", "session", "fact", "entry")
# Never copied into an audit event: vectors are noise, hashes and passwords are secrets, and
# the event has its own time.
_NOT_AUDITED = {"embedding", "hashed_key", "password", "updated_at"}

if TYPE_CHECKING:
    # What the mixins' super() calls reach at run time: a ModelAdmin or an inline.
    # Any: the mixins serve admins of every model.
    _ScopedBase = admin.options.BaseModelAdmin[Any]
    _AuditedBase = admin.ModelAdmin[Any]
    # The stubs' names for a list_filter item and a filter's choice (no runtime names).
    from django.contrib.admin.filters import _ListFilterChoices as ListFilterChoice
    from django.contrib.admin.options import _ListFilterT as ListFilterSpec
else:
    _ScopedBase = _AuditedBase = object
    ListFilterChoice = ListFilterSpec = object


def team_path(model: type[models.Model]) -> str | None:
    """The lookup from `model` to its Team ("" for Team itself), or None when it has no team
    (such a model is for superusers only)."""
    if model is Team:
        return ""
    fields = {f.name: f for f in model._meta.concrete_fields if f.is_relation}
    for hop in _HOPS:
        field = fields.get(hop)
        if field is None or field.related_model is None or field.related_model is model:
            continue
        rest = team_path(field.related_model)
        if rest is not None:
            return f"{hop}__{rest}" if rest else hop
    return None


def for_teams(qs: QuerySet, request: HttpRequest, path: str = "agent__team") -> QuerySet:
    """`qs` limited to rows whose team (at `path`, "" for teams) has the user as a member."""
    if request.user.is_superuser:
        return qs
    # One membership row per (team, user): the join cannot duplicate rows.
    prefix = f"{path}__" if path else ""
    return qs.filter(**{f"{prefix}memberships__user": request.user})


def agent_of(obj: models.Model) -> Agent | None:
    """The agent `obj` belongs to (through its team path), or None (teams, memberships)."""
    if isinstance(obj, Agent):
        return obj
    hops = (team_path(type(obj)) or "").split("__")
    if "agent" not in hops:
        return None
    current: Any = obj  # Any: each hop's related row, read by getattr
    for hop in hops[: hops.index("agent") + 1]:
        current = getattr(current, hop, None)
        if current is None:
            return None
    return current


def audited_fields(model: type[models.Model], names: list[str] | None = None) -> list[str]:
    """The concrete, non-secret fields of `model` (of `names` when given) an event copies."""
    fields = [f.name for f in model._meta.concrete_fields if f.name not in _NOT_AUDITED]
    return fields if names is None else [n for n in names if n in fields]


# Any: values() rows (Any in django-stubs), keyed by primary key.
def _rows(qs: QuerySet, fields: list[str]) -> dict[Any, dict[str, Any]]:
    """`fields` of each row, by primary key."""
    pk = qs.model._meta.pk.name
    return {
        row[pk]: json_safe({f: row[f] for f in fields})
        for row in qs.values(*dict.fromkeys([pk, *fields]))
    }


class TeamScopedMixin(_ScopedBase):
    """For a ModelAdmin or an inline: rows, foreign-key choices and related list filters keep
    to the user's teams. Another team's object answers as if it did not exist (the admin
    redirects to its index with "doesn't exist")."""

    team_path: str | None = None  # derived from the model when unset

    def _team_path(self) -> str | None:
        return self.team_path if self.team_path is not None else team_path(self.model)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        qs = super().get_queryset(request)
        path = self._team_path()
        if path is None:
            return qs if request.user.is_superuser else qs.none()
        return for_teams(qs, request, path)

    def get_field_queryset(
        self, db: str | None, db_field: RelatedField, request: HttpRequest
    ) -> QuerySet | None:
        # Serves every foreign-key and many-to-many choice list, autocomplete included.
        qs = super().get_field_queryset(db, db_field, request)
        path = team_path(db_field.related_model)
        if path is None or request.user.is_superuser:
            return qs
        if qs is None:
            qs = db_field.related_model._default_manager.using(db).all()
        return for_teams(qs, request, path)

    def has_view_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        scoped = self._team_path() is not None or request.user.is_superuser
        return scoped and super().has_view_permission(request, obj)

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        scoped = self._team_path() is not None or request.user.is_superuser
        return scoped and super().has_change_permission(request, obj)


class AuditedMixin(_AuditedBase):
    """Records each admin change as an AuditEvent: saves (the changed fields before and
    after), inline rows, deletions, and each custom action (the fields it changed)."""

    def _audit(
        self,
        request: HttpRequest,
        obj: models.Model,
        verb: str,
        before: dict[str, Any] | None = None,  # Any: JSON snapshots (json_safe)
        after: dict[str, Any] | None = None,
    ) -> None:
        # An agent's events go with it: the event of deleting an agent belongs to no agent.
        agent = None if isinstance(obj, Agent) and verb == "delete" else agent_of(obj)
        audit_record(
            user=request.user,
            agent=agent,
            source="admin",
            action=f"{obj._meta.model_name}.{verb}",
            target=obj,
            before=before,
            after=after,
        )

    def _audit_form(self, request: HttpRequest, form: ModelForm, change: bool) -> None:
        obj = form.instance
        model = type(obj)
        fields = audited_fields(model, list(form.changed_data)) if change else None
        if change and not fields:
            return
        after = _rows(model._default_manager.filter(pk=obj.pk), audited_fields(model, fields))
        if not after:  # the row went away while saving: nothing to show
            return
        before = json_safe({f: form.initial.get(f) for f in fields}) if fields is not None else None
        self._audit(request, obj, "update" if change else "create", before, after[obj.pk])

    def _audit_deletion(self, request: HttpRequest, obj: models.Model) -> None:
        model = type(obj)
        before = _rows(model._default_manager.filter(pk=obj.pk), audited_fields(model))
        self._audit(request, obj, "delete", before=before.get(obj.pk))

    # Any: Django's admin passes forms and formsets untyped (django-stubs: Any).
    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: Any) -> None:
        # Runs after save_model (which subclasses override to call services) in the admin's
        # transaction; reading the saved row back shows what the service really stored.
        super().save_related(request, form, formsets, change)
        self._audit_form(request, form, change)

    # Any: as save_related's.
    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: Any) -> None:
        for deleted in formset.deleted_forms:
            if deleted.instance.pk is not None:  # recorded before the row goes
                self._audit_deletion(request, deleted.instance)
        super().save_formset(request, form, formset, change)
        for inline_form in formset.forms:
            if inline_form in formset.deleted_forms or not inline_form.has_changed():
                continue
            if inline_form.instance.pk is not None:
                added = inline_form.instance in formset.new_objects
                self._audit_form(request, inline_form, change=not added)

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        with transaction.atomic():
            self._audit_deletion(request, obj)
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        with transaction.atomic():
            for obj in queryset:
                self._audit_deletion(request, obj)
            super().delete_queryset(request, queryset)

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        # django-stubs types each action as optional; Django's get_actions never holds a None.
        return {  # type: ignore[misc]
            name: (func if name == "delete_selected" else self._audited(func, name), name, text)
            for name, (func, _, text) in actions.items()
        }

    def _audited(self, func: Callable, name: str) -> Callable:
        """`func` run as is (no transaction: actions call services that embed), then one
        event per selected row it changed, with the changed fields before and after."""

        def action(
            modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet
        ) -> HttpResponseBase | None:
            fields = audited_fields(queryset.model)
            pks = list(queryset.values_list("pk", flat=True))
            before = _rows(queryset.model._default_manager.filter(pk__in=pks), fields)
            response = func(modeladmin, request, queryset)
            after = _rows(queryset.model._default_manager.filter(pk__in=pks), fields)
            objects = queryset.model._default_manager.in_bulk(list(after))
            for pk, old in before.items():
                new = after.get(pk)
                if new is None or new == old:
                    continue
                changed = [f for f in fields if old.get(f) != new.get(f)]
                self._audit(
                    request,
                    objects[pk],
                    name,
                    before={f: old.get(f) for f in changed},
                    after={f: new.get(f) for f in changed},
                )
            return response

        action.__name__ = name
        return action


class TeamScopedAdmin(TeamScopedMixin, AuditedMixin, admin.ModelAdmin):
    """A ModelAdmin kept to the user's teams, whose every change is audited."""

    def get_list_filter(
        self, request: HttpRequest
    ) -> list[ListFilterSpec] | tuple[ListFilterSpec, ...]:
        # A plain related filter lists every team's agents: staff see only those with rows here.
        filters = super().get_list_filter(request)
        if request.user.is_superuser:
            return filters
        return [self._related_only(f) for f in filters]

    def _related_only(self, list_filter: ListFilterSpec) -> ListFilterSpec:
        path = list_filter if isinstance(list_filter, str) else ""
        if path and get_fields_from_path(self.model, path)[-1].is_relation:
            return (path, admin.RelatedOnlyFieldListFilter)
        return list_filter


class ReadOnlyAdmin(TeamScopedAdmin):
    """A log kept to the user's teams that no one adds to, edits or deletes from here,
    superusers included (no delete permission, so no bulk delete action either)."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: models.Model | None = None) -> bool:
        return False


class UserListFilter(admin.AllValuesFieldListFilter):
    """The `user` of the rows listed (issue 26), kept to the user's teams (the admin's
    queryset), the agent's own rows ("") shown as such rather than as a blank link."""

    AGENT_LABEL = "(the agent's own)"

    def choices(self, changelist: ChangeList) -> Iterator[ListFilterChoice]:
        for choice in super().choices(changelist):
            if choice["display"] == "" or choice["display"].startswith(" ("):
                choice = {**choice, "display": self.AGENT_LABEL + choice["display"]}
            yield choice


# The admins of rows that belong to a user: `user` shown, filtered and searched.
USER_LIST_FILTER = ("user", UserListFilter)


class TeamScopedTabularInline(TeamScopedMixin, admin.TabularInline):
    """An inline whose foreign-key choices keep to the user's teams."""
