"""The workspace archive out (the agent's, or one user's for a data-access request) and in."""

from dataclasses import dataclass

from django.db import transaction

from apps.agents.models import Agent
from apps.agents.users import AGENT, Audience
from apps.entries import names
from apps.entries.archive import Readable
from apps.entries.selectors import workspace_export, workspace_read
from apps.entries.services import ImportResult, workspace_write
from apps.learnings.services import learnings_files, learnings_import
from apps.lifecycle.services import history_files, history_import
from apps.people.selectors import user_data


def workspace_archive(*, agent: Agent, user: str | None = None) -> bytes:
    """The workspace .tar.gz: the agent's own entries, with the generated files: seed 004's
    history, seed 001's learnings and the team's AGENTS.md (read-only: an import skips it).
    With `user`: that user's memory alone (entries, history, learnings, and their sessions
    and facts in USER-DATA.json), for a data-access request."""
    owner = AGENT if user is None else user
    generated = {
        **history_files(agent=agent, audience=Audience(owner), owner=owner),
        **learnings_files(agent=agent, owner=owner),
    }
    if user is not None:
        generated[names.USER_DATA] = user_data(agent=agent, user=user)
    elif agent.team.agents_md.strip():
        generated[names.TEAM_AGENTS] = agent.team.agents_md
    return workspace_export(agent=agent, generated=generated, owner=owner)


@dataclass(frozen=True)
class WorkspaceLoaded:
    entries: ImportResult
    history_entries: int
    learnings: int


def workspace_load(
    *, agent: Agent, data: Readable | bytes, force: bool, declared_size: int | None = None
) -> WorkspaceLoaded:
    """Import a workspace .tar.gz (bytes or a stream of `declared_size` bytes): entries,
    history entries from the history files and learnings from the learnings files; all or
    nothing. The archive is read and checked, within limits, before the transaction."""
    archive = workspace_read(agent=agent, source=data, declared_size=declared_size)
    with transaction.atomic():
        result = workspace_write(agent=agent, archive=archive, force=force)
        history = {n: t for n, t in result.generated.items() if names.is_history(n)}
        learned = {n: t for n, t in result.generated.items() if n in names.LEARNINGS}
        added_history = history_import(agent=agent, files=history)
        added_learnings = learnings_import(agent=agent, files=learned)
    return WorkspaceLoaded(entries=result, history_entries=added_history, learnings=added_learnings)
