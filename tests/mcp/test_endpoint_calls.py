"""Each MCP tool calls API endpoint functions in-process (apps/mcp/tools/), so an endpoint's
signature is an interface between the two. CALLS records, for every tool, each endpoint it
calls with the signature the tool was written against: an endpoint whose signature changes
fails here until its tool has been checked and its entry updated. docs/mcp.md's tool table
names the same endpoints."""

import inspect
import re
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest

from apps.api.request import AuthedRequest
from apps.mcp.tools import TOOLS

# tool -> {endpoint (apps/api/<module>.<function>): its signature (signature_text)}
CALLS: dict[str, dict[str, str]] = {
    "create_session": {
        "sessions.create_session": "(payload: SessionIn) -> Status[Session]",
    },
    "append_messages": {
        "sessions.append_messages": "(session_id: str, payload: MessagesIn) -> Status[dict]",
    },
    "get_window": {
        "sessions.get_window": "(session_id: str) -> Window",
    },
    "search_chat_history": {
        "search.search_chat_history": "(payload: ChatSearchIn) -> ChatSearchOut",
    },
    "search_history": {
        "memory.history": "(query: Query[HistoryQuery]) -> Page[HistoryEntry]",
    },
    "memory_save": {
        "memory.memory_save": "(payload: SaveIn) -> dict",
    },
    "memory_recall": {
        "memory.memory_recall": "(payload: RecallIn) -> dict",
    },
    "memory_search": {
        "memory.memory_search": "(payload: SearchIn) -> dict",
    },
    "get_context": {
        "context.get_context": "(payload: ContextIn) -> ContextOut",
    },
    "entry_add": {
        "entries.add_entry": "(payload: EntryIn) -> Status[Entry]",
    },
    "entry_rename": {
        "entries.rename_entry": "(name: str (path), payload: EntryRename) -> Entry",
    },
    "entry_alias": {
        "entries.alias_entry": "(name: str (path), payload: EntryAliasIn) -> Status[dict]",
    },
    "entry_write": {
        "entries.write_entry": "(name: str (path), payload: EntryWrite) -> Entry",
    },
    "entry_remove": {
        "entries.remove_entry": "(name: str (path), query: Query[ScopedWrite]) -> Status[NoneType]",
    },
    "entry_search": {
        "entries.search_entries": "(query: Query[SearchQuery]) -> dict",
    },
    "remember_error": {
        "errors.remember_error": "(payload: ErrorIn) -> Status[ErrorRecord]",
    },
    "search_error_memory": {
        "errors.search_errors": "(payload: ErrorSearchIn) -> dict",
    },
    "read_error_memory": {
        "errors.get_error": "(error_id: int, query: Query[ReadFor]) -> ErrorRecord",
        "errors.list_errors": "(query: Query[ErrorQuery]) -> Page[ErrorRecord]",
    },
    "learning_add": {
        "learnings.add_learning": "(payload: LearningIn) -> Status[Learning]",
    },
    "consolidate": {
        "sessions.consolidate": "(session_id: str, query: Query[ConsolidateQuery]) -> dict",
    },
    "reset_session": {
        "sessions.reset_session": "(session_id: str) -> ResetOutcome",
    },
}

ROOT = Path(__file__).resolve().parents[2]
TOOLS_DIR = ROOT / "apps" / "mcp" / "tools"
DOCS = ROOT / "docs" / "mcp.md"


def signature_text(func: Callable[..., Any]) -> str:
    """`func`'s signature after its request (every endpoint's first parameter, the tool's
    ToolRequest), short: names without their modules, a query parameter as Query[Schema], a
    path converter in parentheses."""
    signature = inspect.signature(func)
    first, *rest = signature.parameters.values()
    assert (first.name, first.annotation) == ("request", AuthedRequest), func
    text = str(signature.replace(parameters=rest))
    text = re.sub(r"typing\.Annotated\[([\w.]+), Query\([^)]*\)\]", r"Query[\1]", text)
    text = re.sub(r"typing\.Annotated\[(\w+), Converter\(name='(\w+)'\)\]", r"\1 (\2)", text)
    return re.sub(r"\b(?:\w+\.)+(\w+)", r"\1", text)


def _endpoint(name: str) -> Callable[..., Any]:
    module, function = name.split(".")
    return getattr(import_module(f"apps.api.{module}"), function)


def _label(endpoint: Callable[..., Any]) -> str:
    return f"{endpoint.__module__.removeprefix('apps.api.')}.{endpoint.__name__}"


def _called_in_source() -> set[str]:
    """Every endpoint the tool modules call: `<module>_api.<function>` after
    `from apps.api import <module> as <module>_api`."""
    found = set()
    for path in TOOLS_DIR.glob("*.py"):
        text = path.read_text()
        imports = re.findall(r"from apps\.api import (\w+) as (\w+)", text)
        aliases = {alias: module for module, alias in imports}
        for alias, function in re.findall(r"\b(\w+_api)\.(\w+)", text):
            found.add(f"{aliases[alias]}.{function}")
    return found


def test_every_tool_names_the_endpoints_it_calls():
    assert sorted(CALLS) == sorted(TOOLS)
    for name, tool in TOOLS.items():
        assert {_label(e) for e in (tool.endpoint, *tool.answers)} <= set(CALLS[name]), name
    named = {endpoint for calls in CALLS.values() for endpoint in calls}
    assert named == _called_in_source()
    assert len(named) == 22


@pytest.mark.parametrize(
    ("tool", "endpoint"), [(t, e) for t, calls in CALLS.items() for e in calls]
)
def test_each_endpoint_has_the_signature_its_tool_was_written_for(tool, endpoint):
    assert signature_text(_endpoint(endpoint)) == CALLS[tool][endpoint]


def test_the_docs_tool_table_names_each_tools_endpoints():
    table = DOCS.read_text().split("| tool | inputs ")[1].split("\n\n")[0]
    rows = re.findall(r"^\| `(\w+)`(?: ★)? \|.*\| ([^|]*) \|$", table, flags=re.MULTILINE)
    documented = {
        tool: sorted(re.findall(r"`(\w+\.\w+)`", calls)) for tool, calls in rows if tool in CALLS
    }
    assert documented == {tool: sorted(calls) for tool, calls in CALLS.items()}
