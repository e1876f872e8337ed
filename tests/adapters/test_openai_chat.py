"""What the adapters store reads as a valid OpenAI chat list: each session's messages and its
/window, through memoryhub_client.chat.to_openai_messages, pass the strict validator of
OpenAI's rules (tests/support/openai_chat.py), tool calls and their answers included."""

import asyncio

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from memoryhub_client.agents import MemoryHubSession
from memoryhub_client.chat import to_openai_messages
from memoryhub_client.langchain import MemoryHubChatMessageHistory

from tests.adapters.test_agents import FIRST_RUN_ITEMS, MIXED_ITEMS
from tests.support.openai_chat import validate


def test_an_agents_sdk_session_replays_as_a_valid_chat(hub):
    session = MemoryHubSession(session_id="chat-agents", client=hub)
    asyncio.run(session.add_items([*FIRST_RUN_ITEMS, *MIXED_ITEMS]))

    listed = to_openai_messages(list(hub.messages.list("chat-agents")))
    windowed = to_openai_messages(hub.window("chat-agents"))

    validate(listed)
    validate(windowed)
    assert [m["role"] for m in listed] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "system",
        "user",
        "assistant",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    assert [c["id"] for c in listed[7]["tool_calls"]] == ["c_a", "c_b"]
    assert [m.get("tool_call_id") for m in listed[8:10]] == ["c_a", "c_b"]
    assert windowed[-len(listed) :] == listed


def test_a_langchain_history_replays_as_a_valid_chat(hub):
    history = MemoryHubChatMessageHistory(session_id="chat-langchain", client=hub)
    history.add_messages(
        [
            SystemMessage(content="Be brief."),
            HumanMessage(content="Book Paris", name="alice"),
            AIMessage(
                content="",
                tool_calls=[{"name": "book", "args": {"city": "Paris"}, "id": "call_1"}],
            ),
            ToolMessage(content="booked", tool_call_id="call_1", name="book"),
            AIMessage(content="Booked."),
        ]
    )

    chat = to_openai_messages(list(hub.messages.list("chat-langchain")))

    validate(chat)
    assert chat[2]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "book", "arguments": '{"city": "Paris"}'},
        }
    ]
    assert chat[3] == {"role": "tool", "content": "booked", "tool_call_id": "call_1"}
