"""Fast checks of the MCP server through Django's test client: JSON-RPC POSTed to /mcp
(stateless, JSON responses, the 2025-11-25 handshake-era wire), and the stdio command's
refusals. The SDK-client acceptance tests over live HTTP and stdio are test_*.py beside it."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from apps.mcp.tools import TOOLS
from apps.mcp.views import NO_OAUTH

VERSION = "2025-11-25"
TOOL_NAMES = [
    "create_session",
    "append_messages",
    "get_window",
    "search_chat_history",
    "search_history",
    "memory_save",
    "memory_recall",
    "memory_search",
    "get_context",
    "entry_add",
    "entry_rename",
    "entry_alias",
    "entry_write",
    "entry_remove",
    "entry_search",
    "remember_error",
    "search_error_memory",
    "read_error_memory",
    "learning_add",
    "consolidate",
    "reset_session",
]


def post(
    key: str | None,
    body: object,
    *,
    raw: bytes | None = None,
    version: str | None = VERSION,
    path: str = "/mcp",
    headers: dict[str, str] | None = None,
):
    headers = {"Accept": "application/json, text/event-stream", **(headers or {})}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    data = raw if raw is not None else json.dumps(body)
    return Client().post(path, data, content_type="application/json", headers=headers)


def rpc(key: str, method: str, params: dict | None = None, **options) -> dict:
    """The JSON-RPC response of one request (HTTP 200, application/json); `options` go to
    post (the path with a query, headers)."""
    message = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params or {}}
    response = post(key, message, **options)
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["id"] == 7
    return body


def call(key: str, name: str, arguments: dict) -> dict:
    return rpc(key, "tools/call", {"name": name, "arguments": arguments})["result"]


def ok(key: str, name: str, arguments: dict) -> dict:
    """A successful call's structured content, which its one text block holds as JSON."""
    result = call(key, name, arguments)
    assert result["isError"] is False, result
    assert [c["type"] for c in result["content"]] == ["text"]
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    return result["structuredContent"]


def failed(key: str, name: str, arguments: dict) -> str:
    result = call(key, name, arguments)
    assert result["isError"] is True, result
    assert "structuredContent" not in result
    return result["content"][0]["text"]


def test_initialize_answers_server_info_and_capabilities(key):
    params = {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    result = rpc(key, "initialize", params)["result"]
    assert result["protocolVersion"] == VERSION
    assert result["serverInfo"] == {"name": "memoryhub", "version": "1"}
    assert set(result["capabilities"]) == {"tools", "resources"}


def test_tools_list_names_every_tool_with_the_api_schemas(key):
    tools = rpc(key, "tools/list", path="/mcp?tools=all")["result"]["tools"]
    assert [t["name"] for t in tools] == TOOL_NAMES == list(TOOLS)
    by_name = {t["name"]: t for t in tools}
    recall = by_name["memory_recall"]["inputSchema"]
    assert list(recall["properties"]) == [
        "user",
        "all_users",
        "query",
        "session_id",
        "category",
        "k",
    ]
    assert recall["required"] == ["query"]
    assert by_name["memory_recall"]["description"].startswith("Find the saved facts")
    assert by_name["append_messages"]["inputSchema"]["required"] == ["messages", "session_id"]
    assert list(by_name["entry_rename"]["inputSchema"]["properties"]) == [
        "user",
        "scope",
        "name",
        "new_name",
    ]


def test_a_tool_answers_the_api_body(key, api):
    added = ok(key, "entry_add", {"name": "notes/cat.md", "content": "Whiskerino the cat"})
    assert added == api.get("/entries/notes/cat.md").json()
    assert added["name"] == "notes/cat.md"
    assert added["content"] == "Whiskerino the cat"
    assert added["updated_at"].endswith("Z")
    found = ok(key, "entry_search", {"q": "whiskerino"})
    assert found == api.get("/entries/search", {"q": "whiskerino"}).json()
    assert [hit["entry"]["name"] for hit in found["items"]] == ["notes/cat.md"]


def test_an_entry_removed_answers_an_empty_object(key, api):
    ok(key, "entry_add", {"name": "scratch.md"})
    assert ok(key, "entry_remove", {"name": "scratch.md"}) == {}
    assert api.get("/entries/scratch.md").status_code == 404


def test_append_messages_creates_the_session_for_a_new_key(key, api):
    appended = ok(
        key,
        "append_messages",
        {"session_id": "chat-9", "messages": [{"role": "user", "content": "hello there"}]},
    )
    assert appended["created"] == 1
    assert [m["content"] for m in appended["messages"]] == ["hello there"]
    session = api.get("/sessions/chat-9").json()
    assert appended["messages"][0]["session_id"] == session["id"]
    window = ok(key, "get_window", {"session_id": "chat-9"})
    assert window == api.get("/sessions/chat-9/window").json()


def test_an_unknown_session_id_is_a_tool_error_with_the_api_detail(key):
    ref = "00000000-0000-0000-0000-000000000000"
    assert failed(key, "get_window", {"session_id": ref}) == "session not found"
    messages = [{"role": "user", "content": "x"}]
    assert failed(key, "append_messages", {"session_id": ref, "messages": messages}) == (
        "session not found"
    )


def test_invalid_arguments_are_a_tool_error_with_the_422_detail(key):
    detail = json.loads(failed(key, "memory_recall", {"query": 5, "k": 0}))
    assert detail == [
        {"loc": ["query"], "msg": "Input should be a valid string", "type": "string_type"},
        {
            "loc": ["k"],
            "msg": "Input should be greater than or equal to 1",
            "type": "greater_than_equal",
        },
    ]


def test_a_domain_invalid_input_keeps_its_loc(key):
    detail = json.loads(failed(key, "entry_add", {"name": "../escape.md"}))
    assert detail == [
        {"loc": ["body", "name"], "msg": "name must not contain '..'", "type": "value_error"}
    ]


def test_an_unknown_tool_is_a_json_rpc_error(key):
    body = rpc(key, "tools/call", {"name": "nope", "arguments": {}})
    assert body["error"]["code"] == -32602
    assert body["error"]["message"] == "Unknown tool: nope"


def test_resources_list_and_read_the_workspace_documents(key):
    assert rpc(key, "resources/list")["result"]["resources"] == []
    ok(key, "entry_add", {"name": "MEMORY.md", "content": "# Memory\n\nThe cat is Whiskerino.\n"})
    resources = rpc(key, "resources/list")["result"]["resources"]
    assert [(r["uri"], r["name"], r["mimeType"]) for r in resources] == [
        ("memory://MEMORY.md", "MEMORY.md", "text/markdown")
    ]
    contents = rpc(key, "resources/read", {"uri": "memory://MEMORY.md"})["result"]["contents"]
    assert contents == [
        {
            "uri": "memory://MEMORY.md",
            "mimeType": "text/markdown",
            "text": "# Memory\n\nThe cat is Whiskerino.\n",
        }
    ]
    templates = rpc(key, "resources/templates/list")["result"]["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == [
        "memory://HISTORY/{month}",
        "memory://memory/{day}.md",
    ]


def test_reading_a_missing_resource_is_a_json_rpc_error(key):
    body = rpc(key, "resources/read", {"uri": "memory://SOUL.md"})
    assert body["error"] == {
        "code": -32602,
        "message": "no entry named 'SOUL.md'",
        "data": {"uri": "memory://SOUL.md"},
    }
    body = rpc(key, "resources/read", {"uri": "memory://HISTORY/2026-01"})
    assert body["error"]["message"] == "no history in 'memory/HISTORY-2026-01.md'"
    body = rpc(key, "resources/read", {"uri": "file:///etc/passwd"})
    assert body["error"]["message"] == "no resource 'file:///etc/passwd'"


def test_another_agents_key_sees_nothing(key, other_key):
    ok(key, "entry_add", {"name": "MEMORY.md", "content": "mine"})
    ok(
        key,
        "append_messages",
        {"session_id": "chat-1", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert rpc(other_key, "resources/list")["result"]["resources"] == []
    assert failed(other_key, "entry_write", {"name": "MEMORY.md", "content": "x"}) == (
        "no entry named 'MEMORY.md'"
    )
    assert ok(other_key, "search_chat_history", {"query": "hi", "mode": "contains"})["hits"] == []


@pytest.mark.parametrize(
    ("authorization", "presented"), [(None, False), ("Bearer mh_nope", True), ("Basic abc", False)]
)
def test_a_bad_key_is_refused_with_401_before_any_mcp(agent, authorization, presented):
    headers = {"Authorization": authorization} if authorization else {}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    response = Client().post("/mcp", body, content_type="application/json", headers=headers)
    assert response.status_code == 401
    reason = "an API key is required"
    if presented:
        reason = "the API key is unknown, malformed or revoked"
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": f"Unauthorized: {reason}. {NO_OAUTH}"},
    }
    assert response["WWW-Authenticate"].startswith('Bearer realm="memoryhub"')


def test_a_malformed_body_is_a_json_rpc_parse_error(key):
    response = post(key, None, raw=b"{not json")
    assert response.status_code == 400
    body = response.json()
    assert body["id"] is None
    assert body["error"]["code"] == -32700


def test_get_and_delete_are_not_allowed(key):
    for method in ("get", "delete"):
        response = getattr(Client(), method)("/mcp", headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 405
        assert response["Allow"] == "POST"


def test_the_stdio_command_refuses_a_bad_key_or_agent(agent):
    with pytest.raises(CommandError, match="the API key is unknown, malformed or revoked"):
        call_command("mcp", "--key", "mh_nope")
    with pytest.raises(CommandError, match="no agent 'nobody'"):
        call_command("mcp", "--agent", "nobody")
