"""The shapes of /users: the agent's end users, and an erasure's answer."""

from ninja import Schema
from pydantic import Field

from apps.core.pagination import PageQuery
from apps.core.schemas import Input


class UserErasedOut(Schema):
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
    error_details: int = Field(description="Their raw texts of failures (issue 39).")
    provenance_cleared: int = Field(
        description="Rows the agent keeps (and audit snapshots) that named one of the "
        "user's sessions and no longer do."
    )
    audit_events_cleared: int = Field(
        description="Audit events about the user's rows whose before/after were erased."
    )


class UserEraseQuery(Input):  # DELETE /users/{user}
    vacuum: bool = Field(
        False,
        description="After the erasure commits, make the deleted bytes unreadable on disk "
        "(SQLite: VACUUM and WAL checkpoint; PostgreSQL: VACUUM of the touched tables).",
    )


class UserEraseOut(Schema):
    user: str
    deleted: UserErasedOut = Field(description="The rows of the user deleted or cleared, by kind.")
    vacuumed: bool = Field(description="Whether the vacuum ran to its end.")


class UserQuery(PageQuery):  # GET /users
    pass


class AgentUserOut(Schema):
    user: str
    sessions: int = Field(description="The user's sessions (0: only memory rows are left).")


class AgentUserPage(Schema):
    items: list[AgentUserOut]
    next_cursor: str | None
