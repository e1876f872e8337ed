"""Reads for entries, always scoped to one agent."""

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import Prefetch, Q, QuerySet

from apps.agents.models import Agent
from apps.core.errors import NotFound
from apps.core.pagination import Page, id_paginate
from apps.entries.models import Action, Entry, EntryAlias, EntryChange, Kind
from apps.search.legs import keyword_search


@dataclass(frozen=True)
class EntryHit:
    entry: Entry
    score: float


def _with_aliases(qs: QuerySet[Entry]) -> QuerySet[Entry]:
    return qs.prefetch_related(Prefetch("aliases", queryset=EntryAlias.objects.order_by("id")))


def entry_get(*, agent: Agent, ref: str) -> Entry:
    """The agent's entry by name or alias; NotFound otherwise."""
    qs = _with_aliases(Entry.objects.filter(agent=agent))
    entry = qs.filter(name=ref).first()
    if entry is None:
        entry = qs.filter(aliases__name=ref).first()
    if entry is None:
        raise NotFound(f"no entry named '{ref}'", loc=["path", "name"])
    return entry


def entries_page(
    *, agent: Agent, kind: str | None, after_id: int | None, limit: int
) -> Page[Entry]:
    """Entries in id order (the monotonic insert order), `limit` per page."""
    qs = _with_aliases(Entry.objects.filter(agent=agent))
    if kind:
        qs = qs.filter(kind=kind)
    return id_paginate(qs, after_id=after_id, limit=limit)


def documents(*, agent: Agent, names: Iterable[str]) -> dict[str, Entry]:
    """The named Note/Archive entries that exist, by name (one query)."""
    return {e.name: e for e in Entry.objects.filter(agent=agent, name__in=list(names))}


def entries_all(*, agent: Agent) -> list[Entry]:
    """Every entry of the agent with its aliases, in id order (export)."""
    return list(_with_aliases(Entry.objects.filter(agent=agent)).order_by("id"))


def entries_search(*, agent: Agent, query: str, limit: int) -> list[EntryHit]:
    """BM25 over name + content (seed 003), best first with scores; the caller picks a cutoff."""
    hits = keyword_search("entries", agent_id=agent.pk, query=query, limit=limit)
    by_id = _with_aliases(Entry.objects.filter(agent=agent)).in_bulk([h.object_id for h in hits])
    return [EntryHit(entry=by_id[h.object_id], score=h.score) for h in hits if h.object_id in by_id]


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
