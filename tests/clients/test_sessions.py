"""Sessions, messages, the window, get_context, search and the lifecycle's operations
through the client, on MemoryHub and AsyncMemoryHub, against the live server."""

import re
from datetime import timedelta

import pytest
from memoryhub_client import AppendResult, Context, Message, NewMessage, Session, Window
from memoryhub_client._call import SESSION_DEPRECATED
from memoryhub_client.models import (
    CompactResult,
    ResetResult,
    RunsResult,
    SearchResult,
    SearchStatus,
    SummaryResult,
)

from tests.clients.conftest import collect, settle

BOOKING = [
    {"role": "user", "content": "Book me a table at Nopa for 7pm"},
    {
        "role": "assistant",
        "content": "Booking now.",
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "book", "arguments": '{"place": "Nopa"}'},
            }
        ],
    },
    {"role": "tool", "content": "booked", "tool_call_id": "call_1", "tool_name": "book"},
    NewMessage(role="assistant", content="Done: Nopa at 7pm.", idempotency_key="done-1"),
]


def test_create_get_update_list_and_delete_sessions(run):
    async def scenario(hub):
        created = await settle(hub.sessions.create(key="chat-1", user="u1", title="First"))
        again = await settle(hub.sessions.create(key="chat-1"))
        by_key = await settle(hub.sessions.get("chat-1"))
        by_id = await settle(hub.sessions.get(str(created.id)))
        updated = await settle(hub.sessions.update("chat-1", title="Renamed", metadata={"a": 1}))
        for n in range(2, 6):
            await settle(hub.sessions.create(key=f"chat-{n}", user="u2" if n % 2 else None))
        every = await collect(hub.sessions.list(all_users=True, limit=2))  # 5: three pages
        of_u2 = await collect(hub.sessions.list(user="u2", limit=1))
        await settle(hub.sessions.delete("chat-1"))
        return (
            created,
            again,
            by_key,
            by_id,
            updated,
            every,
            of_u2,
            await collect(hub.sessions.list(all_users=True)),
        )

    created, again, by_key, by_id, updated, every, of_u2, after = run(scenario)

    assert isinstance(created, Session)
    assert (created.key, created.user, created.title, created.metadata) == (
        "chat-1",
        "u1",
        "First",
        {},
    )
    assert again.id == by_key.id == by_id.id == created.id
    assert (updated.id, updated.title, updated.metadata) == (created.id, "Renamed", {"a": 1})
    assert [s.key for s in every] == ["chat-5", "chat-4", "chat-3", "chat-2", "chat-1"]
    assert [s.key for s in of_u2] == ["chat-5", "chat-3"]
    assert [s.key for s in after] == ["chat-5", "chat-4", "chat-3", "chat-2"]


def test_append_fills_idempotency_keys_and_lists_every_page(run):
    async def scenario(hub):
        await settle(hub.sessions.create(key="chat-1"))
        first = await settle(hub.messages.append("chat-1", BOOKING))
        # The same explicit key again is the same message: nothing new is stored.
        repeat = await settle(
            hub.messages.append(
                "chat-1", [{"role": "assistant", "content": "x", "idempotency_key": "done-1"}]
            )
        )
        asc = await collect(hub.messages.list("chat-1", limit=3))
        desc = await collect(hub.messages.list("chat-1", order="desc", limit=1))
        tools = await collect(hub.messages.list("chat-1", role="tool"))
        talk = await collect(hub.messages.list("chat-1", role=["user", "assistant"], limit=2))
        second = asc[1].created_at
        window = await collect(
            hub.messages.list(
                "chat-1", after=second - timedelta(microseconds=1), before=asc[3].created_at
            )
        )
        return first, repeat, asc, desc, tools, talk, window

    first, repeat, asc, desc, tools, talk, window = run(scenario)

    assert isinstance(first, AppendResult)
    assert (first.created, first.deduplicated, first.lifecycle, first.hints) == (4, 0, [], [])
    assert (repeat.created, repeat.deduplicated) == (0, 1)
    assert repeat.messages[0].id == first.messages[3].id
    assert [m.content for m in asc] == [
        "Book me a table at Nopa for 7pm",
        "Booking now.",
        "booked",
        "Done: Nopa at 7pm.",
    ]
    assert all(isinstance(m, Message) for m in asc)
    assert asc[1].tool_calls == BOOKING[1]["tool_calls"]
    assert (asc[2].role, asc[2].tool_call_id, asc[2].tool_name) == ("tool", "call_1", "book")
    assert [m.id for m in desc] == [m.id for m in reversed(asc)]
    assert [m.content for m in tools] == ["booked"]
    assert [m.role for m in talk] == ["user", "assistant", "assistant"]
    assert [m.content for m in window] == ["Booking now.", "booked"]


def test_window_context_and_search(run):
    async def scenario(hub):
        await settle(hub.sessions.create(key="chat-1", user="u1"))
        await settle(hub.messages.append("chat-1", BOOKING))
        window = await settle(hub.window("chat-1"))
        context = await settle(hub.context("chat-1", query="Nopa", max_tokens=4000, user="u1"))
        found = await settle(hub.search("Nopa", mode="keyword", session_id="chat-1", role="user"))
        status = await settle(hub.search_status())
        return window, context, found, status

    window, context, found, status = run(scenario)

    assert isinstance(window, Window)
    assert (window.summary, window.markers, window.start_at) == (None, [], None)
    assert [(m.role, m.tool_call_id, m.tool_name) for m in window.messages] == [
        ("user", None, None),
        ("assistant", None, None),
        ("tool", "call_1", "book"),
        ("assistant", None, None),
    ]
    assert window.messages[1].tool_calls == BOOKING[1]["tool_calls"]
    assert isinstance(context, Context)
    assert (context.session_id, context.query) == (window.session_id, "Nopa")
    assert [m.content for m in context.messages] == [m.content for m in window.messages]
    assert (
        context.tokens.total == context.tokens.messages == sum(m.tokens for m in context.messages)
    )
    assert (context.usage.max_tokens, context.dropped, context.warnings) == (4000, [], [])
    assert isinstance(found, SearchResult)
    assert (found.query, found.mode) == ("Nopa", "keyword")
    assert [(h.role, h.content) for h in found.hits] == [
        ("user", "Book me a table at Nopa for 7pm")
    ]
    assert isinstance(status, SearchStatus)
    assert (status.embedded, status.pending, status.failed) == (4, 0, 0)
    assert status.corpora["messages"].vectors is True
    assert status.corpora["entries"].vectors is True  # issue 41: entries are embedded


def test_the_lifecycle_operations_on_a_session(run):
    async def scenario(hub):
        await settle(hub.sessions.create(key="chat-1", user="u1"))
        await settle(hub.messages.append("chat-1", BOOKING))
        summary = await settle(hub.sessions.summarize("chat-1"))
        compact = await settle(hub.sessions.compact("chat-1"))
        flush = await settle(hub.sessions.flush("chat-1"))
        consolidate = await settle(hub.sessions.consolidate("chat-1", keep=0))
        reset = await settle(hub.sessions.reset("chat-1"))
        left = await collect(hub.messages.list("chat-1"))
        return summary, compact, flush, consolidate, reset, left

    summary, compact, flush, consolidate, reset, left = run(scenario)

    # No LLM is configured here: each step is skipped or falls back, and says so.
    assert isinstance(summary, SummaryResult)
    assert [(r.kind, r.status, r.reason) for r in summary.runs] == [
        ("summary", "skipped", "nothing_to_do")
    ]
    assert isinstance(compact, CompactResult)
    assert [(r.kind, r.status) for r in compact.runs] == [("compact", "skipped")]
    assert isinstance(flush, RunsResult)
    assert [(r.kind, r.status) for r in flush.runs] == [("flush", "skipped")]
    assert [(r.kind, r.status, r.reason, r.message_count) for r in consolidate.runs] == [
        ("consolidate", "fallback", "not_configured", 4)
    ]
    assert isinstance(reset, ResetResult)
    assert (reset.session.key, reset.deleted_messages, reset.archive) == (
        "chat-1",
        4,
        "archive/chat-1/1",
    )
    assert left == []


def test_pop_takes_the_last_message_back(run):
    async def scenario(hub):
        await settle(hub.sessions.create(key="chat-1"))
        appended = await settle(hub.messages.append("chat-1", BOOKING[:2]))
        popped = await settle(hub.messages.pop("chat-1"))
        return appended, popped, await collect(hub.messages.list("chat-1"))

    appended, popped, left = run(scenario)

    assert isinstance(popped, Message)
    assert (popped.id, popped.role, popped.content) == (
        appended.messages[1].id,
        "assistant",
        "Booking now.",
    )
    assert popped.tool_calls == BOOKING[1]["tool_calls"]
    assert [m.id for m in left] == [appended.messages[0].id]


def test_the_old_session_keyword_still_works_with_a_deprecation_warning(run):
    async def scenario(hub):
        await settle(hub.messages.append("chat-2", BOOKING))
        with pytest.warns(DeprecationWarning, match=re.escape(SESSION_DEPRECATED)) as caught:
            old = await settle(hub.search("Nopa", mode="keyword", session="chat-2"))
        new = await settle(hub.search("Nopa", mode="keyword", session_id="chat-2"))
        with pytest.warns(DeprecationWarning, match=re.escape(SESSION_DEPRECATED)):
            window = await settle(hub.window(session="chat-2"))
        with (
            pytest.warns(DeprecationWarning, match=re.escape(SESSION_DEPRECATED)),
            pytest.raises(TypeError, match="got both session= and session_id="),
        ):
            hub.window(session="chat-2", session_id="chat-2")
        return caught, old, new, window

    caught, old, new, window = run(scenario)

    assert [str(w.message) for w in caught] == [
        "session= is deprecated: use session_id= (the API's name); session= goes in "
        "memoryhub-client 2.3.0"
    ]
    # Reported where the caller wrote it.
    assert caught[0].filename == __file__
    assert [h.content for h in old.hits] == [h.content for h in new.hits]
    assert sorted(h.content for h in old.hits) == [
        "Book me a table at Nopa for 7pm",
        "Done: Nopa at 7pm.",
    ]
    assert len(window.messages) == len(BOOKING)
