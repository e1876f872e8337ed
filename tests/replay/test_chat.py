"""to_openai_messages (clients/python/src/memoryhub_client/chat.py): memoryhub messages, as
dicts or objects, become OpenAI chat messages the strict validator accepts."""

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from memoryhub_client.chat import openai_tool_call, system_text, to_openai_messages
from pydantic import BaseModel

from tests.support.openai_chat import tool_call, validate

CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "book_flight", "arguments": '{"to": "Paris"}'},
}


def message(role, content="", **fields):
    base = {"name": "", "tool_call_id": None, "tool_name": None, "tool_calls": None}
    return {"role": role, "content": content, **base, **fields}


def test_each_role_maps_and_tool_calls_keep_their_ids():
    converted = to_openai_messages(
        [
            message("system", "Be brief."),
            message("user", "Book Paris.", name="alice"),
            message("assistant", "", tool_calls=[CALL]),
            message("tool", "AF123", tool_call_id="c1", tool_name="book_flight"),
            message("assistant", "Booked.", name="concierge"),
        ]
    )

    assert converted == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Book Paris.", "name": "alice"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "content": "AF123", "tool_call_id": "c1"},
        {"role": "assistant", "content": "Booked.", "name": "concierge"},
    ]
    validate(converted)


def test_an_assistant_text_beside_its_calls_is_kept():
    converted = to_openai_messages(
        [
            message("assistant", "Booking now.", tool_calls=[CALL]),
            message("tool", "AF123", tool_call_id="c1"),
        ]
    )

    assert converted == [
        {"role": "assistant", "content": "Booking now.", "tool_calls": [CALL]},
        {"role": "tool", "content": "AF123", "tool_call_id": "c1"},
    ]


@pytest.mark.parametrize(
    "stored",
    [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "book_flight", "arguments": {"to": "Paris"}},
        },
        {"id": "c1", "name": "book_flight", "arguments": {"to": "Paris"}},
        {"id": "c1", "name": "book_flight", "args": {"to": "Paris"}, "type": "tool_call"},
        {
            "call_id": "c1",
            "type": "function_call",
            "name": "book_flight",
            "arguments": '{"to": "Paris"}',
        },
        SimpleNamespace(
            id="c1", function=SimpleNamespace(name="book_flight", arguments='{"to": "Paris"}')
        ),
    ],
)
def test_tool_calls_in_other_shapes_take_openais(stored):
    assert openai_tool_call(stored) == CALL


def test_a_call_without_arguments_gets_an_empty_object():
    call = openai_tool_call({"id": "c9", "function": {"name": "now"}})

    assert call == {"id": "c9", "type": "function", "function": {"name": "now", "arguments": "{}"}}


@pytest.mark.parametrize(
    "bad", [{"function": {"name": "f"}}, {"id": "c1"}, {"id": "c1", "function": {}}]
)
def test_a_call_without_an_id_or_a_name_is_refused(bad):
    with pytest.raises(ValueError, match="needs an id and a function name"):
        openai_tool_call(bad)


def test_an_unknown_role_is_refused():
    with pytest.raises(ValueError, match="unknown role 'function'"):
        to_openai_messages([message("function", "x")])


def test_names_take_openais_alphabet_and_length():
    converted = to_openai_messages([message("user", "hi", name="Ana María <ops>/" + "x" * 60)])

    assert converted[0]["name"] == "Ana_Mar_a__ops__" + "x" * 48
    validate(converted)


def test_objects_with_the_fields_convert_like_dicts():
    """A stored Message's shape: tool calls under tool_calls_json."""
    stored = [
        SimpleNamespace(role="user", content="Book Paris.", name="", tool_call_id=None),
        SimpleNamespace(role="assistant", content="", name="", tool_calls_json=[CALL]),
        SimpleNamespace(role="tool", content="AF123", name="", tool_call_id="c1"),
    ]

    assert to_openai_messages(stored) == [
        {"role": "user", "content": "Book Paris."},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "content": "AF123", "tool_call_id": "c1"},
    ]


CONTEXT = {
    "session_id": "s",
    "system": {
        "parts": [
            {"kind": "document", "name": "SOUL.md", "content": "You are Ada.", "tokens": 4},
            {"kind": "summary", "name": "summary", "content": "We planned Paris.", "tokens": 4},
            {
                "kind": "recap",
                "name": "recap",
                "content": "[2024-05-01 10:00] user: hi",
                "tokens": 9,
            },
            {"kind": "learnings", "name": "learnings/errors.md", "content": "- retry", "tokens": 2},
        ],
        "facts": [{"id": 1, "category": "health", "key": "allergy", "value": "Peanuts"}],
        "tokens": 30,
    },
    "messages": [message("user", "And the hotel?")],
    "memory": [
        {
            "header": "Session Trip, Monday 8 May 2023",
            "messages": [
                message("user", "Find flights", created_at="2023-05-08T09:30:00Z", name="alice"),
                message("assistant", "", tool_calls=[CALL], created_at="2023-05-08T09:31:00Z"),
                message(
                    "tool",
                    "AF123",
                    tool_call_id="c1",
                    tool_name="book_flight",
                    created_at=datetime(2023, 5, 8, 9, 32, tzinfo=UTC),
                ),
            ],
        }
    ],
}
SYSTEM = """## SOUL.md
You are Ada.

## Summary of the conversation so far
We planned Paris.

## Recap of the messages before these
[2024-05-01 10:00] user: hi

## learnings/errors.md
- retry

## Facts
- [health] allergy: Peanuts

## From earlier conversations
### Session Trip, Monday 8 May 2023
[09:30] user (alice): Find flights
[09:31] assistant: [called book_flight({"to": "Paris"})]
[09:32] tool (book_flight): AF123"""


def test_a_whole_context_puts_parts_facts_and_memory_in_one_system_message():
    converted = to_openai_messages(CONTEXT)

    assert converted == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "And the hotel?"},
    ]
    assert system_text(CONTEXT["system"], CONTEXT["memory"]) == SYSTEM
    validate(converted)


def test_given_system_text_replaces_the_answers_and_memory_can_be_left_out():
    converted = to_openai_messages(CONTEXT, "You are Ada.", memory=[])

    assert converted[0] == {"role": "system", "content": "You are Ada."}
    assert to_openai_messages(CONTEXT["messages"]) == [
        {"role": "user", "content": "And the hotel?"}
    ]


def test_a_window_answer_replays_its_summary_and_recap():
    window = {"summary": "We planned Paris.", "recap": None, "messages": [message("user", "hi")]}

    assert to_openai_messages(window) == [
        {"role": "system", "content": "## Summary of the conversation so far\nWe planned Paris."},
        {"role": "user", "content": "hi"},
    ]


def test_a_model_object_answer_is_read_by_its_attributes():
    """A pydantic model iterates over its fields: it is still read as an answer."""

    class Answer(BaseModel):
        system: str
        messages: list[dict]

    converted = to_openai_messages(Answer(system="Be brief.", messages=[message("user", "hi")]))

    assert converted == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
    ]


def test_function_names_take_openais_alphabet_and_a_repeated_id_keeps_its_first_call():
    stored = [
        message(
            "assistant",
            "",
            tool_calls=[tool_call("c1", "mcp.git/push", "{}"), tool_call("c1", "other", "{}")],
        ),
        message("tool", "done", tool_call_id="c1"),
    ]

    converted = to_openai_messages(stored)

    assert converted == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call("c1", "mcp_git_push", "{}")],
        },
        {"role": "tool", "content": "done", "tool_call_id": "c1"},
    ]
    validate(converted)
