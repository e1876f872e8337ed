"""Lifecycle: consolidate (seed 004) and reset_session."""

from apps.api import sessions as sessions_api
from apps.lifecycle.schemas import ConsolidateQuery
from apps.mcp.tools.base import Tool, part
from apps.mcp.tools.sessions import SESSION_ID, on_session


class ConsolidateIn(ConsolidateQuery):
    session_id: str = SESSION_ID


TOOLS = [
    Tool(
        name="consolidate",
        endpoint=sessions_api.consolidate,
        params=ConsolidateIn,
        call=lambda request, args: sessions_api.consolidate(
            request, session_id=args.session_id, query=part(args, ConsolidateQuery)
        ),
    ),
    on_session("reset_session", sessions_api.reset_session),
]
