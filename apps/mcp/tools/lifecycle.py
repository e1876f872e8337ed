"""Lifecycle: consolidate and reset_session."""

from apps.api import sessions as sessions_api
from apps.lifecycle.schemas import ConsolidateQuery
from apps.mcp.tools.base import About, on_path, write
from apps.mcp.tools.sessions import SESSION_ID, on_session


class ConsolidateIn(ConsolidateQuery):
    session_id: str = SESSION_ID


CONSOLIDATE = About(
    title="Consolidate a session into long-term memory",
    description="""
        Fold a session's conversation into long-term memory now: a dated entry in your
        history log that sums it up (search_history and memory_search find it) and an
        updated MEMORY.md. This also happens by itself in the background; call it when a
        conversation reaches a natural end and should be remembered at once. Only messages
        not consolidated before are read, and `keep` leaves the newest ones for later. It
        may wait its turn behind your other consolidations, for a limited time. When the
        summarising model is unavailable, an excerpt of the last messages is kept instead.

        Returns `runs`: what each step did (`kind`, `status`, `reason`, `details`).
        """,
    # MEMORY.md is rewritten; a second call finds nothing left to consolidate.
    hints=write(destructive=True, idempotent=True),
    docs={
        "keep": "How many of the newest messages to leave for a later consolidation "
        "(default 0: consolidate them all).",
    },
)

RESET = About(
    title="Clear a session",
    description="""
        Start a session over: delete all of its messages. First the messages not
        consolidated yet are folded into long-term memory (your history log and MEMORY.md;
        this waits a limited time), and the deleted messages are kept in an archive entry
        (all of them, or those the consolidation did not cover, as your settings say). The
        session's rolling summary stays. Use it to begin a conversation afresh under the
        same session; it does not make you forget what was learnt.

        Returns the `session`, `deleted_messages`, the consolidation's `runs` and `archive`:
        the name of the archive entry that keeps the deleted messages (null when none).
        """,
    # Once cleared, a second reset finds nothing to delete.
    hints=write(destructive=True, idempotent=True),
)

TOOLS = [
    on_path(
        "consolidate",
        sessions_api.consolidate,
        ConsolidateIn,
        CONSOLIDATE,
        path="session_id",
        query=ConsolidateQuery,
    ),
    on_session("reset_session", sessions_api.reset_session, RESET),
]
