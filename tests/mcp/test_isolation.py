"""Two agents' keys over MCP: what agent A stored is invisible and unaddressable with agent
B's key, on both transports, and nothing B does reaches A."""

from datetime import UTC, datetime

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from apps.conversations.models import Message, Session
from apps.entries.models import Entry
from apps.facts.models import Fact
from apps.learnings.models import ErrorRecord, Learning
from apps.lifecycle.models import HistoryEntry

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def stored(api, agent) -> dict:
    """Agent A's session, messages, fact, entries, error record and history, via the API."""
    session = api.post("/sessions", {"key": "telegram:42"}).json()
    api.post(
        "/sessions/telegram:42/messages",
        {"messages": [{"role": "user", "content": "My cat is called Whiskerino."}]},
    )
    fact = api.post("/memory/save", {"content": "The user's cat is called Whiskerino"}).json()
    api.post("/entries", {"name": "MEMORY.md", "content": "# Memory\n\nWhiskerino the cat.\n"})
    api.post("/entries", {"name": "notes/cat.md", "content": "Whiskerino likes tuna."})
    error = api.post("/errors", {"tool_name": "git_push", "error": "Whiskerino rejected"}).json()
    HistoryEntry.objects.create(
        agent=agent,
        session_key="telegram:42",
        created_at=datetime(2026, 1, 31, tzinfo=UTC),
        content="Talked about Whiskerino",
        kind="ok",
    )
    return {"session": session["id"], "fact": fact["fact"]["id"], "error": error["id"]}


def _counts(agent) -> tuple:
    return (
        Session.objects.filter(agent=agent).count(),
        Message.objects.filter(agent=agent).count(),
        Fact.objects.filter(agent=agent).count(),
        Entry.objects.filter(agent=agent).count(),
        ErrorRecord.objects.filter(agent=agent).count(),
        Learning.objects.filter(agent=agent).count(),
        HistoryEntry.objects.filter(agent=agent).count(),
    )


def test_another_agents_key_cannot_address_anything(connect, stored, other_key, api):
    mallory = connect(other_key)
    session_id = stored["session"]
    unaddressable = [
        ("get_window", {"session_id": session_id}),
        ("get_context", {"session_id": session_id, "lifecycle": "off"}),
        ("consolidate", {"session_id": session_id}),
        ("reset_session", {"session_id": session_id}),
        (
            "append_messages",
            {"session_id": session_id, "messages": [{"role": "user", "content": "x"}]},
        ),
        ("search_chat_history", {"query": "cat", "session_id": session_id}),
        ("search_history", {"session_id": session_id}),
        ("read_error_memory", {"error_id": stored["error"]}),
        ("entry_write", {"name": "notes/cat.md", "content": "mine now"}),
        ("entry_rename", {"name": "notes/cat.md", "new_name": "notes/dog.md"}),
        ("entry_alias", {"name": "notes/cat.md", "alias": "cat"}),
        ("entry_remove", {"name": "notes/cat.md"}),
        ("memory_save", {"content": "x", "session_id": session_id}),
        ("remember_error", {"tool_name": "t", "error": "e", "session_id": session_id}),
        ("learning_add", {"kind": "error", "content": "x", "session_id": session_id}),
    ]

    details = {tool: mallory.error(tool, arguments) for tool, arguments in unaddressable}

    entry = "no entry named 'notes/cat.md'"
    assert details == {
        tool: (
            entry
            if tool.startswith("entry_")
            else "error record not found"
            if tool == "read_error_memory"
            else "session not found"
        )
        for tool, _ in unaddressable
    }
    assert details["read_error_memory"] == api.get("/errors/0").json()["detail"]


def test_another_agents_key_finds_nothing(connect, stored, other_key):
    mallory = connect(other_key)

    assert mallory.result("search_chat_history", {"query": "Whiskerino", "mode": "contains"}) == {
        "query": "Whiskerino",
        "mode": "contains",
        "degraded": [],
        "hits": [],
        "windows": [],
    }
    for mode in ["semantic", "keyword", "hybrid"]:
        assert mallory.result("search_chat_history", {"query": "cat", "mode": mode})["hits"] == []
    assert mallory.result("memory_recall", {"query": "What is the cat called?"}) == {
        "items": [],
        "categories": [],
        "fell_back": True,
        "degraded": [],
    }
    assert mallory.result("memory_search", {"query": "Whiskerino"}) == {
        "items": [],
        "degraded": [],
    }
    assert mallory.result("entry_search", {"q": "Whiskerino"}) == {"items": [], "degraded": []}
    assert mallory.result("search_error_memory", {"query": "Whiskerino"}) == {
        "items": [],
        "degraded": [],
    }
    assert mallory.result("read_error_memory", {}) == {"items": [], "next_cursor": None}
    assert mallory.result("search_history", {"q": "Whiskerino"}) == {
        "items": [],
        "next_cursor": None,
    }


def test_another_agents_resources_are_not_there(connect, stored, other_key, key):
    alice, mallory = connect(key), connect(other_key)

    assert "memory://MEMORY.md" in {str(r.uri) for r in alice.resources()}
    assert {str(r.uri) for r in mallory.resources()} & {
        "memory://MEMORY.md",
        "memory://notes/cat.md",
    } == set()
    refused = {}
    for uri in ["memory://MEMORY.md", "memory://HISTORY/2026-01", "memory://notes/cat.md"]:
        with pytest.raises(MCPError) as raised:
            mallory.read(uri)
        refused[uri] = (raised.value.error.code, raised.value.error.message)
    assert refused == {
        "memory://MEMORY.md": (INVALID_PARAMS, "no entry named 'MEMORY.md'"),
        "memory://HISTORY/2026-01": (INVALID_PARAMS, "no history in 'memory/HISTORY-2026-01.md'"),
        "memory://notes/cat.md": (INVALID_PARAMS, "no resource 'memory://notes/cat.md'"),
    }


def test_nothing_crosses_either_way(connect, stored, agent, other_agent, other_key):
    mallory = connect(other_key)
    before = _counts(agent)

    own = mallory.result("create_session", {"key": "telegram:42"})  # the same key as A's
    mallory.result(
        "append_messages",
        {"session_id": "telegram:42", "messages": [{"role": "user", "content": "Rex the dog"}]},
    )
    saved = mallory.result("memory_save", {"content": "The user's cat is called Whiskerino"})
    mallory.result("entry_add", {"name": "notes/cat.md", "content": "Mallory's note"})
    mallory.result("remember_error", {"tool_name": "git_push", "error": "Whiskerino rejected"})
    mallory.result("learning_add", {"kind": "error", "content": "Mallory's lesson"})
    mallory.result("reset_session", {"session_id": "telegram:42"})

    assert own["id"] != stored["session"]
    assert (saved["action"], saved["fact"]["id"] != stored["fact"]) == ("created", True)
    assert _counts(agent) == before
    assert Entry.objects.get(agent=agent, name="notes/cat.md").content == "Whiskerino likes tuna."
    assert Message.objects.get(agent=agent).content == "My cat is called Whiskerino."
    assert Session.objects.get(pk=own["id"]).agent_id == other_agent.pk
