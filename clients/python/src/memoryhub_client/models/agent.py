"""The agent, its settings, its team's AGENTS.md and its end users."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from memoryhub_client.models.common import Model, Page, component


@component("AgentOut")
class Agent(Model):
    """The server's `AgentOut`."""

    slug: str
    name: str
    team: str
    created_at: datetime
    settings: dict[str, Any]
    overrides: dict[str, Any]
    ceilings: dict[str, int | float]


@component("SettingsPatch")
class SettingsPatch(Model):
    """The server's `SettingsPatch`."""

    settings: dict[str, Any]


@component("TeamDocumentOut")
class TeamDocument(Model):
    """The server's `TeamDocumentOut`."""

    team: str
    name: str
    content: str


@component("UserQuery")
class UserQuery(Model):
    """The server's `UserQuery`."""

    cursor: str | None = None
    limit: int = 50


@component("AgentUserOut")
class AgentUser(Model):
    """The server's `AgentUserOut`."""

    user: str
    sessions: int


@component("AgentUserPage")
class AgentUserPage(Page[AgentUser]):
    """A page of `AgentUser`: items and next_cursor."""


@component("UserErasedOut")
class UserErased(Model):
    """The server's `UserErasedOut`."""

    sessions: int
    messages: int
    summaries: int
    facts: int
    fact_versions: int
    entries: int
    entry_aliases: int
    entry_changes: int
    learnings: int
    history: int
    runs: int
    error_details: int
    provenance_cleared: int
    audit_events_cleared: int


@component("UserEraseQuery")
class UserEraseQuery(Model):
    """The server's `UserEraseQuery`."""

    vacuum: bool = False


@component("UserEraseOut")
class UserErase(Model):
    """The server's `UserEraseOut`."""

    user: str
    deleted: UserErased
    vacuumed: bool
