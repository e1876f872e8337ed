"""Which tables are copied, in which order, and which foreign keys wait for a second pass."""

from dataclasses import dataclass

from django.apps import apps
from django.db import models

# Rows that `migrate` itself writes (post_migrate) into a fresh database. Their ids depend on
# the order apps were migrated in, so a fresh target's copies are replaced by the source's.
GENERATED = ("contenttypes.ContentType", "auth.Permission")


@dataclass(frozen=True)
class TablePlan:
    """One model's table: its concrete fields in order, and the foreign keys that are
    written in a second pass (self references and cycles), NULL in the first."""

    model: type[models.Model]
    fields: tuple[models.Field, ...]
    deferred: tuple[models.Field, ...] = ()

    @property
    def label(self) -> str:
        return self.model._meta.label

    @property
    def table(self) -> str:
        return self.model._meta.db_table

    @property
    def attnames(self) -> list[str]:
        return [f.attname for f in self.fields]

    @property
    def generated(self) -> bool:
        return self.label in GENERATED

    def deferred_index(self) -> list[int]:
        return [self.fields.index(f) for f in self.deferred]


def _copied_models() -> list[type[models.Model]]:
    """Every concrete, managed model with a table of its own, m2m through tables included."""
    return [
        m
        for m in apps.get_models(include_auto_created=True)
        if m._meta.managed and not m._meta.proxy and not m._meta.swapped
    ]


def _foreign_keys(model: type[models.Model]) -> list[models.Field]:
    return [f for f in model._meta.concrete_fields if f.is_relation and f.related_model]


def copy_plan() -> list[TablePlan]:
    """Tables in dependency order: every table after the tables its foreign keys point to,
    content types and permissions first.

    A self reference (a fact's `superseded_by`) is deferred; a cycle between tables is broken
    at a nullable foreign key, which is deferred too. Ties keep the app registry's order.
    """
    remaining = _copied_models()
    deferred = {m: [f for f in _foreign_keys(m) if f.related_model is m] for m in remaining}
    done: set[type[models.Model]] = set()
    order: list[type[models.Model]] = []

    def waits_for(model: type[models.Model]) -> set:
        return {f.related_model for f in _foreign_keys(model) if f not in deferred[model]}

    while remaining:
        ready = [m for m in remaining if waits_for(m) <= done]
        if not ready:
            _break_cycle(remaining, done, deferred)
            continue
        for model in ready:
            order.append(model)
            done.add(model)
            remaining.remove(model)
    # Migrate's own rows go first (they depend on nothing else): a target holding any other
    # row then holds the store's content types and permissions, not migrate's.
    order.sort(key=lambda m: m._meta.label not in GENERATED)
    return [
        TablePlan(model=m, fields=tuple(m._meta.concrete_fields), deferred=tuple(deferred[m]))
        for m in order
    ]


def _break_cycle(remaining: list, done: set, deferred: dict) -> None:
    """Defer the first nullable foreign key that points to a table not yet placed."""
    for model in remaining:
        for field in _foreign_keys(model):
            if field.related_model not in done and field.null and field not in deferred[model]:
                deferred[model].append(field)
                return
    names = ", ".join(m._meta.label for m in remaining)
    raise RuntimeError(f"a cycle of NOT NULL foreign keys between {names}")
