"""The one write path for entries (seed 003): Add, Rename, Alias, Write, Remove.

Every write takes a per-agent lock (the agent row) so the cross-table rule "an alias never
equals any name or alias" holds under concurrency on both backends, and records who made it
(`changed_by`) as an EntryChange. Archives are written by compaction; seed 003 permits the
other operations on them, so they are allowed and recorded like any other.

Names are per owner (issue 26): the agent ("") and each of its users has its own namespace,
so a user's MEMORY.md sits beside the agent's. A write names its owner; it never touches
another owner's entry.
"""

from dataclasses import dataclass
from datetime import datetime

from celery import signature
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.core import tasknames
from apps.core.errors import Conflict, InvalidInput, NotFound, PayloadTooLarge
from apps.core.unavailable import send_or_defer
from apps.entries import names
from apps.entries.index_paths import check_fields
from apps.entries.models import Action, Entry, EntryAlias, EntryChange, Kind
from apps.providers.token_counts import count_tokens
from apps.search.embedding_queue import schedule_embedding

# What a write of an entry's content or index sets anew: its vector, made again after commit.
EMBEDDING_COLUMNS = ["embedding", "embedding_model", "embedding_error", "embedding_attempts"]

# An entry's `index`: searched (True), left out (False), or searched and embedded by the
# texts at these JSON paths of its value (LangGraph's index fields).
Index = bool | list[str]


@dataclass(frozen=True)
class Resolved:
    entry: Entry
    via_alias: str | None


def _check_name(name: object, *, loc: list[str | int]) -> str:
    return names.validate_name(name, loc=loc)


def _check_text(content: object, *, loc: list[str | int]) -> str:
    if not isinstance(content, str):
        raise InvalidInput("content must be a string", loc=loc)
    if "\x00" in content:
        # PostgreSQL text cannot hold NUL, so neither backend accepts it.
        raise InvalidInput("content must not contain NUL characters", loc=loc)
    return content


def _check_index(index: object, *, loc: list[str | int]) -> Index | None:
    """A valid `index` (None: unchanged); bad JSON paths are InvalidInput."""
    if index is None or isinstance(index, bool):
        return index
    if not isinstance(index, list) or not all(isinstance(f, str) for f in index):
        raise InvalidInput("index must be true, false or a list of JSON paths", loc=loc)
    try:
        return check_fields(index)
    except ValueError as exc:
        raise InvalidInput(str(exc), loc=loc) from None


def _embedding_due(entry: Entry) -> None:
    """The embedded text changed: the vector goes, and an indexed entry is embedded again
    after commit (the embedding sweep); not saved."""
    entry.embedding = None
    entry.embedding_model = entry.embedding_error = ""
    entry.embedding_attempts = 0
    if not entry.unindexed:
        schedule_embedding(corpus="entries", agent_id=entry.agent_id)


def entry_index_set(*, entry: Entry, index: Index) -> None:
    """Set whether and by what the entry is searched (`Index`); not saved. A change makes
    its vector again (or drops it, for an entry left out of search)."""
    unindexed = None if index is not False else True
    fields = index if isinstance(index, list) else None
    if (entry.unindexed, entry.index_fields) != (unindexed, fields):
        entry.unindexed, entry.index_fields = unindexed, fields
        _embedding_due(entry)


def _check_content(agent: Agent, content: object, *, loc: list[str | int]) -> str:
    content = _check_text(content, loc=loc)
    size = len(content.encode("utf-8"))
    limit = agent.config.max_content_bytes
    if size > limit:
        raise PayloadTooLarge(f"content is {size} bytes; the limit is {limit}", loc=loc)
    return content


def _resolve_locked(agent: Agent, ref: str, owner: str) -> Entry:
    entry = Entry.objects.filter(agent=agent, user=owner, name=ref).first()
    if entry is None:
        aliases = EntryAlias.objects.filter(agent=agent, user=owner, name=ref)
        alias = aliases.select_related("entry").first()
        entry = alias.entry if alias else None
    if entry is None:
        raise NotFound(f"no entry named '{ref}'", loc=["path", "name"])
    return entry


def _name_taken(agent: Agent, owner: str, name: str, *, loc: list[str | int]) -> None:
    if Entry.objects.filter(agent=agent, user=owner, name=name).exists():
        raise Conflict(f"the name '{name}' is taken by an entry", loc=loc)
    if EntryAlias.objects.filter(agent=agent, user=owner, name=name).exists():
        raise Conflict(f"the name '{name}' is taken by an alias", loc=loc)


def _path_free(
    agent: Agent, owner: str, name: str, *, loc: list[str | int], exclude: int | None = None
) -> None:
    """A name is also a file path on export: it may not be a folder of, or inside, another."""
    qs = Entry.objects.filter(agent=agent, user=owner).filter(
        Q(name__in=names.parent_paths(name)) | Q(name__startswith=name + "/")
    )
    if exclude is not None:
        qs = qs.exclude(pk=exclude)
    clash = qs.values_list("name", flat=True).first()
    if clash is not None:
        raise Conflict(f"the name '{name}' clashes with the path of entry '{clash}'", loc=loc)


def entry_change_record(
    entry: Entry, action: str, changed_by: str, *, previous: str = "", detail: str = ""
) -> EntryChange:
    """Log a change of `entry` (called inside the write's transaction)."""
    return EntryChange.objects.create(
        agent_id=entry.agent_id,
        entry=entry if entry.pk else None,
        entry_name=entry.name,
        user=entry.user,
        kind=entry.kind,
        action=action,
        previous_content=previous,
        detail=detail[:500],
        changed_by=changed_by[:150],
    )


def _flag_memory(agent: Agent, entry: Entry) -> None:
    # Seed 004: MEMORY.md past max_memory_bytes is flagged, and its compression queued. A
    # user's MEMORY.md is kept under the limit by its writers (consolidation, flush) only.
    entry.needs_compression = (
        entry.name == names.MEMORY
        and entry.user == AGENT
        and (len(entry.content.encode("utf-8")) > agent.config.max_memory_bytes)
    )
    if entry.needs_compression:
        _announce_compression(agent.pk)


def _announce_compression(agent_id: int) -> None:
    """After the write commits, queue the agent's MEMORY.md compression, once until the task
    starts (debounced like the lifecycle's triggers). Called inside the write's transaction."""

    # A domain app announces, the lifecycle consumes: entries sits below apps.lifecycle and
    # may not import it (import-linter), and there are no signals, so the task is sent by
    # its registered name. A broker that is down fails no write: lifecycle.compress_due
    # picks the entry up later.
    def send() -> None:
        key = tasknames.compress_debounce_key(agent_id)
        if not cache.add(key, 1, timeout=settings.MEMORYHUB_LIFECYCLE_DEBOUNCE_SECONDS):
            return
        task = signature(tasknames.COMPRESS_MEMORY, args=(agent_id,))
        if not send_or_defer(task.delay, what=f"MEMORY.md compression of agent {agent_id}"):
            cache.delete(key)  # the next write tries again

    transaction.on_commit(send)


def entry_set_content(
    *, entry: Entry, agent: Agent, content: str, token_count: int | None = None
) -> None:
    """Set content with what derives from it (token_count, needs_compression); not saved.

    Every write of an entry's content goes through here. `token_count` is for callers that
    counted already (a batch); otherwise the content is counted. New text is embedded anew.
    """
    if entry.pk is None or entry.content != content:
        _embedding_due(entry)
    entry.content = content
    entry.token_count = count_tokens(content) if token_count is None else token_count
    _flag_memory(agent, entry)


def _appended_tokens(old: str, old_count: int | None, text: str) -> int:
    """count_tokens(old + text) without re-tokenising `old` when the join is at whitespace."""
    # WordPiece splits at whitespace first and normalises per character, so counts add up
    # across a whitespace boundary; a daily log grows by whole lines, so this is the rule.
    boundary = not old or not text or old[-1].isspace() or text[0].isspace()
    if boundary and old_count is not None:
        return old_count + count_tokens(text)
    return count_tokens(old + text)


@transaction.atomic
def entry_add(
    *,
    agent: Agent,
    name: str,
    content: str,
    kind: str = Kind.NOTE,
    created_at: datetime | None = None,
    changed_by: str = "agent",
    owner: str = AGENT,
    index: Index = True,
) -> Entry:
    """Add: create an entry of `owner`; Conflict if the name is one of theirs already.
    With index=False it is left out of every search; with a list of JSON paths it is
    embedded by the texts at those paths of its JSON value."""
    name = _check_name(name, loc=["body", "name"])
    checked = _check_index(index, loc=["body", "index"])
    content = _check_content(agent, content, loc=["body", "content"])
    if kind not in Kind.values:
        raise InvalidInput(f"unknown kind '{kind}'", loc=["body", "kind"])
    index = True if checked is None else checked
    return _insert(agent, owner, name, content, kind, created_at, changed_by, index=index)


def _insert(
    agent: Agent,
    owner: str,
    name: str,
    content: str,
    kind: str,
    created_at: datetime | None,
    changed_by: str,
    detail: str = "",
    *,
    index: Index = True,
) -> Entry:
    lock_agent(agent)
    _name_taken(agent, owner, name, loc=["body", "name"])
    _path_free(agent, owner, name, loc=["body", "name"])
    now = timezone.now()
    at = created_at or now
    entry = Entry(agent=agent, user=owner, name=name, kind=kind, created_at=at, updated_at=now)
    entry_set_content(entry=entry, agent=agent, content=content)
    entry_index_set(entry=entry, index=index)
    entry.save()
    entry_change_record(entry, Action.ADD, changed_by, detail=detail)
    return entry


@transaction.atomic
def entry_archive_add(
    *, agent: Agent, name: str, content: str, changed_by: str, detail: str = "", owner: str = AGENT
) -> Entry:
    """Add an Archive entry (seed 003) for compaction or a reset. No size limit: an archive
    may hold a whole conversation, and what it keeps must not be refused."""
    name = _check_name(name, loc=["name"])
    content = _check_text(content, loc=["content"])
    return _insert(agent, owner, name, content, Kind.ARCHIVE, None, changed_by, detail)


def archive_name_free(*, agent: Agent, prefix: str, owner: str = AGENT) -> str:
    """The first `<prefix>/<n>` (n = 1, 2, ...) that is neither a name nor an alias of
    `owner`'s."""
    under = {"agent": agent, "user": owner, "name__startswith": prefix + "/"}
    taken = set(Entry.objects.filter(**under).values_list("name", flat=True)) | set(
        EntryAlias.objects.filter(**under).values_list("name", flat=True)
    )
    n = 1
    while f"{prefix}/{n}" in taken:
        n += 1
    return f"{prefix}/{n}"


@transaction.atomic
def entry_rename(
    *, agent: Agent, ref: str, new_name: str, changed_by: str = "agent", owner: str = AGENT
) -> Entry:
    """Rename: change the canonical name; refused if the new name is any name or alias.
    An archive keeps its old name as an alias, so compact markers still resolve."""
    new_name = _check_name(new_name, loc=["body", "name"])
    lock_agent(agent)
    entry = _resolve_locked(agent, ref, owner)
    if new_name == entry.name:
        return entry
    _name_taken(agent, owner, new_name, loc=["body", "name"])
    _path_free(agent, owner, new_name, loc=["body", "name"], exclude=entry.pk)
    old_name = entry.name
    entry.name = new_name
    entry.updated_at = timezone.now()
    _flag_memory(agent, entry)
    entry.save(update_fields=["name", "updated_at", "needs_compression"])
    if entry.kind == Kind.ARCHIVE:
        EntryAlias.objects.create(agent=agent, user=owner, entry=entry, name=old_name)
    entry_change_record(entry, Action.RENAME, changed_by, detail=f"renamed from {old_name}")
    return entry


@transaction.atomic
def entry_alias(
    *, agent: Agent, ref: str, alias: str, changed_by: str = "agent", owner: str = AGENT
) -> EntryAlias:
    """Alias: bind another name to an entry; it may not equal any name or alias."""
    alias = _check_name(alias, loc=["body", "alias"])
    lock_agent(agent)
    entry = _resolve_locked(agent, ref, owner)
    _name_taken(agent, owner, alias, loc=["body", "alias"])
    created = EntryAlias.objects.create(agent=agent, user=owner, entry=entry, name=alias)
    entry_change_record(entry, Action.ALIAS, changed_by, detail=f"alias {alias}")
    return created


@transaction.atomic
def entry_write(
    *,
    agent: Agent,
    ref: str,
    content: str,
    changed_by: str = "agent",
    reason: str = "",
    owner: str = AGENT,
    index: Index | None = None,
    create: bool = False,
) -> Entry:
    """Write: replace the content of `owner`'s entry, keeping the new content as a version.
    `index` True, False or JSON paths as entry_add; None keeps it. With `create`, a missing
    entry is added as a note, under the same lock (an upsert)."""
    content = _check_content(agent, content, loc=["body", "content"])
    index = _check_index(index, loc=["body", "index"])
    lock_agent(agent)
    try:
        entry = _resolve_locked(agent, ref, owner)
    except NotFound:
        if not create:
            raise
        name = _check_name(ref, loc=["path", "name"])
        added = True if index is None else index
        return _insert(agent, owner, name, content, Kind.NOTE, None, changed_by, index=added)
    if index is not None:
        entry_index_set(entry=entry, index=index)
    _rewrite(agent, entry, content, changed_by, reason)
    return entry


def _rewrite(agent: Agent, entry: Entry, content: str, changed_by: str, reason: str) -> None:
    previous = entry.content
    entry_set_content(entry=entry, agent=agent, content=content)
    entry.updated_at = timezone.now()
    entry.save(
        update_fields=[
            "content",
            "token_count",
            "updated_at",
            "needs_compression",
            "unindexed",
            "index_fields",
            *EMBEDDING_COLUMNS,
        ]
    )
    entry_change_record(entry, Action.WRITE, changed_by, previous=previous, detail=reason)


@transaction.atomic
def entry_put(
    *, agent: Agent, name: str, content: str, changed_by: str, reason: str = "", owner: str = AGENT
) -> Entry:
    """Create or replace `owner`'s Note by name, atomically, with a version (MEMORY.md's
    writer). No size limit: the content is what consolidation made of memory, and is kept."""
    name = _check_name(name, loc=["name"])
    content = _check_text(content, loc=["content"])
    lock_agent(agent)
    entry = Entry.objects.filter(agent=agent, user=owner, name=name).first()
    if entry is None:
        return _insert(agent, owner, name, content, Kind.NOTE, None, changed_by, reason)
    if entry.content != content:
        _rewrite(agent, entry, content, changed_by, reason)
    return entry


@transaction.atomic
def entry_remove(*, agent: Agent, ref: str, changed_by: str = "agent", owner: str = AGENT) -> None:
    """Remove: delete `owner`'s entry and all its aliases; its last content stays in the
    change log."""
    lock_agent(agent)
    entry = _resolve_locked(agent, ref, owner)
    aliases = list(EntryAlias.objects.filter(entry=entry).values_list("name", flat=True))
    detail = f"aliases: {', '.join(aliases)}" if aliases else ""
    entry_change_record(entry, Action.REMOVE, changed_by, previous=entry.content, detail=detail)
    EntryAlias.objects.filter(entry=entry).delete()
    entry.delete()


@transaction.atomic
def entry_append(
    *, agent: Agent, name: str, text: str, header: str = "", owner: str = AGENT
) -> Entry:
    """Append text to `owner`'s Note, creating it (with `header` first) when missing.

    The daily log's write path: no size limit, because what is saved must not be lost.
    """
    name = _check_name(name, loc=["name"])
    lock_agent(agent)
    entry = Entry.objects.filter(agent=agent, user=owner, name=name).first()
    now = timezone.now()
    if entry is None:
        _path_free(agent, owner, name, loc=["name"])
        if EntryAlias.objects.filter(agent=agent, user=owner, name=name).exists():
            raise Conflict(f"the name '{name}' is taken by an alias")
        entry = Entry(agent=agent, user=owner, name=name, created_at=now)
        entry_set_content(entry=entry, agent=agent, content=header)
    if entry.kind == Kind.ARCHIVE:
        raise Conflict(f"'{name}' is an archive; daily logs append to notes")
    entry_set_content(
        entry=entry,
        agent=agent,
        content=entry.content + text,
        token_count=_appended_tokens(entry.content, entry.token_count, text),
    )
    entry.updated_at = now
    entry.save()
    return entry


@transaction.atomic
def entry_archives_remove(
    *, agent: Agent, ids: list[int], changed_by: str, detail: str = ""
) -> list[str]:
    """Delete these archives of the agent with their aliases (a session removed with its
    data, seed 000). Unlike Remove, the change log keeps that they went, not their text."""
    lock_agent(agent)
    archives = list(Entry.objects.filter(agent=agent, kind=Kind.ARCHIVE, pk__in=ids).order_by("id"))
    for entry in archives:
        entry_change_record(entry, Action.REMOVE, changed_by, detail=detail)
    EntryAlias.objects.filter(entry__in=archives).delete()
    Entry.objects.filter(pk__in=[e.pk for e in archives]).delete()
    return [e.name for e in archives]
