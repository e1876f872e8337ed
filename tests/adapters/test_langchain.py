"""memoryhub_client.langchain.MemoryHubChatMessageHistory, a LangChain BaseChatMessageHistory,
against the live server: messages round-trip with roles, tool calls and names, memoryhub
stores them in its own shape, the async methods, and clear() as a session reset."""

import asyncio

import pytest
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory
from memoryhub_client import AsyncMemoryHub, Conflict, NotFound
from memoryhub_client.langchain import MemoryHubChatMessageHistory

from tests.support.openai_chat import tool_call


def _conversation():
    return [
        SystemMessage(content="You are a travel agent."),
        HumanMessage(content="Weather in Paris, then book?", name="alice"),
        AIMessage(
            content="",
            name="planner",
            id="ai-1",
            tool_calls=[
                {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"},
                {"name": "book", "args": {"city": "Paris", "nights": 2}, "id": "call_2"},
            ],
        ),
        ToolMessage(content="sunny", tool_call_id="call_1", name="get_weather"),
        ToolMessage(content="booked", tool_call_id="call_2", name="book"),
        AIMessage(content="Sunny, and booked for 2 nights."),
    ]


def test_a_conversation_round_trips_and_memoryhub_holds_it_in_its_own_shape(env, hub):
    history = MemoryHubChatMessageHistory(session_id="lc-trip")  # URL and key from the env
    assert isinstance(history, BaseChatMessageHistory)
    sent = _conversation()

    history.add_messages(sent)

    stored = list(hub.messages.list("lc-trip"))
    assert [(m.role, m.name, m.content) for m in stored] == [
        ("system", "", "You are a travel agent."),
        ("user", "alice", "Weather in Paris, then book?"),
        ("assistant", "planner", ""),
        ("tool", "", "sunny"),
        ("tool", "", "booked"),
        ("assistant", "", "Sunny, and booked for 2 nights."),
    ]
    assert stored[2].tool_calls == [
        tool_call("call_1", "get_weather", '{"city": "Paris"}'),
        tool_call("call_2", "book", '{"city": "Paris", "nights": 2}'),
    ]
    assert [(m.tool_call_id, m.tool_name, m.is_error) for m in stored[3:5]] == [
        ("call_1", "get_weather", False),
        ("call_2", "book", False),
    ]
    # Only what memoryhub has no field for goes to metadata: here the AIMessage's own id.
    assert [m.metadata for m in stored] == [{}, {}, {"langchain": {"id": "ai-1"}}, {}, {}, {}]

    # Each message reads back as it was added: with its id, or (added without one) none.
    assert history.messages == sent
    # A second history on the same session (a new process) reads the same.
    assert MemoryHubChatMessageHistory(session_id="lc-trip", client=hub).messages == sent


def test_what_memoryhub_has_no_field_for_round_trips_through_metadata(hub):
    history = MemoryHubChatMessageHistory(session_id="lc-extras", client=hub)
    sent = [
        HumanMessage(
            content=[
                {"type": "text", "text": "What is in this picture?"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            ],
            id="h-1",
        ),
        AIMessage(
            content="Let me look.",
            id="a-1",
            tool_calls=[{"name": "vision", "args": {"detail": "high"}, "id": "call_v"}],
            invalid_tool_calls=[
                invalid_tool_call(name="zoom", args="{not json", id="call_z", error=None)
            ],
            usage_metadata={"input_tokens": 12, "output_tokens": 5, "total_tokens": 17},
            response_metadata={"model_name": "gpt-test", "finish_reason": "tool_calls"},
            additional_kwargs={"refusal": None},
        ),
        ToolMessage(
            content="a cat",
            tool_call_id="call_v",
            name="vision",
            artifact={"boxes": [[1, 2, 3, 4]]},
            id="t-1",
        ),
        ToolMessage(
            content="zoom failed", tool_call_id="call_z", name="zoom", status="error", id="t-2"
        ),
        ChatMessage(content="Too verbose.", role="critic", name="reviewer", id="c-1"),
        FunctionMessage(content="42", name="answer", id="f-1"),
    ]

    history.add_messages(sent)

    assert history.messages == sent
    stored = list(hub.messages.list("lc-extras"))
    assert [(m.role, m.content) for m in stored] == [
        ("user", "What is in this picture?"),
        ("assistant", "Let me look."),
        ("tool", "a cat"),
        ("tool", "zoom failed"),
        ("user", "Too verbose."),
        ("assistant", ""),  # the call recorded for the FunctionMessage, which answers it
        ("tool", "42"),
    ]
    assert stored[1].tool_calls == [
        tool_call("call_v", "vision", '{"detail": "high"}'),
        tool_call("call_z", "zoom", "{not json"),
    ]
    assert [m.is_error for m in stored[2:4]] == [False, True]
    assert stored[4].name == "reviewer"
    assert stored[5].tool_calls == [tool_call(stored[6].tool_call_id, "answer", "{}")]
    assert stored[5].metadata == {"langchain": {"type": "recorded_call"}}
    assert stored[6].tool_name == "answer"


def test_messages_other_clients_appended_read_as_langchain_messages(hub):
    hub.sessions.create(key="lc-foreign")
    hub.messages.append(
        "lc-foreign",
        [
            {"role": "user", "content": "Book it", "name": "bob"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    tool_call("c9", "book", '{"when": "now"}'),
                    tool_call("c10", "x", "[1]"),
                ],
            },
            {"role": "tool", "content": "ok", "tool_call_id": "c9", "name": "book"},
        ],
    )

    # They have no LangChain id: memoryhub's message ids are not one.
    assert MemoryHubChatMessageHistory(session_id="lc-foreign", client=hub).messages == [
        HumanMessage(content="Book it", name="bob"),
        AIMessage(
            content="",
            tool_calls=[{"name": "book", "args": {"when": "now"}, "id": "c9"}],
            invalid_tool_calls=[invalid_tool_call(name="x", args="[1]", id="c10", error=None)],
        ),
        ToolMessage(content="ok", tool_call_id="c9", name="book"),
    ]


def test_the_async_methods_use_the_async_client(env, hub):
    history = MemoryHubChatMessageHistory(session_id="lc-async", user="alice")
    sent = _conversation()

    async def add_then_read():
        await history.aadd_messages(sent[:3])
        await history.aadd_messages(sent[3:])
        return await history.aget_messages()

    # Two event loops, one history: each loop gets its own connection pool.
    first = asyncio.run(add_then_read())
    stored = list(hub.messages.list("lc-async"))
    assert [m.content for m in stored] == [m.content for m in sent]
    assert first == sent
    assert asyncio.run(history.aget_messages()) == first
    assert hub.sessions.get("lc-async").user == "alice"

    asyncio.run(history.aclear())
    assert asyncio.run(history.aget_messages()) == []
    assert list(hub.messages.list("lc-async")) == []


def test_an_async_client_given_serves_the_async_methods_and_refuses_sync_ones(live_url, key):
    async def scenario():
        async with AsyncMemoryHub(live_url, key) as client:
            history = MemoryHubChatMessageHistory(session_id="lc-given", client=client)
            await history.aadd_messages([HumanMessage(content="hi", id="h")])
            return await history.aget_messages()

    assert asyncio.run(scenario()) == [HumanMessage(content="hi", id="h")]

    async def sync_use():
        async with AsyncMemoryHub(live_url, key) as client:
            return MemoryHubChatMessageHistory(session_id="lc-given", client=client).messages

    with pytest.raises(TypeError, match="AsyncMemoryHub"):
        asyncio.run(sync_use())


def test_a_sync_client_given_also_serves_the_async_methods(hub):
    history = MemoryHubChatMessageHistory(session_id="lc-thread", client=hub)
    asyncio.run(history.aadd_messages([HumanMessage(content="hello", id="h1")]))
    assert asyncio.run(history.aget_messages()) == [HumanMessage(content="hello", id="h1")]
    assert history.messages == [HumanMessage(content="hello", id="h1")]


def test_clear_is_a_session_reset(hub):
    history = MemoryHubChatMessageHistory(session_id="lc-clear", client=hub, title="Trip")
    history.add_messages(_conversation())

    history.clear()

    assert history.messages == []
    session = hub.sessions.get("lc-clear")  # the session stays, with its title
    assert session.title == "Trip"
    assert list(hub.messages.list("lc-clear")) == []
    # The reset kept the messages no consolidation covered in an Archive entry.
    archives = [e for e in hub.entries.list() if e.kind == "archive"]
    assert len(archives) == 1
    assert "Sunny, and booked for 2 nights." in hub.entries.get(archives[0].name).content

    history.add_messages([HumanMessage(content="again", id="x")])
    assert history.messages == [HumanMessage(content="again", id="x")]


def test_a_session_that_does_not_exist_reads_empty_and_is_not_created(hub):
    history = MemoryHubChatMessageHistory(session_id="lc-none", client=hub)
    assert history.messages == []
    assert asyncio.run(history.aget_messages()) == []
    history.clear()
    with pytest.raises(NotFound):
        hub.sessions.get("lc-none")


def test_a_session_removed_elsewhere_is_created_again_on_the_next_add(hub):
    history = MemoryHubChatMessageHistory(session_id="lc-gone", client=hub)
    history.add_messages([HumanMessage(content="one", id="1")])
    hub.sessions.delete("lc-gone")

    history.add_messages([HumanMessage(content="two", id="2")])

    assert history.messages == [HumanMessage(content="two", id="2")]


@pytest.mark.filterwarnings("ignore::langchain_core._api.deprecation.LangChainDeprecationWarning")
def test_runnable_with_message_history_replays_the_session_on_each_call(env, hub):
    recorded = []
    model = FakeMessagesListChatModel(
        responses=[AIMessage(content="Hello Alice.", id="r1"), AIMessage(content="Ramen.", id="r2")]
    )
    chain = RunnableLambda(lambda messages: recorded.append(messages) or messages) | model
    # LangChain asks the factory for a history on every call: each one is built afresh.
    with_history = RunnableWithMessageHistory(
        chain, lambda session_id: MemoryHubChatMessageHistory(session_id=session_id)
    )
    config = {"configurable": {"session_id": "lc-runnable"}}

    with_history.invoke("Hi, I am Alice and I like ramen.", config=config)
    answer = with_history.invoke("What do I like?", config=config)

    assert answer.content == "Ramen."
    stored = list(hub.messages.list("lc-runnable"))
    first_turn = [
        HumanMessage(content="Hi, I am Alice and I like ramen."),
        AIMessage(content="Hello Alice.", id="r1"),
    ]
    assert recorded[1] == [*first_turn, HumanMessage(content="What do I like?")]
    assert [(m.role, m.content) for m in stored] == [
        ("user", "Hi, I am Alice and I like ramen."),
        ("assistant", "Hello Alice."),
        ("user", "What do I like?"),
        ("assistant", "Ramen."),
    ]


def test_a_history_for_a_user_is_their_session_and_is_erased_with_them(hub):
    ana = MemoryHubChatMessageHistory(session_id="lc-ana", client=hub, user="ana")
    ben = MemoryHubChatMessageHistory(session_id="lc-ben", client=hub, user="ben")
    ana.add_messages(
        [HumanMessage(content="I am Ana, I live in Lisbon", id="1"), AIMessage(content="Noted.")]
    )
    ben.add_messages([HumanMessage(content="I am Ben", id="3")])

    assert (hub.sessions.get("lc-ana").user, hub.sessions.get("lc-ben").user) == ("ana", "ben")
    assert [s.key for s in hub.sessions.list(user="ana")] == ["lc-ana"]
    assert [s.key for s in hub.sessions.list(user="ben")] == ["lc-ben"]
    assert [h.content for h in hub.search("Lisbon", mode="contains", user="ana").hits] == [
        "I am Ana, I live in Lisbon"
    ]
    assert hub.search("Lisbon", mode="contains", user="ben").hits == []

    erased = hub.users.erase("ana")

    assert (erased.deleted.sessions, erased.deleted.messages) == (1, 2)
    with pytest.raises(NotFound):
        hub.sessions.get("lc-ana")
    assert ana.messages == []
    assert ben.messages == [HumanMessage(content="I am Ben", id="3")]
    # The next add starts the session again, hers again.
    ana.add_messages([HumanMessage(content="back", id="4")])
    assert hub.sessions.get("lc-ana").user == "ana"
    assert ana.messages == [HumanMessage(content="back", id="4")]


def test_a_history_naming_another_user_than_its_sessions_is_refused_and_stores_nothing(hub):
    MemoryHubChatMessageHistory(session_id="lc-owned", client=hub, user="ana").add_messages(
        [HumanMessage(content="mine", id="1")]
    )
    intruder = MemoryHubChatMessageHistory(session_id="lc-owned", client=hub, user="ben")

    with pytest.raises(Conflict) as refused:
        intruder.add_messages([HumanMessage(content="not yours", id="2")])

    assert refused.value.field == "user"
    assert [m.content for m in hub.messages.list("lc-owned")] == ["mine"]
    assert hub.sessions.get("lc-owned").user == "ana"
