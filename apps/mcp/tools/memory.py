"""Memory: seed 001's memory_save, memory_recall and memory_search; seed 002's get_context."""

from apps.mcp.tools.base import Tool
from apps.memory import api as memory_api
from apps.memory.schemas import ContextIn, RecallIn, SaveIn, SearchIn

TOOLS = [
    Tool(
        name="memory_save",
        endpoint=memory_api.memory_save,
        params=SaveIn,
        call=lambda request, args: memory_api.memory_save(request, payload=args),
    ),
    Tool(
        name="memory_recall",
        endpoint=memory_api.memory_recall,
        params=RecallIn,
        call=lambda request, args: memory_api.memory_recall(request, payload=args),
    ),
    Tool(
        name="memory_search",
        endpoint=memory_api.memory_search,
        params=SearchIn,
        call=lambda request, args: memory_api.memory_search(request, payload=args),
    ),
    Tool(
        name="get_context",
        endpoint=memory_api.context,
        params=ContextIn,
        call=lambda request, args: memory_api.context(request, payload=args),
    ),
]
