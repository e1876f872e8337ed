"""A conversation with tool calls, as an agent appends it: several calls in one assistant
turn, failing calls, a call-only turn (null content), names, and a system note. With the
OpenAI chat messages it must replay as, index for index."""

from tests.support.openai_chat import tool_call

TRIP = [
    tool_call("call_flight", "book_flight", '{"to": "Paris", "date": "2024-06-01"}'),
    tool_call(
        "call_hotel", "book_hotel", {"city": "Paris", "nights": 3}
    ),  # arguments stored as JSON
    tool_call("call_weather", "get_weather", '{"city": "Paris"}'),
]
HOTEL = [tool_call("call_hotel_2", "book_hotel", '{"city": "Paris", "nights": 3, "stars": 3}')]
CONFIRM = [
    tool_call("call_email", "send_email", '{"to": "alice@example.com"}'),
    tool_call("call_calendar", "add_to_calendar", '{"date": "2024-06-01"}'),
]

CONVERSATION = [
    {
        "role": "user",
        "name": "alice",
        "content": "Book me a flight to Paris on June 1st, "
        "a hotel for three nights, and check the weather.",
    },
    {"role": "assistant", "content": "Booking now.", "tool_calls": TRIP},
    {
        "role": "tool",
        "content": "Flight AF123 booked, seat 14A.",
        "tool_call_id": "call_flight",
        "tool_name": "book_flight",
    },
    {
        "role": "tool",
        "content": "error: no rooms left at Hotel du Nord",
        "is_error": True,
        "tool_call_id": "call_hotel",
        "tool_name": "book_hotel",
        "importance": 0.9,
    },
    {
        "role": "tool",
        "content": "Sunny, 24 degrees.",
        "tool_call_id": "call_weather",
        "tool_name": "get_weather",
    },
    {
        "role": "assistant",
        "name": "concierge",
        "content": "Flight AF123 is booked and it will be sunny, but Hotel du Nord is full.",
    },
    {"role": "user", "name": "alice", "content": "Try another hotel then."},
    {"role": "assistant", "content": None, "tool_calls": HOTEL, "importance": 0.9},
    {
        "role": "tool",
        "content": "Hotel Lumière booked for three nights.",
        "tool_call_id": "call_hotel_2",
        "tool_name": "book_hotel",
    },
    {"role": "assistant", "name": "concierge", "content": "Booked Hotel Lumière."},
    {"role": "system", "content": "The user prefers window seats."},
    {"role": "user", "content": "Thanks! Email me the confirmation."},
    {"role": "assistant", "content": "Sending the confirmation.", "tool_calls": CONFIRM},
    {
        "role": "tool",
        "content": "error: mailbox unavailable",
        "is_error": True,
        "tool_call_id": "call_email",
        "tool_name": "send_email",
    },
    {
        "role": "tool",
        "content": "Added to your calendar.",
        "tool_call_id": "call_calendar",
        "tool_name": "add_to_calendar",
    },
]

# The index of the call each tool result answers.
CALL_OF = {2: 1, 3: 1, 4: 1, 8: 7, 13: 12, 14: 12}


REPLAYED = [
    {"role": "user", "name": "alice", "content": CONVERSATION[0]["content"]},
    {
        "role": "assistant",
        "content": "Booking now.",
        "tool_calls": [
            TRIP[0],
            tool_call("call_hotel", "book_hotel", '{"city": "Paris", "nights": 3}'),
            TRIP[2],
        ],
    },
    {"role": "tool", "content": "Flight AF123 booked, seat 14A.", "tool_call_id": "call_flight"},
    {
        "role": "tool",
        "content": "error: no rooms left at Hotel du Nord",
        "tool_call_id": "call_hotel",
    },
    {"role": "tool", "content": "Sunny, 24 degrees.", "tool_call_id": "call_weather"},
    {"role": "assistant", "name": "concierge", "content": CONVERSATION[5]["content"]},
    {"role": "user", "name": "alice", "content": "Try another hotel then."},
    {"role": "assistant", "content": None, "tool_calls": HOTEL},
    {
        "role": "tool",
        "content": "Hotel Lumière booked for three nights.",
        "tool_call_id": "call_hotel_2",
    },
    {"role": "assistant", "name": "concierge", "content": "Booked Hotel Lumière."},
    {"role": "system", "content": "The user prefers window seats."},
    {"role": "user", "content": "Thanks! Email me the confirmation."},
    {"role": "assistant", "content": "Sending the confirmation.", "tool_calls": CONFIRM},
    {"role": "tool", "content": "error: mailbox unavailable", "tool_call_id": "call_email"},
    {"role": "tool", "content": "Added to your calendar.", "tool_call_id": "call_calendar"},
]


def append(api, session) -> list[str]:
    """The conversation appended through the API in one batch; the stored ids, in order."""
    response = api.post(f"/sessions/{session.id}/messages", {"messages": CONVERSATION})
    assert response.status_code == 201, response.content
    return [m["id"] for m in response.json()["messages"]]


def stored_fields(sent: dict) -> dict:
    """What the API returns of a message's replay fields, as it was appended."""
    return {
        "role": sent["role"],
        "name": sent.get("name", ""),
        "tool_call_id": sent.get("tool_call_id"),
        "tool_name": sent.get("tool_name"),
        "tool_calls": sent.get("tool_calls"),
    }


def replay_fields(message: dict) -> dict:
    return {
        key: message[key] for key in ("role", "name", "tool_call_id", "tool_name", "tool_calls")
    }
