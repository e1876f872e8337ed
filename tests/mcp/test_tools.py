"""Every MCP tool, over streamable HTTP and over stdio, answers exactly what the JSON API
answers for the same call; failures are tool errors carrying the API's detail."""

from datetime import UTC, datetime

import pytest

from apps.conversations.schemas import ChatSearchIn, SessionIn
from apps.entries.schemas import EntryAliasIn, EntryIn, EntryWrite, SearchQuery
from apps.learnings.schemas import ErrorIn, ErrorQuery, ErrorSearchIn, LearningIn
from apps.lifecycle.models import HistoryEntry
from apps.lifecycle.schemas import ConsolidateQuery, HistoryQuery
from apps.memory.schemas import ContextIn, MessagesIn, RecallIn, SaveIn, SearchIn

pytestmark = pytest.mark.django_db(transaction=True)


def before_embedding(messages: list[dict]) -> list[dict]:
    """Messages as an append answers them: stored, their embedding not yet run (the tests'
    eager Celery embeds them right after the commit, so a later read says embedded)."""
    assert all(m["embedded"] for m in messages)
    return [{**m, "embedded": False} for m in messages]


def fields(*schemas) -> set[str]:
    return {name for schema in schemas for name in schema.model_fields}


# Each tool's inputs: the API schema's fields, plus what the API takes from the path.
TOOL_INPUTS = {
    "create_session": fields(SessionIn),
    "append_messages": fields(MessagesIn) | {"session_id"},
    "get_window": {"session_id"},
    "reset_session": {"session_id"},
    "search_chat_history": fields(ChatSearchIn),
    "search_history": fields(HistoryQuery),
    "memory_save": fields(SaveIn),
    "memory_recall": fields(RecallIn),
    "memory_search": fields(SearchIn),
    "get_context": fields(ContextIn),
    "entry_add": fields(EntryIn),
    "entry_rename": {"name", "new_name", "user", "scope"},
    "entry_alias": fields(EntryAliasIn) | {"name"},
    "entry_write": fields(EntryWrite) | {"name"},
    "entry_remove": {"name", "user", "scope"},
    "entry_search": fields(SearchQuery),
    "remember_error": fields(ErrorIn),
    "search_error_memory": fields(ErrorSearchIn),
    "read_error_memory": fields(ErrorQuery) | {"error_id"},
    "learning_add": fields(LearningIn),
    "consolidate": fields(ConsolidateQuery) | {"session_id"},
}


def test_the_tools_and_their_inputs(mcp):
    tools = {tool.name: tool for tool in mcp.tools()}

    assert sorted(tools) == sorted(TOOL_INPUTS)
    assert {name: set(t.input_schema["properties"]) for name, t in tools.items()} == TOOL_INPUTS
    assert all(t.input_schema["type"] == "object" for t in tools.values())
    assert all(t.description for t in tools.values())


def test_append_messages_to_a_new_key_creates_the_session(mcp, api):
    appended = mcp.result(
        "append_messages", {"session_id": "chat-9", "messages": [{"role": "user", "content": "hi"}]}
    )

    session = api.get("/sessions/chat-9").json()
    assert (session["key"], session["title"]) == ("chat-9", "")
    assert appended["messages"] == before_embedding(
        api.get("/sessions/chat-9/messages").json()["items"]
    )
    assert [m["session_id"] for m in appended["messages"]] == [session["id"]]


def test_session_tools_answer_the_apis_bodies(mcp, api):
    created = mcp.result("create_session", {"key": "telegram:42", "title": "Support chat"})
    assert created == api.get("/sessions/telegram:42").json()
    assert mcp.result("create_session", {"key": "telegram:42"}) == created  # same key: same one

    appended = mcp.result(
        "append_messages",
        {
            "session_id": "telegram:42",
            "messages": [
                {"role": "user", "name": "Caroline", "content": "My cat is called Whiskerino."},
                {"role": "assistant", "content": "Lovely name! I will remember that."},
            ],
        },
    )
    listed = api.get("/sessions/telegram:42/messages").json()["items"]
    assert appended == {
        "created": 2,
        "deduplicated": 0,
        "messages": before_embedding(listed),
        "lifecycle": [],
        "hints": [],
    }
    window = mcp.result("get_window", {"session_id": created["id"]})
    assert window == api.get("/sessions/telegram:42/window").json()
    assert [m["content"] for m in window["messages"]] == [
        "My cat is called Whiskerino.",
        "Lovely name! I will remember that.",
    ]


@pytest.mark.parametrize("mode", ["semantic", "keyword", "hybrid", "contains"])
def test_search_chat_history_in_every_mode(mcp, api, mode):
    api.post("/sessions", {"key": "s1"})
    api.post(
        "/sessions/s1/messages",
        {
            "messages": [
                {"role": "user", "content": "My cat is called Whiskerino."},
                {"role": "assistant", "content": "Noted: the cat's name."},
                {"role": "user", "content": "The budget review is on Monday."},
            ]
        },
    )
    query = {"query": "cat", "mode": mode, "k": 5}

    found = mcp.result("search_chat_history", query)

    assert found == api.post("/search", query).json()
    assert found["mode"] == mode
    cats = {"My cat is called Whiskerino.", "Noted: the cat's name."}
    assert cats <= {h["content"] for h in found["hits"]}
    if mode == "contains":
        assert {h["content"] for h in found["hits"]} == cats


def test_memory_tools_answer_the_apis_bodies(mcp, api):
    saved = mcp.result("memory_save", {"content": "The user's cat is called Whiskerino"})
    fact = api.get(f"/facts/{saved['fact']['id']}").json()
    assert saved == {
        "fact": fact,
        "action": "created",
        "deduped": False,
        "existing_id": None,
        "similarity": None,
        "log": f"memory/{datetime.now(UTC):%Y-%m-%d}.md",
    }
    assert fact["value"] == "The user's cat is called Whiskerino"
    again = mcp.result("memory_save", {"content": "The user's cat is called Whiskerino"})
    assert (again["action"], again["deduped"], again["existing_id"]) == (
        api.post("/memory/save", {"content": "The user's cat is called Whiskerino"}).json()[
            "action"
        ],
        True,
        fact["id"],
    )

    recalled = mcp.result("memory_recall", {"query": "what is the user's cat called?"})
    # Recall reinforces what it finds; the API's answer right after is one access later.
    by_api = api.post("/memory/recall", {"query": "what is the user's cat called?"}).json()
    assert [i["fact"]["id"] for i in recalled["items"]] == [fact["id"]]
    assert by_api["items"][0]["fact"]["access_count"] == (
        recalled["items"][0]["fact"]["access_count"] + 1
    )
    assert {k: v for k, v in recalled.items() if k != "items"} == {
        k: v for k, v in by_api.items() if k != "items"
    }
    assert recalled["items"][0]["similarity"] == by_api["items"][0]["similarity"]

    searched = mcp.result("memory_search", {"query": "Whiskerino", "k": 5})
    assert searched == api.post("/memory/search", {"query": "Whiskerino", "k": 5}).json()
    # The day's log records both saves, so it names Whiskerino more often than the fact does;
    # as an entry it has a vector too (issue 41), and it ranks first by both legs.
    log = api.get(f"/entries/{saved['log']}").json()
    assert [(i["source"], i["id"]) for i in searched["items"]][:2] == [
        ("document", log["id"]),
        ("fact", fact["id"]),
    ]


def test_get_context_answers_the_apis_body(mcp, api):
    session = api.post("/sessions", {"key": "s1"}).json()
    api.post("/sessions/s1/messages", {"messages": [{"role": "user", "content": "hello there"}]})
    api.post("/entries", {"name": "SOUL.md", "content": "You are a careful assistant."})
    body = {"session_id": "s1", "query": "hello", "max_tokens": 4000, "lifecycle": "off"}

    context = mcp.result("get_context", body)

    assert context == api.post("/context", body).json()
    assert context["session_id"] == session["id"]
    assert [m["content"] for m in context["messages"]] == ["hello there"]


def test_get_context_shows_the_memory_legs_windows_with_session_and_date(mcp, api):
    api.post("/sessions", {"key": "trip", "title": "Trip planning"})
    texts = ["who feeds the cat", "the neighbour will",
             "the spare key is under the blue flowerpot", "thanks", "bye"]  # fmt: skip
    earlier = [
        {"role": "user", "content": text, "created_at": f"2023-05-08T13:56:0{n}Z"}
        for n, text in enumerate(texts)
    ]
    api.post("/sessions/trip/messages", {"messages": earlier})
    api.post("/sessions", {"key": "now"})
    api.post("/sessions/now/messages", {"messages": [{"role": "user", "content": "hello"}]})
    body = {"session_id": "now", "query": "where is the spare key", "lifecycle": "off"}

    context = mcp.result("get_context", body)

    assert context == api.post("/context", body).json()
    assert [(m["content"], m["legs"]) for m in context["messages"]] == [("hello", ["recency"])]
    [window] = context["memory"]
    assert (window["session_key"], window["date"], window["header"], window["rank"]) == (
        "trip",
        "2023-05-08",
        "Session Trip planning, Monday 8 May 2023",
        1,
    )
    assert [(m["content"], m["legs"], m["created_at"]) for m in window["messages"]] == [
        (text, ["memory"], f"2023-05-08T13:56:0{n}Z") for n, text in enumerate(texts)
    ]
    [best] = [m for m in window["messages"] if m["rank"] == 1]
    assert (best["content"], best["hit"]) == (texts[2], True)


def test_search_history_and_consolidate(mcp, api, agent):
    api.post("/sessions", {"key": "s1"})
    api.post("/sessions/s1/messages", {"messages": [{"role": "user", "content": "I like tea"}]})
    HistoryEntry.objects.create(
        agent=agent,
        session_key="old",
        created_at=datetime(2026, 1, 31, 23, 0, tzinfo=UTC),
        content="Deployed the SANDBOX",
        kind="ok",
    )

    consolidated = mcp.result("consolidate", {"session_id": "s1"})

    runs = api.get("/runs", {"kind": "consolidate"}).json()["items"]
    assert consolidated == {"runs": runs}
    assert [(r["kind"], r["trigger"], r["message_count"]) for r in runs] == [
        ("consolidate", "api", 1)
    ]
    found = mcp.result("search_history", {"q": "sandbox"})
    assert found == api.get("/memory/history", {"q": "sandbox"}).json()
    assert [h["content"] for h in found["items"]] == ["Deployed the SANDBOX"]
    by_month = mcp.result("search_history", {"month": "2026-01"})
    assert by_month == api.get("/memory/history", {"month": "2026-01"}).json()


def test_entry_tools_answer_the_apis_bodies(mcp, api):
    added = mcp.result("entry_add", {"name": "notes/tea.md", "content": "Green tea, no sugar."})
    assert added == api.get("/entries/notes/tea.md").json()
    assert (added["name"], added["kind"], added["content"]) == (
        "notes/tea.md",
        "note",
        "Green tea, no sugar.",
    )

    renamed = mcp.result("entry_rename", {"name": "notes/tea.md", "new_name": "notes/drinks.md"})
    assert renamed == api.get("/entries/notes/drinks.md").json()
    assert renamed["name"] == "notes/drinks.md"

    aliased = mcp.result("entry_alias", {"name": "notes/drinks.md", "alias": "tea"})
    entry = api.get("/entries/notes/drinks.md").json()
    # AliasOut's entry is a summary: no content, no index fields
    summary = {**entry, "content": None}
    del summary["index_fields"]
    assert aliased == {"alias": "tea", "entry": summary}
    assert aliased["entry"]["aliases"] == ["tea"]

    written = mcp.result("entry_write", {"name": "tea", "content": "Black tea now."})
    assert written == api.get("/entries/notes/drinks.md").json()
    assert written["content"] == "Black tea now."

    found = mcp.result("entry_search", {"q": "black tea"})
    assert found == api.get("/entries/search", {"q": "black tea"}).json()
    assert [i["entry"]["name"] for i in found["items"]] == ["notes/drinks.md"]

    assert mcp.result("entry_remove", {"name": "notes/drinks.md"}) == {}  # the API's 204
    assert api.get("/entries/notes/drinks.md").status_code == 404


def test_error_memory_and_learning_tools_answer_the_apis_bodies(mcp, api):
    record = {
        "tool_name": "git_push",
        "error": "rejected: non-fast-forward",
        "strategy": "pull --rebase then push",
        "outcome": "resolved",
        "resolution": "pull --rebase then push",
    }
    remembered = mcp.result("remember_error", record)
    assert remembered == api.get(f"/errors/{remembered['id']}").json()
    assert {k: remembered[k] for k in record} == record
    assert remembered["hit_count"] == 0

    read = mcp.result("read_error_memory", {"error_id": remembered["id"]})
    assert read == remembered  # reading is not a hit
    listed = mcp.result("read_error_memory", {"tool_name": "git_push"})
    assert listed == api.get("/errors", {"tool_name": "git_push"}).json()
    assert listed == {"items": [remembered], "next_cursor": None}

    found = mcp.result(
        "search_error_memory", {"query": "non-fast-forward", "tool_name": "git_push"}
    )
    # Every hit is refreshed: the record now has one hit, as the API reads it back.
    assert [i["record"] for i in found["items"]] == [api.get(f"/errors/{remembered['id']}").json()]
    assert found["items"][0]["record"]["hit_count"] == 1

    learned = mcp.result("learning_add", {"kind": "correction", "content": "Say 'colour'."})
    assert learned == api.get(f"/learnings/{learned['id']}").json()
    assert (learned["kind"], learned["content"], learned["source"], learned["status"]) == (
        "correction",
        "Say 'colour'.",
        "agent",
        "active",
    )


def test_reset_session_answers_the_apis_body(mcp, api):
    api.post("/sessions", {"key": "s1"})
    api.post("/sessions/s1/messages", {"messages": [{"role": "user", "content": "I like tea"}]})

    reset = mcp.result("reset_session", {"session_id": "s1"})

    session = api.get("/sessions/s1").json()
    # The eager after-commit work touches the session once more after the answer.
    assert {k: v for k, v in reset["session"].items() if k != "updated_at"} == {
        k: v for k, v in session.items() if k != "updated_at"
    }
    assert reset["session"]["updated_at"] <= session["updated_at"]
    assert reset["deleted_messages"] == 1
    assert reset["runs"] == api.get("/runs", {"kind": "consolidate"}).json()["items"]
    assert api.get("/sessions/s1/messages").json()["items"] == []


def test_unknown_references_are_tool_errors_with_the_apis_detail(mcp, api):
    for tool, arguments, path in [
        ("get_window", {"session_id": "nope"}, "/sessions/nope/window"),
        ("read_error_memory", {"error_id": 999999}, "/errors/999999"),
    ]:
        assert mcp.error(tool, arguments) == api.get(path).json()["detail"]
    assert (
        mcp.error("entry_write", {"name": "missing.md", "content": "x"})
        == (
            api.client.put(
                "/api/v1/entries/missing.md",
                '{"content": "x"}',
                content_type="application/json",
                headers=api._headers(),
            ).json()["detail"]
        )
    )


def test_invalid_inputs_are_tool_errors_with_the_apis_validation_detail(mcp, api):
    body = {"query": "cat", "k": 0}

    detail = mcp.error("memory_recall", body)

    # The API's 422 detail, with `loc` relative to the tool's arguments (no body/payload).
    by_api = api.post("/memory/recall", body).json()["detail"]
    assert detail == [{**d, "loc": d["loc"][2:]} for d in by_api]
    assert detail == [
        {
            "loc": ["k"],
            "msg": "Input should be greater than or equal to 1",
            "type": "greater_than_equal",
        }
    ]


def test_a_conflict_is_a_tool_error_with_the_apis_detail(mcp, api):
    api.post("/entries", {"name": "notes/a.md", "content": "a"})

    detail = mcp.error("entry_add", {"name": "notes/a.md", "content": "again"})

    assert detail == api.post("/entries", {"name": "notes/a.md", "content": "b"}).json()["detail"]


def test_nul_in_tool_arguments_is_a_tool_error_naming_the_field_and_stores_nothing(mcp, api):
    content = mcp.error(
        "append_messages",
        {"session_id": "chat-nul", "messages": [{"role": "user", "content": "a\x00b"}]},
    )
    key = mcp.error(
        "append_messages",
        {
            "session_id": "chat-nul",
            "messages": [{"role": "user", "content": "ok", "metadata": {"k\x00": 1}}],
        },
    )

    assert content == [
        {
            "loc": ["messages", 0, "content"],
            "msg": "content must not contain NUL characters",
            "type": "value_error",
        }
    ]
    assert key == [
        {
            "loc": ["messages", 0, "metadata", "k\\u0000"],
            "msg": "key must not contain NUL characters",
            "type": "value_error",
        }
    ]
    assert api.get("/sessions/chat-nul").status_code == 404
