"""The two tool sets (docs/mcp.md, "Two tool sets"): tools/list answers the compact default
set, at most 12,000 characters of JSON, unless the client asks for every tool (`?tools=all`,
`X-MemoryHub-Tools: all`, `manage.py mcp --all-tools`); every tool is callable either way."""

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from jsonschema.validators import validator_for

from apps.mcp.tools import DEFAULT_TOOLS, TOOLS
from tests.mcp.test_server_unit import TOOL_NAMES, rpc

pytestmark = pytest.mark.django_db

LIMIT = 12_000
DOCS = Path(settings.BASE_DIR) / "docs" / "mcp.md"


def size(tools: list[dict]) -> int:
    """What a model reads of a tool list: each tool's name, title, description and input
    schema, serialised as JSON (json.dumps' default separators)."""
    read = [
        {k: tool.get(k) for k in ("name", "title", "description", "inputSchema")} for tool in tools
    ]
    return len(json.dumps(read))


def listed(key: str, **options) -> list[dict]:
    return rpc(key, "tools/list", **options)["result"]["tools"]


def test_the_default_set_is_at_most_12000_characters(key):
    tools = listed(key)

    assert [t["name"] for t in tools] == list(DEFAULT_TOOLS)
    assert size(tools) <= LIMIT
    # The figure docs/mcp.md states.
    assert size(tools) == 11448


def test_the_full_set_is_there_by_query_parameter_or_header(key):
    by_query = listed(key, path="/mcp?tools=all")
    by_header = listed(key, headers={"X-MemoryHub-Tools": "all"})

    assert [t["name"] for t in by_query] == TOOL_NAMES
    assert by_header == by_query
    assert size(by_query) > 3 * LIMIT
    assert listed(key, path="/mcp?tools=default") == listed(key)


def _properties(schema: dict, path: str = "") -> dict[str, set[str]]:
    """The parameter names at each (dotted) object path of a schema, `$ref`s followed."""
    found: dict[str, set[str]] = {}

    def walk(node: dict, at: str) -> None:
        ref = node.get("$ref")
        if ref:
            node = schema["$defs"][ref.removeprefix("#/$defs/")]
        if "properties" in node:
            found[at] = set(node["properties"])
            for name, prop in node["properties"].items():
                walk(prop, f"{at}.{name}".lstrip("."))
        if isinstance(node.get("items"), dict):
            walk(node["items"], at)
        for branch in node.get("anyOf", []):
            walk(branch, at)

    walk(schema, path)
    return found


def test_a_default_tool_is_the_full_one_in_brief(key):
    full = {t["name"]: t for t in listed(key, path="/mcp?tools=all")}
    for tool in listed(key):
        whole = full[tool["name"]]
        brief, schema = tool["inputSchema"], whole["inputSchema"]
        assert (tool["title"], tool["annotations"]) == (whole["title"], whole["annotations"])
        assert tool["outputSchema"] == whole["outputSchema"]
        assert len(tool["description"]) < len(whole["description"])
        assert brief["required"] == schema["required"]
        assert "$defs" not in brief
        validator_for(brief).check_schema(brief)
        # Parameters are only left out, never added or renamed.
        shown, taken = _properties(brief), _properties(schema)
        for at, names in shown.items():
            assert names <= taken[at], tool["name"]
        omitted = {
            f"{at}.{name}".lstrip(".") for at in taken for name in taken[at] - shown.get(at, set())
        }
        assert omitted == set(TOOLS[tool["name"]].about.brief_omits), tool["name"]


def test_the_search_filters_left_out_of_the_default_set_still_work(key):
    listed_params = {t["name"]: t for t in listed(key)}["search_chat_history"]["inputSchema"]
    assert "role" not in listed_params["properties"]

    answer = rpc(
        key,
        "tools/call",
        {"name": "search_chat_history", "arguments": {"query": "x", "role": "user"}},
    )["result"]

    assert answer["isError"] is False
    assert answer["structuredContent"]["hits"] == []


def test_a_tool_outside_the_default_set_is_callable_without_the_option(key):
    answer = rpc(key, "tools/call", {"name": "create_session", "arguments": {"key": "k1"}})

    assert answer["result"]["isError"] is False
    assert answer["result"]["structuredContent"]["key"] == "k1"


@pytest.mark.parametrize("every_tool", [False, True])
def test_both_transports_list_the_set_asked_for(connect, key, every_tool):
    client = connect(key, every_tool=every_tool)

    names = [tool.name for tool in client.tools()]

    assert names == (TOOL_NAMES if every_tool else list(DEFAULT_TOOLS))
    # A tool outside the default set answers all the same.
    assert client.result("create_session", {"key": "s1"})["key"] == "s1"


def test_the_docs_table_names_every_input_and_the_default_set():
    table = DOCS.read_text().split("| tool | inputs ")[1].split("\n\n")[0]
    rows = re.findall(r"^\| `(\w+)`( ★)? \| ([^|]*) \|", table, flags=re.MULTILINE)

    assert [name for name, star, _ in rows if star] == sorted(
        DEFAULT_TOOLS, key=[name for name, _, _ in rows].index
    )
    for name, _, inputs in rows:
        tool = TOOLS[name]
        named = set(re.findall(r"`(\w+)`", inputs))
        taken = _properties(tool.definition().input_schema)
        everything = {n for names in taken.values() for n in names}
        # Every input is named; the rest are values (`semantic`, …).
        assert everything <= named, name
        # The inputs the default set leaves out are in italics.
        italic = "".join(re.findall(r"\*([^*]*)\*", inputs))
        omitted = {path.rpartition(".")[2] for path in tool.about.brief_omits}
        assert set(re.findall(r"`(\w+)`", italic)) == omitted, name
