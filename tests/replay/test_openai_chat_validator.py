"""The strict validator of OpenAI's chat rules (tests/support/openai_chat.py) accepts what
the API accepts and rejects each rule broken, the issue's "Booking now." case first."""

import pytest

from tests.support.openai_chat import InvalidChat, problems, tool_call, validate


def call(ident, name="book_flight", arguments='{"to": "Paris"}'):
    return tool_call(ident, name, arguments)


def tool(ident, content="ok"):
    return {"role": "tool", "content": content, "tool_call_id": ident}


GOOD = [
    {"role": "system", "content": "You book trips.", "name": "planner"},
    {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
    {"role": "user", "content": "Flight and hotel, please.", "name": "alice"},
    {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2", "book_hotel")]},
    tool("c2", "no rooms"),
    tool("c1", "AF123"),
    {"role": "assistant", "content": "Booked AF123; no rooms.", "name": "concierge"},
    {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
    {"role": "assistant", "tool_calls": [call("c3", "get_weather", "{}")]},
    tool("c3", "sunny"),
]


def test_a_valid_conversation_with_tool_turns_passes():
    assert problems(GOOD) == []
    validate(GOOD)
    validate([{"role": "user", "content": ""}])


def test_the_issues_booking_now_case_is_rejected():
    """/context used to drop tool_calls: the assistant's call is gone, its result orphaned."""
    stripped = [
        {"role": "user", "content": "Book a flight to Paris."},
        {"role": "assistant", "content": "Booking now."},
        {"role": "tool", "content": "Flight AF123 booked", "tool_call_id": "call_1"},
    ]

    with pytest.raises(InvalidChat) as caught:
        validate(stripped)

    assert caught.value.problems == ["[2] tool: no assistant tool call precedes it"]


BAD = [
    ([], ["messages must be a non-empty list"]),
    ({"role": "user"}, ["messages must be a non-empty list"]),
    (["hi"], ["[0] is not an object"]),
    (
        [{"role": "function", "content": "x"}],
        ["[0] role 'function' is not one of ['assistant', 'developer', 'system', 'tool', 'user']"],
    ),
    ([{"role": "user"}], ["[0] user: content is required"]),
    (
        [{"role": "user", "content": 3}],
        ["[0] user: content must be a string or a non-empty list of parts"],
    ),
    (
        [{"role": "system", "content": [{"type": "image_url", "image_url": {}}]}],
        ["[0] system: content part 0 of type 'image_url' is not allowed"],
    ),
    (
        [{"role": "user", "content": [{"type": "text", "text": None}]}],
        ["[0] user: content part 0 needs a string 'text'"],
    ),
    ([{"role": "assistant", "content": None}], ["[0] assistant: content is required"]),
    (
        [{"role": "user", "content": "x", "tool_call_id": "c1"}],
        ["[0] user: unknown key 'tool_call_id'"],
    ),
    (
        [{"role": "user", "content": "x", "name": "Alice Smith"}],
        ["[0] user: name 'Alice Smith' is not allowed"],
    ),
    (
        [{"role": "user", "content": "x", "name": "a" * 65}],
        [f"[0] user: name '{'a' * 65}' is not allowed"],
    ),
    (
        [{"role": "user", "content": "x"}, {**tool("c1"), "name": "book_flight"}],
        [
            "[1] tool: unknown key 'name'",
            "[1] tool: no assistant tool call precedes it",
        ],
    ),
    (
        [{"role": "assistant", "content": "x", "tool_calls": []}],
        ["[0] assistant: tool_calls must be a non-empty list"],
    ),
    (
        [
            {"role": "assistant", "content": None, "tool_calls": [call("c1")]},
            {"role": "tool", "content": "ok"},
        ],
        [
            "[1] tool: tool_call_id is required",
            "[1] tool: None is not an unanswered call of message [0]",
            "[0] assistant: call 'c1' has no tool message",
        ],
    ),
    (
        [{"role": "assistant", "content": None, "tool_calls": [call("c1")]}, tool("c2")],
        [
            "[1] tool: 'c2' is not an unanswered call of message [0]",
            "[0] assistant: call 'c1' has no tool message",
        ],
    ),
    (
        [
            {"role": "assistant", "content": None, "tool_calls": [call("c1")]},
            tool("c1"),
            tool("c1"),
        ],
        ["[2] tool: 'c1' is not an unanswered call of message [0]"],
    ),
    (
        [
            {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2")]},
            tool("c1"),
            {"role": "user", "content": "and?"},
            tool("c2"),
        ],
        [
            "[0] assistant: call 'c2' has no tool message",
            "[3] tool: no assistant tool call precedes it",
        ],
    ),
    (
        [{"role": "assistant", "content": None, "tool_calls": [call("c1")]}],
        ["[0] assistant: call 'c1' has no tool message"],
    ),
    (
        [
            {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c1")]},
            tool("c1"),
        ],
        ["[0] assistant: tool_calls[1]: id 'c1' is repeated"],
    ),
    (
        [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {}}]}],
        ["[0] assistant: tool_calls[0] must have exactly id, type and function"],
    ),
    (
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "custom", "function": {"name": "f", "arguments": {}}}
                ],
            },
            tool("c1"),
        ],
        [
            "[0] assistant: tool_calls[0]: type must be 'function'",
            "[0] assistant: tool_calls[0]: arguments must be a string (JSON text)",
        ],
    ),
    (
        [
            {"role": "assistant", "content": None, "tool_calls": [call("c1", "web.search")]},
            tool("c1"),
        ],
        ["[0] assistant: tool_calls[0]: function name 'web.search' is not allowed"],
    ),
    (
        [{"role": "assistant", "content": None, "tool_calls": [call("")]}],
        ["[0] assistant: tool_calls[0]: id must be a non-empty string"],
    ),
]


@pytest.mark.parametrize(("messages", "expected"), BAD)
def test_each_broken_rule_is_reported(messages, expected):
    assert problems(messages) == expected
    with pytest.raises(InvalidChat):
        validate(messages)
