"""Every MCP tool by name, in the order tools/list answers them."""

from apps.mcp.tools import entries, errors, lifecycle, memory, search, sessions
from apps.mcp.tools.base import Tool, run

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for module in (sessions, search, memory, entries, errors, lifecycle)
    for tool in module.TOOLS
}

# The default tool set (docs/mcp.md, "Two tool sets"): the tools a model needs turn by turn,
# in their compact form. Every tool stays callable; `?tools=all` (or --all-tools) lists all.
DEFAULT_TOOLS: tuple[str, ...] = (
    "append_messages",
    "get_context",
    "memory_save",
    "memory_recall",
    "memory_search",
    "search_chat_history",
    "entry_add",
    "entry_write",
    "remember_error",
    "search_error_memory",
)

__all__ = ["DEFAULT_TOOLS", "TOOLS", "Tool", "run"]
