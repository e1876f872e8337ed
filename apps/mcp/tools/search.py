"""Search: search_chat_history (semantic, keyword, hybrid, contains) and search_history
(seed 004's HISTORY grep)."""

from apps.conversations import api as conversations_api
from apps.conversations.schemas import ChatSearchIn
from apps.lifecycle import api as lifecycle_api
from apps.mcp.tools.base import Tool

TOOLS = [
    Tool(
        name="search_chat_history",
        endpoint=conversations_api.search_chat_history,
        params=ChatSearchIn,
        call=lambda request, args: conversations_api.search_chat_history(request, payload=args),
    ),
    Tool(
        name="search_history",
        endpoint=lifecycle_api.history,
        params=lifecycle_api.HistoryQuery,
        call=lambda request, args: lifecycle_api.history(request, query=args),
    ),
]
