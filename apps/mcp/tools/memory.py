"""Memory: seed 001's memory_save, memory_recall and memory_search; seed 002's get_context."""

from apps.api import memory as memory_api
from apps.mcp.tools.base import whole
from apps.memory.schemas import ContextIn, RecallIn, SaveIn, SearchIn

TOOLS = [
    whole("memory_save", memory_api.memory_save, SaveIn),
    whole("memory_recall", memory_api.memory_recall, RecallIn),
    whole("memory_search", memory_api.memory_search, SearchIn),
    whole("get_context", memory_api.context, ContextIn),
]
