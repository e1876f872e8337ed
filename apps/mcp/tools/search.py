"""Search: search_chat_history (semantic, keyword, hybrid, contains) and search_history
(seed 004's HISTORY grep)."""

from apps.api import runs as runs_api
from apps.api import search as search_api
from apps.conversations.schemas import ChatSearchIn
from apps.lifecycle.schemas import HistoryQuery
from apps.mcp.tools.base import whole

TOOLS = [
    whole("search_chat_history", search_api.search_chat_history, ChatSearchIn),
    whole("search_history", runs_api.history, HistoryQuery, into="query"),
]
