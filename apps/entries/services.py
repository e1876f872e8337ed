"""The one write path for entries (seed 003): Add, Rename, Alias, Write, Remove.

Every write takes a per-agent lock (the agent row) so the cross-table rule "an alias never
equals any name or alias" holds under concurrency on both backends.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.core.errors import Conflict, InvalidInput, NotFound, PayloadTooLarge
from apps.entries import names
from apps.entries.models import Entry, EntryAlias, Kind
from apps.providers.tokens import count_tokens


@dataclass(frozen=True)
class Resolved:
    entry: Entry
    via_alias: str | None


def _check_name(name: object, *, loc: list[str | int]) -> str:
    return names.validate_name(name, loc=loc)


def _check_content(agent: Agent, content: object, *, loc: list[str | int]) -> str:
    if not isinstance(content, str):
        raise InvalidInput("content must be a string", loc=loc)
    if "\x00" in content:
        # PostgreSQL text cannot hold NUL, so neither backend accepts it.
        raise InvalidInput("content must not contain NUL characters", loc=loc)
    size = len(content.encode("utf-8"))
    limit = agent.config.max_content_bytes
    if size > limit:
        raise PayloadTooLarge(f"content is {size} bytes; the limit is {limit}", loc=loc)
    return content


def _resolve_locked(agent: Agent, ref: str) -> Entry:
    entry = Entry.objects.filter(agent=agent, name=ref).first()
    if entry is None:
        alias = EntryAlias.objects.filter(agent=agent, name=ref).select_related("entry").first()
        entry = alias.entry if alias else None
    if entry is None:
        raise NotFound(f"no entry named '{ref}'", loc=["path", "name"])
    return entry


def _name_taken(agent: Agent, name: str, *, loc: list[str | int]) -> None:
    if Entry.objects.filter(agent=agent, name=name).exists():
        raise Conflict(f"the name '{name}' is taken by an entry", loc=loc)
    if EntryAlias.objects.filter(agent=agent, name=name).exists():
        raise Conflict(f"the name '{name}' is taken by an alias", loc=loc)


def _path_free(agent: Agent, name: str, *, loc: list[str | int], exclude: int | None = None):
    """A name is also a file path on export: it may not be a folder of, or inside, another."""
    qs = Entry.objects.filter(agent=agent).filter(
        Q(name__in=names.parent_paths(name)) | Q(name__startswith=name + "/")
    )
    if exclude is not None:
        qs = qs.exclude(pk=exclude)
    clash = qs.values_list("name", flat=True).first()
    if clash is not None:
        raise Conflict(f"the name '{name}' clashes with the path of entry '{clash}'", loc=loc)


def _flag_memory(agent: Agent, entry: Entry) -> None:
    # Seed 004: MEMORY.md past max_memory_bytes is flagged; consolidation compresses it.
    entry.needs_compression = entry.name == names.MEMORY and (
        len(entry.content.encode("utf-8")) > agent.config.max_memory_bytes
    )


def entry_set_content(
    *, entry: Entry, agent: Agent, content: str, token_count: int | None = None
) -> None:
    """Set content with what derives from it (token_count, needs_compression); not saved.

    Every write of an entry's content goes through here. `token_count` is for callers that
    counted already (a batch); otherwise the content is counted.
    """
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
) -> Entry:
    """Add: create an entry; Conflict if the name is a name or alias already."""
    name = _check_name(name, loc=["body", "name"])
    content = _check_content(agent, content, loc=["body", "content"])
    if kind not in Kind.values:
        raise InvalidInput(f"unknown kind '{kind}'", loc=["body", "kind"])
    lock_agent(agent)
    _name_taken(agent, name, loc=["body", "name"])
    _path_free(agent, name, loc=["body", "name"])
    now = timezone.now()
    entry = Entry(agent=agent, name=name, kind=kind, created_at=created_at or now, updated_at=now)
    entry_set_content(entry=entry, agent=agent, content=content)
    entry.save()
    return entry


@transaction.atomic
def entry_rename(*, agent: Agent, ref: str, new_name: str) -> Entry:
    """Rename: change the canonical name; refused if the new name is any name or alias."""
    new_name = _check_name(new_name, loc=["body", "name"])
    lock_agent(agent)
    entry = _resolve_locked(agent, ref)
    if entry.kind == Kind.ARCHIVE:
        # Compact markers refer to archives by name; an alias is the way to add a name.
        raise Conflict("archive entries cannot be renamed; add an alias instead")
    if new_name == entry.name:
        return entry
    _name_taken(agent, new_name, loc=["body", "name"])
    _path_free(agent, new_name, loc=["body", "name"], exclude=entry.pk)
    entry.name = new_name
    entry.updated_at = timezone.now()
    _flag_memory(agent, entry)
    entry.save(update_fields=["name", "updated_at", "needs_compression"])
    return entry


@transaction.atomic
def entry_alias(*, agent: Agent, ref: str, alias: str) -> EntryAlias:
    """Alias: bind another name to an entry; it may not equal any name or alias."""
    alias = _check_name(alias, loc=["body", "alias"])
    lock_agent(agent)
    entry = _resolve_locked(agent, ref)
    _name_taken(agent, alias, loc=["body", "alias"])
    return EntryAlias.objects.create(agent=agent, entry=entry, name=alias)


@transaction.atomic
def entry_write(*, agent: Agent, ref: str, content: str) -> Entry:
    """Write: replace a Note's content; archives are written only by compaction."""
    content = _check_content(agent, content, loc=["body", "content"])
    lock_agent(agent)
    entry = _resolve_locked(agent, ref)
    if entry.kind == Kind.ARCHIVE:
        raise Conflict("archive entries are not rewritten after creation")
    entry_set_content(entry=entry, agent=agent, content=content)
    entry.updated_at = timezone.now()
    entry.save(update_fields=["content", "token_count", "updated_at", "needs_compression"])
    return entry


@transaction.atomic
def entry_remove(*, agent: Agent, ref: str) -> None:
    """Remove: delete a Note and all its aliases; archives are kept."""
    lock_agent(agent)
    entry = _resolve_locked(agent, ref)
    if entry.kind == Kind.ARCHIVE:
        raise Conflict("archive entries cannot be removed")
    EntryAlias.objects.filter(entry=entry).delete()
    entry.delete()


@transaction.atomic
def entry_append(*, agent: Agent, name: str, text: str, header: str = "") -> Entry:
    """Append text to a Note, creating it (with `header` first) when missing.

    The daily log's write path: no size limit, because what is saved must not be lost.
    """
    name = _check_name(name, loc=["name"])
    lock_agent(agent)
    entry = Entry.objects.filter(agent=agent, name=name).first()
    now = timezone.now()
    if entry is None:
        _path_free(agent, name, loc=["name"])
        if EntryAlias.objects.filter(agent=agent, name=name).exists():
            raise Conflict(f"the name '{name}' is taken by an alias")
        entry = Entry(agent=agent, name=name, created_at=now)
        entry_set_content(entry=entry, agent=agent, content=header)
    if entry.kind == Kind.ARCHIVE:
        raise Conflict("archive entries are not rewritten after creation")
    entry_set_content(
        entry=entry,
        agent=agent,
        content=entry.content + text,
        token_count=_appended_tokens(entry.content, entry.token_count, text),
    )
    entry.updated_at = now
    entry.save()
    return entry
