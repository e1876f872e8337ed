"""Lifecycle: consolidate (seed 004) and reset_session."""

from apps.lifecycle import api as lifecycle_api
from apps.lifecycle.schemas import ConsolidateQuery
from apps.mcp.tools.base import Tool, part
from apps.mcp.tools.sessions import SESSION_ID, SessionRef


class ConsolidateIn(ConsolidateQuery):
    session_id: str = SESSION_ID


TOOLS = [
    Tool(
        name="consolidate",
        endpoint=lifecycle_api.consolidate,
        params=ConsolidateIn,
        call=lambda request, args: lifecycle_api.consolidate(
            request, session_id=args.session_id, query=part(args, ConsolidateQuery)
        ),
    ),
    Tool(
        name="reset_session",
        endpoint=lifecycle_api.reset_session,
        params=SessionRef,
        call=lambda request, args: lifecycle_api.reset_session(request, session_id=args.session_id),
    ),
]
