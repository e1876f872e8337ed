"""Entries by name or alias, and pages of them, as an audience sees them (searches:
entry_search.py)."""

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import F, Prefetch, Q, QuerySet, TextField, Value

from apps.agents.models import Agent
from apps.agents.users import AGENT, Audience
from apps.core.errors import NotFound
from apps.core.pagination import Page, id_paginate
from apps.entries.models import Action, Entry, EntryAlias, EntryChange, Kind


def with_aliases(qs: QuerySet[Entry]) -> QuerySet[Entry]:
    return qs.prefetch_related(Prefetch("aliases", queryset=EntryAlias.objects.order_by("id")))


def _own_first(found: Iterable[Entry]) -> Entry | None:
    """A user's entry before the agent's of the same name (their MEMORY.md, say)."""
    return min(found, key=lambda e: (e.user == AGENT, e.pk), default=None)


def entry_get(*, agent: Agent, ref: str, audience: Audience) -> Entry:
    """The entry by name or alias that `audience` sees, the user's own before the agent's
    (everyone: the agent's first); NotFound otherwise."""
    qs = with_aliases(Entry.objects.filter(audience.q(), agent=agent))
    found = list(qs.filter(name=ref)) or list(qs.filter(aliases__name=ref).distinct())
    if audience.user is None:
        entry = min(found, key=lambda e: (e.user != AGENT, e.pk), default=None)
    else:
        entry = _own_first(found)
    if entry is None:
        raise NotFound(f"no entry named '{ref}'", loc=["path", "name"])
    return entry


def entries_page(
    *,
    agent: Agent,
    kind: str | None,
    after_id: int | None,
    limit: int,
    audience: Audience,
    prefix: str = "",
    with_content: bool = False,
) -> Page[Entry]:
    """Entries `audience` sees in id order (the monotonic insert order), `limit` per page;
    only names starting with `prefix`; each with `listed_content` (None unless
    `with_content`)."""
    qs = with_aliases(Entry.objects.filter(audience.q(), agent=agent))
    if kind:
        qs = qs.filter(kind=kind)
    if prefix:
        qs = qs.filter(name__startswith=prefix)
    listed = F("content") if with_content else Value(None, output_field=TextField())
    qs = qs.annotate(listed_content=listed)
    return id_paginate(qs, after_id=after_id, limit=limit)


def entries_visible(*, agent: Agent, audience: Audience) -> QuerySet[Entry]:
    """The entries `audience` sees."""
    return Entry.objects.filter(audience.q(), agent=agent)


def entries_searchable(*, agent: Agent, audience: Audience) -> QuerySet[Entry]:
    """The entries `audience` sees that searches look in: all but those written with
    `index: false` (Entry.unindexed)."""
    return entries_visible(agent=agent, audience=audience).exclude(unindexed=True)


def documents(*, agent: Agent, names: Iterable[str], owner: str = AGENT) -> dict[str, Entry]:
    """`owner`'s named Note/Archive entries that exist, by name (one query)."""
    rows = Entry.objects.filter(agent=agent, user=owner, name__in=list(names))
    return {e.name: e for e in rows}


def entries_all(*, agent: Agent, owner: str | None = None) -> list[Entry]:
    """Every entry of the agent (of `owner` alone when given) with its aliases, in id order
    (export)."""
    qs = Entry.objects.filter(agent=agent)
    if owner is not None:
        qs = qs.filter(user=owner)
    return list(with_aliases(qs).order_by("id"))


@dataclass(frozen=True)
class ArchiveOrigin:
    """An archive and the detail of its "add" change (what made it, e.g. which session)."""

    entry_id: int
    name: str
    added_by: str
    added_detail: str


def archives_under(*, agent: Agent, prefix: str) -> list[ArchiveOrigin]:
    """The agent's archives named, or aliased (renamed), `<prefix>/...`, with their origin."""
    under = Q(name__startswith=prefix + "/") | Q(aliases__name__startswith=prefix + "/")
    archives = Entry.objects.filter(agent=agent, kind=Kind.ARCHIVE).filter(under)
    ids = set(archives.values_list("id", flat=True))
    added = {
        c.entry_id: c
        for c in EntryChange.objects.filter(entry_id__in=ids, action=Action.ADD).order_by("id")
    }
    return [
        ArchiveOrigin(
            entry_id=e.pk,
            name=e.name,
            added_by=added[e.pk].changed_by if e.pk in added else "",
            added_detail=added[e.pk].detail if e.pk in added else "",
        )
        for e in Entry.objects.filter(pk__in=ids).order_by("id")
    ]


def entries_named(*, agent: Agent, refs: Iterable[str]) -> list[Entry]:
    """The agent's entries with any of these names or aliases (one query)."""
    refs = list(refs)
    return list(
        Entry.objects.filter(agent=agent)
        .filter(Q(name__in=refs) | Q(aliases__name__in=refs))
        .distinct()
        .order_by("id")
    )
