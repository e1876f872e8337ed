"""Every MCP tool by name, in the order tools/list answers them."""

from apps.mcp.tools import entries, errors, lifecycle, memory, search, sessions
from apps.mcp.tools.base import Tool, run

TOOLS: dict[str, Tool] = {
    tool.name: tool
    for module in (sessions, search, memory, entries, errors, lifecycle)
    for tool in module.TOOLS
}

__all__ = ["TOOLS", "Tool", "run"]
