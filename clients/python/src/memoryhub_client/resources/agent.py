"""/agent and /team (the calling agent and its settings), /users (its end users) and
/workspace (the whole workspace as an archive, out and in)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memoryhub_client import _call as http
from memoryhub_client._call import Bound, Call, M, given
from memoryhub_client.models import (
    Agent,
    AgentUserPage,
    ForUser,
    ImportQuery,
    ImportResult,
    SettingsPatch,
    TeamDocument,
    UserErase,
    UserEraseQuery,
    UserQuery,
)


class AgentResource(Bound[M]):
    """hub.agent: the agent this key belongs to, its settings, its team's AGENTS.md."""

    @http.get("/agent")
    def get(self) -> Call[Agent]:
        """The agent with its effective settings and its team's ceilings."""
        return Call(Agent)

    @http.patch("/agent/settings")
    def update_settings(self, settings: Mapping[str, Any]) -> Call[Agent]:
        """Override settings (a None value restores the default)."""
        return Call(Agent, body=SettingsPatch(settings=dict(settings)))

    @http.get("/team/AGENTS.md")
    def team_agents_md(self) -> Call[TeamDocument]:
        """The team's fleet-wide AGENTS.md ("" when it has none)."""
        return Call(TeamDocument)


class Users(Bound[M]):
    """hub.users: the agent's end users, and erasing one with everything of theirs."""

    @http.listing("/users")
    def list(self, *, limit: int | None = None) -> Call[AgentUserPage]:
        """Every end user in name order, with their number of sessions."""
        return Call(AgentUserPage, query=UserQuery(**given(limit=limit)))

    @http.delete("/users/{user:path}")
    def erase(self, user: str, *, vacuum: bool | None = None) -> Call[UserErase]:
        """Erase the user's sessions, messages, facts, entries, learnings, history and runs
        in one transaction, with the counts deleted and cleared; `vacuum` then makes the
        deleted bytes unreadable on disk."""
        return Call(UserErase, path={"user": user}, query=UserEraseQuery(**given(vacuum=vacuum)))


class Workspace(Bound[M]):
    """hub.workspace: export the workspace as a .tar.gz, import one."""

    @http.get("/workspace/export")
    def export(self, *, user: str | None = None) -> Call[bytes]:
        """The workspace (entries as files, HISTORY) as .tar.gz bytes: the agent's own memory;
        with `user`, that user's memory alone (a data-access request)."""
        return Call(bytes, query=ForUser(**given(user=user)))

    @http.post("/workspace/import")
    def import_(self, data: bytes, *, force: bool | None = None) -> Call[ImportResult]:
        """Load an exported archive (Conflict on existing names unless force)."""
        return Call(ImportResult, body=bytes(data), query=ImportQuery(**given(force=force)))
