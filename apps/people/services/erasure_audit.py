"""What a user's erasure does to the audit log (issue 39). An event about a row of theirs (a
review or admin edit of their fact, entry, learning, session, ...) keeps who, what, when and
which row, and loses the row's content: `before` and `after` become {"erased": true} (None
stays None). A snapshot of a row the agent keeps loses its link to their sessions. The
erasure's own event names the user by a keyed hash, never by name (`user_hmac`).

Which rows were theirs is read from what the erasure deleted: the rows the agent's events
are about are looked up before and after the deletions, in its transaction.
"""

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Model, Q
from django.utils.crypto import salted_hmac

from apps.agents.models import Agent, AuditEvent

ACTION = "user.erase"
ERASED = {"erased": True}
# The apps whose rows an erasure deletes: an event's object_type is a model name of one.
ERASING_APPS = ("conversations", "facts", "entries", "learnings", "lifecycle")
# The keys of a snapshot that name the session a row came from.
LINKS = ("session", "session_id", "session_key")
# The salt keeps the module's old name: the recorded erasures' hashes were made under it.
_SALT = "memoryhub.lifecycle.user_erase"
_CONTENT = Q(before__isnull=False) | Q(after__isnull=False)


def user_hmac(*, agent_id: int, user: str, secret: str | None = None) -> str:
    """HMAC-SHA256 of the agent and the user under SECRET_KEY (or `secret`): the erasure
    event's `user_hmac`, which only someone who knows the user and the key can match."""
    return salted_hmac(_SALT, f"{agent_id}:{user}", secret=secret, algorithm="sha256").hexdigest()


def user_hmacs(*, agent_id: int, user: str) -> list[str]:
    """`user_hmac` under SECRET_KEY and each of SECRET_KEY_FALLBACKS (a rotated key)."""
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return [user_hmac(agent_id=agent_id, user=user, secret=s) for s in secrets]


def _models() -> dict[str, type[Model]]:
    erasing = (m for m in apps.get_models() if m._meta.app_label in ERASING_APPS)
    return {str(m._meta.model_name): m for m in erasing}


def _existing(model: type[Model], ids: Iterable[str]) -> set[str]:
    """The ids of `ids` (an event's object_id) that name a row of `model` now."""
    pks = []
    for raw in ids:
        try:
            pks.append(model._meta.pk.to_python(raw))
        except (ValidationError, ValueError, TypeError):
            continue  # not an id of this model: no row
    rows = model._default_manager.filter(pk__in=pks).values_list("pk", flat=True)
    return {str(pk) for pk in rows}


def audited_rows(agent: Agent) -> dict[type[Model], set[str]]:
    """The rows of the erasing apps that the agent's events with content are about and
    that exist now (by model); `rows_gone` tells later which of them were deleted."""
    models = _models()
    wanted: dict[type[Model], set[str]] = defaultdict(set)
    events = AuditEvent.objects.filter(agent=agent).filter(_CONTENT).exclude(action=ACTION)
    for kind, pk in events.values_list("object_type", "object_id").distinct():
        if kind in models and pk:
            wanted[models[kind]].add(pk)
    return {model: _existing(model, ids) for model, ids in wanted.items()}


def rows_gone(watched: dict[type[Model], set[str]]) -> dict[str, set[str]]:
    """Of the rows `audited_rows` found, those deleted since: ids by object_type."""
    gone = {str(m._meta.model_name): ids - _existing(m, ids) for m, ids in watched.items()}
    return {kind: ids for kind, ids in gone.items() if ids}


@dataclass(frozen=True)
class AuditCleared:
    cleared: int  # events about the user's rows that lost their content
    unlinked: int  # snapshots of kept rows that lost the link to the user's sessions


def audit_events_clear(
    *, agent: Agent, user: str, gone: dict[str, set[str]], sessions: dict[str, str]
) -> AuditCleared:
    """Erase the content of the agent's events about the user's rows: those `gone` names
    (deleted by this erasure) and those whose snapshot names the user; strip the links to
    `sessions` (id -> key) from the others. Inside the erasure's transaction."""
    about = Q(before__user=user) | Q(after__user=user)
    for kind, ids in gone.items():
        about |= Q(object_type=kind, object_id__in=sorted(ids))
    theirs = AuditEvent.objects.filter(agent=agent).filter(_CONTENT).filter(about)
    _rename_in_erasures(theirs.filter(action=ACTION), agent=agent, user=user)
    cleared = list(theirs.exclude(action=ACTION).values_list("pk", flat=True))
    AuditEvent.objects.filter(pk__in=cleared, before__isnull=False).update(before=ERASED)
    AuditEvent.objects.filter(pk__in=cleared, after__isnull=False).update(after=ERASED)
    return AuditCleared(cleared=len(cleared), unlinked=_unlink(agent, sessions))


def _rename_in_erasures(events: Iterable[AuditEvent], *, agent: Agent, user: str) -> None:
    """An earlier erasure's event that named the user (before issue 39) names them by hash."""
    for event in events:
        before = {k: v for k, v in (event.before or {}).items() if k != "user"}
        event.before = {"user_hmac": user_hmac(agent_id=agent.pk, user=user), **before}
        event.save(update_fields=["before"])


def _unlink(agent: Agent, sessions: dict[str, str]) -> int:
    """Set to null every LINKS key of a snapshot that names one of `sessions` (by id, hex
    id or key); the events changed."""
    if not sessions:
        return 0
    names = set(sessions) | set(sessions.values())
    names |= {s.replace("-", "") for s in sessions}
    linked = Q()
    for side in ("before", "after"):
        for key in LINKS:
            linked |= Q(**{f"{side}__has_key": key})
    changed = 0
    for event in AuditEvent.objects.filter(agent=agent).filter(linked).exclude(action=ACTION):
        before, after = _unlinked(event.before, names), _unlinked(event.after, names)
        if (before, after) != (event.before, event.after):
            event.before, event.after = before, after
            event.save(update_fields=["before", "after"])
            changed += 1
    return changed


# Any: an audit snapshot is a JSONField's value (Any in django-stubs).
def _unlinked(snapshot: Any, names: set[str]) -> Any:
    if not isinstance(snapshot, dict):
        return snapshot
    return {k: None if k in LINKS and str(v) in names else v for k, v in snapshot.items()}
