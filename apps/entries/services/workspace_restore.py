"""Workspace import: a read archive (selectors/workspace_unpacking.py) written as the agent's own
entries, all or nothing; existing entries are overwritten only with `force`.
"""

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.core.errors import Conflict
from apps.entries import names
from apps.entries.archive import Readable
from apps.entries.models import Action, Entry, EntryAlias
from apps.entries.selectors.workspace_unpacking import (
    WorkspaceArchive,
    WorkspaceItem,
    workspace_read,
)
from apps.entries.services.entry_writes import (
    entry_change_record,
    entry_index_set,
    entry_set_content,
)
from apps.providers.token_counts import count_tokens_batch


@dataclass(frozen=True)
class ImportResult:
    created: int
    overwritten: int
    names: list[str]
    generated: dict[str, str]  # generated files found in the archive, for their owner


def _check_names(
    items: list[WorkspaceItem],
    existing: dict[str, Entry],
    alias_owner: dict[str, str],
    force: bool,
) -> None:
    """Conflict for a taken name (unless `force`), and even with force for a name owned by
    an entry outside the archive or a path that would nest in one."""
    incoming = {i.name for i in items}
    taken = sorted(
        label
        for item in items
        for label in (item.name, *item.aliases)
        if label in existing or label in alias_owner
    )
    if taken and not force:
        raise Conflict(
            f"{len(taken)} name(s) already exist, e.g. '{taken[0]}'; import with force to overwrite"
        )
    for item in items:
        for label in (item.name, *item.aliases):
            owner = label if label in existing else alias_owner.get(label)
            if owner is not None and owner not in incoming:
                raise Conflict(f"'{label}' belongs to entry '{owner}', which is not imported")
        for parent in names.parent_paths(item.name):
            if parent in existing and parent not in incoming:
                raise Conflict(f"'{item.name}' would be inside entry '{parent}'")
        clash = next((n for n in existing if n.startswith(item.name + "/")), None)
        if clash is not None and clash not in incoming:
            raise Conflict(f"'{item.name}' is a folder of entry '{clash}'")


def _write_items(
    agent: Agent, items: list[WorkspaceItem], existing: dict[str, Entry], changed_by: str
) -> int:
    """Create or overwrite each entry with its aliases; returns how many were overwritten."""
    now = timezone.now()
    overwritten = 0
    EntryAlias.objects.filter(
        agent=agent, user=AGENT, entry__name__in=[i.name for i in items]
    ).delete()
    counts = count_tokens_batch([item.content for item in items])
    for item, tokens in zip(items, counts, strict=True):
        entry = existing.get(item.name)
        previous = ""
        if entry is None:
            entry = Entry(agent=agent, name=item.name)
        else:
            overwritten += 1
            previous = entry.content
        entry_set_content(entry=entry, agent=agent, content=item.content, token_count=tokens)
        entry.kind = item.kind
        entry_index_set(entry=entry, index=item.index)
        entry.created_at = item.created_at or now
        entry.updated_at = now
        entry.save()
        EntryAlias.objects.bulk_create(
            [EntryAlias(agent=agent, entry=entry, name=a) for a in item.aliases]
        )
        entry_change_record(entry, Action.IMPORT, changed_by, previous=previous)
    return overwritten


@transaction.atomic
def workspace_write(
    *, agent: Agent, archive: WorkspaceArchive, force: bool = False, changed_by: str = "agent"
) -> ImportResult:
    """Write a read archive's entries as the agent's own; Conflict if any name exists and
    `force` is not set. Generated files come back in the result, for the app that renders
    them."""
    items = archive.items
    lock_agent(agent)
    existing = {e.name: e for e in Entry.objects.filter(agent=agent, user=AGENT)}
    aliases = EntryAlias.objects.filter(agent=agent, user=AGENT)
    alias_owner = dict(aliases.values_list("name", "entry__name"))
    _check_names(items, existing, alias_owner, force)
    overwritten = _write_items(agent, items, existing, changed_by)
    return ImportResult(
        created=len(items) - overwritten,
        overwritten=overwritten,
        names=[i.name for i in items],
        generated=archive.generated,
    )


def workspace_import(
    *, agent: Agent, data: Readable | bytes, force: bool = False, changed_by: str = "agent"
) -> ImportResult:
    """workspace_read, then workspace_write: all or nothing."""
    archive = workspace_read(agent=agent, source=data)
    return workspace_write(agent=agent, archive=archive, force=force, changed_by=changed_by)
