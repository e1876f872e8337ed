"""What a client and its model read about each tool, over streamable HTTP and stdio: MCP's
hints, stated for every tool in the table below (a tool missing from it fails); a title; an
outputSchema that a real answer of every tool validates against; and descriptions in plain
words, free of the project's internal jargon."""

import re
from collections import defaultdict
from typing import Any

import pytest
from django.apps import apps
from jsonschema import FormatChecker, ValidationError
from jsonschema.validators import validator_for

from apps.agents.config import FIELD_NAMES

pytestmark = pytest.mark.django_db(transaction=True)

# Every tool's hints, (readOnlyHint, destructiveHint, idempotentHint); openWorldHint is false
# for all: they touch this service's memory alone. docs/mcp.md, "Tool hints", says why.
HINTS = {
    "create_session": (False, False, False),  # without a key, each call starts a session
    "append_messages": (False, False, False),
    "get_window": (True, False, True),
    "search_chat_history": (True, False, True),
    "search_history": (True, False, True),
    "memory_save": (False, True, False),  # may replace a fact's value; logged each time
    "memory_recall": (True, False, True),
    "memory_search": (True, False, True),
    "get_context": (False, False, False),  # may save facts and compact the session
    "entry_add": (False, False, True),  # a repeat finds the name taken
    "entry_rename": (False, False, True),
    "entry_alias": (False, False, True),
    "entry_write": (False, True, True),  # replaces the text
    "entry_remove": (False, True, True),
    "entry_search": (True, False, True),
    "remember_error": (False, True, False),  # may overwrite an outcome; counts a sighting
    "search_error_memory": (True, False, True),
    "read_error_memory": (True, False, True),
    "learning_add": (False, False, False),
    "consolidate": (False, True, True),  # rewrites MEMORY.md
    "reset_session": (False, True, True),  # deletes the messages
}

# Nowhere a model reads: seed numbers, internal names, status codes, issues, code paths.
JARGON = [
    r"\bseeds?\s*\d",
    r"tri-?hybrid",
    r"\bRRF\b",
    r"\bissues?\s*#?\d",
    r"#\d+",
    r"\b(HTTP|status)\s*[1-5]\d\d\b",
    r"\(\s*[1-5]\d\d\s*\)",
    r"\b(201|204|400|401|403|404|409|413|422|429|500|503)\b",
    r"/api/v1",
    r"\b(GET|POST|PUT|PATCH|DELETE)\s+/",
    r"\bapps\.\w+",
    r"\b\w+\.py\b",
    r"\bdocs/",
]
# Nor, in what the tools themselves say, the machinery behind them, or a setting's name.
MACHINERY = [
    r"\bBM25\b",
    r"\bcosine\b",
    r"\bembed",
    r"\bMaxSim\b",
    r"\bgrep\b",
    r"\bhot window\b",
    r"\blegs?\b",
    *(rf"\b{re.escape(name)}\b" for name in sorted(FIELD_NAMES)),
]


def _found(patterns: list[str], text: str) -> list[str]:
    return [p for p in patterns if re.search(p, text, flags=re.IGNORECASE)]


def _descriptions(schema: Any) -> list[str]:
    """Every `description` in a JSON Schema, however deep."""
    if isinstance(schema, dict):
        own = [schema["description"]] if isinstance(schema.get("description"), str) else []
        return own + [d for v in schema.values() for d in _descriptions(v)]
    if isinstance(schema, list):
        return [d for v in schema for d in _descriptions(v)]
    return []


def _parameters(schema: dict) -> dict[str, dict]:
    """Every parameter by dotted name: the top level's, and those of nested objects (each
    object of `$defs` under its name)."""
    found = dict(schema["properties"])
    for def_name, definition in schema.get("$defs", {}).items():
        for name, prop in definition.get("properties", {}).items():
            found[f"{def_name}.{name}"] = prop
    return found


def test_every_tool_declares_true_hints_a_title_and_an_output_schema(mcp):
    tools = {tool.name: tool for tool in mcp.tools()}

    assert sorted(tools) == sorted(HINTS)
    for name, tool in tools.items():
        hints = tool.annotations
        declared = (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint)
        assert (declared, hints.open_world_hint) == (HINTS[name], False), name
        assert hints.title == tool.title, name
        schema = tool.output_schema
        assert schema["type"] == "object", name
        validator_for(schema).check_schema(schema)
    titles = [tool.title for tool in tools.values()]
    assert all(titles), titles
    assert len(set(titles)) == len(titles), titles


@pytest.mark.parametrize("every_tool", [True, False], ids=["full set", "default set"])
def test_descriptions_speak_plainly_to_the_model(connect, key, every_tool):
    mcp = connect(key, every_tool=every_tool)
    tools = mcp.tools()
    said: list[tuple[str, str]] = [("instructions", mcp.instructions() or "")]
    said += [(t.name, t.description) for t in mcp.templates()]

    for tool in tools:
        assert tool.description, tool.name
        undescribed = [
            n for n, p in _parameters(tool.input_schema).items() if not p.get("description")
        ]
        assert undescribed == [], tool.name
        said += [(tool.name, tool.description)]
        said += [(tool.name, text) for text in _descriptions(tool.input_schema)]
        # The answer's fields are the API's, described for its developers: no jargon, though.
        for text in _descriptions(tool.output_schema):
            assert _found(JARGON, text) == [], (tool.name, text)

    assert said[0][1].startswith("memoryhub is your long-term memory.")
    for where, text in said:
        assert _found(JARGON + MACHINERY, text) == [], (where, text)


def test_the_jargon_patterns_catch_what_the_descriptions_used_to_say():
    for text in [
        "Seed 004's grep over HISTORY: case-insensitive substring, newest first.",
        "get_context: system part, tri-hybrid messages of the session",
        "The result is {} (the API answers 204 with no body).",
        "A `k` over the team's recall_k ceiling is 422.",
        "Create a session; with a `key` the agent already uses, that session is returned (200).",
        "With `error_id`: one record (GET /errors/{id}; reading it is not a hit).",
        "BM25 over name and content (aliases add no tokens); every hit has its score.",
        "a flush at flush_ratio",
    ]:
        assert _found(JARGON + MACHINERY, text) != [], text


def _counts() -> dict[str, int]:
    """Rows in each of memoryhub's tables."""
    return {
        m._meta.label: m._base_manager.count()
        for m in apps.get_models()
        if m.__module__.startswith("apps.")
    }


def _every_tool(mcp, call) -> None:
    """Call every tool successfully at least once, in an order where each finds something."""
    call("create_session", {"key": "trip", "title": "Trip"})
    call(
        "remember_error",
        {
            "tool_name": "book_flight",
            "error": "seat map unavailable",
            "strategy": "retry after a minute",
            "outcome": "resolved",
            "resolution": "retry after a minute",
        },
    )
    call(
        "append_messages",
        {
            "session_id": "trip",
            "messages": [
                {"role": "user", "content": "I am planning a trip to Lisbon in May."},
                {"role": "assistant", "content": "Lisbon in May is lovely. Booking now."},
                {
                    "role": "tool",
                    "tool_name": "book_flight",
                    "content": "seat map unavailable",
                    "is_error": True,
                },
            ],
        },
    )
    call("get_window", {"session_id": "trip"})
    call("search_chat_history", {"query": "Lisbon trip", "mode": "hybrid"})
    call("memory_save", {"content": "The user travels to Lisbon in May.", "key": "trip"})
    call("memory_recall", {"query": "Where does the user travel?"})
    call("memory_search", {"query": "Lisbon"})
    call("get_context", {"session_id": "trip", "query": "Lisbon"})
    call("entry_add", {"name": "notes/trip.md", "content": "Lisbon, May."})
    call("entry_rename", {"name": "notes/trip.md", "new_name": "notes/lisbon.md"})
    call("entry_alias", {"name": "notes/lisbon.md", "alias": "trip"})
    call("entry_write", {"name": "trip", "content": "Lisbon, 3-10 May."})
    call("entry_search", {"q": "Lisbon"})
    call("entry_remove", {"name": "trip"})
    found = call("search_error_memory", {"query": "seat map", "tool_name": "book_flight"})
    call("read_error_memory", {"error_id": found["items"][0]["record"]["id"]})
    call("read_error_memory", {"tool_name": "book_flight"})
    call("learning_add", {"kind": "correction", "content": "Dates are day/month/year."})
    call("consolidate", {"session_id": "trip"})
    call("search_history", {})
    call("reset_session", {"session_id": "trip"})


def test_every_tools_answer_validates_against_its_output_schema_and_reads_write_nothing(mcp):
    schemas = {tool.name: tool.output_schema for tool in mcp.tools()}
    answers: dict[str, list[dict]] = defaultdict(list)

    def call(name: str, arguments: dict) -> dict:
        before = _counts() if HINTS[name][0] else None
        answer = mcp.result(name, arguments)
        if before is not None:  # readOnlyHint: not one row added or deleted anywhere
            assert _counts() == before, name
        answers[name].append(answer)
        return answer

    _every_tool(mcp, call)

    assert sorted(answers) == sorted(HINTS)
    for name, bodies in answers.items():
        validator = validator_for(schemas[name])(schemas[name], format_checker=FormatChecker())
        for body in bodies:
            assert list(validator.iter_errors(body)) == [], name
    # The answers exercised the nested shapes, not only empty lists.
    assert answers["append_messages"][0]["hints"] != []
    assert answers["search_chat_history"][0]["hits"] != []
    assert answers["memory_recall"][0]["items"] != []
    assert answers["entry_search"][0]["items"] != []
    assert [set(b) for b in answers["read_error_memory"]] == [
        set(answers["remember_error"][0]),
        {"items", "next_cursor"},
    ]
    assert answers["entry_remove"] == [{}]


def test_an_answer_that_strays_from_its_schema_is_refused(mcp):
    schemas = {tool.name: tool.output_schema for tool in mcp.tools()}
    saved = mcp.result("memory_save", {"content": "The user's cat is called Whiskerino."})

    def check(name: str, body: object) -> None:
        validator_for(schemas[name])(schemas[name], format_checker=FormatChecker()).validate(body)

    check("memory_save", saved)
    for stray in [
        {k: v for k, v in saved.items() if k != "fact"},  # a field missing
        {**saved, "deduped": "no"},  # retyped
        {**saved, "fact": {**saved["fact"], "id": "x"}},  # retyped, nested
    ]:
        with pytest.raises(ValidationError):
            check("memory_save", stray)
    with pytest.raises(ValidationError):
        check("entry_remove", {"deleted": True})  # the empty answer has no fields
    with pytest.raises(ValidationError):
        check("read_error_memory", {"next_cursor": None})  # neither a record nor a page
