"""Histories stored before the append's tool rule (issue 41), written straight to the table
as the API used to accept them: to_openai_messages still replays each as a chat the strict
validator accepts, from /messages, /window and /context. A result without its call gets the
call recorded for it; a call without a result gets one saying none was recorded; a late
result goes back to its call."""

from datetime import UTC, datetime, timedelta

import pytest
from memoryhub_client.chat import NO_RESULT, to_openai_messages

from tests.factories import MessageFactory
from tests.support.openai_chat import problems, tool_call, validate

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)
LOOKUP = tool_call("c1", "lookup", '{"q": "paris"}')
WEATHER = tool_call("c2", "get_weather", "{}")


def stored(session, *rows):
    """Rows as the old API stored them, a second apart."""
    for i, (role, content, fields) in enumerate(rows):
        MessageFactory(
            session=session,
            role=role,
            content=content,
            created_at=T0 + timedelta(seconds=i),
            **fields,
        )


OLD = [
    ("user", "Push my branch.", {}),
    # the README's failing tool before the rule: no call, no tool_call_id
    ("tool", "rejected: non-fast-forward", {"tool_name": "git_push", "is_error": True}),
    # a result naming a call that was never stored
    ("tool", "42", {"tool_call_id": "ghost", "tool_name": "calc"}),
    ("assistant", "", {"tool_calls_json": [LOOKUP, WEATHER]}),
    ("tool", "Paris is in France.", {"tool_call_id": "c1", "tool_name": "lookup"}),
    # c2 is never answered; a user message comes before a late second answer of c1
    ("user", "And the weather?", {}),
    ("tool", "answered twice", {"tool_call_id": "c1", "tool_name": "lookup"}),
    ("assistant", "I could not check the weather.", {}),
]


def test_old_histories_replay_valid_and_keep_every_result(api, session):
    stored(session, *OLD)
    items = api.get(f"/sessions/{session.id}/messages").json()["items"]
    assert problems(
        [{k: v for k, v in m.items() if k in ("role", "content", "tool_call_id")} for m in items]
    )  # the stored history itself breaks the rules

    replayed = to_openai_messages(items)

    validate(replayed)
    push_id = f"call_unrecorded_{items[1]['id']}"
    assert replayed == [
        {"role": "user", "content": "Push my branch."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call(push_id, "git_push", "{}")],
        },
        {"role": "tool", "content": "rejected: non-fast-forward", "tool_call_id": push_id},
        {"role": "assistant", "content": None, "tool_calls": [tool_call("ghost", "calc", "{}")]},
        {"role": "tool", "content": "42", "tool_call_id": "ghost"},
        {"role": "assistant", "content": None, "tool_calls": [LOOKUP, WEATHER]},
        {"role": "tool", "content": "Paris is in France.", "tool_call_id": "c1"},
        {"role": "tool", "content": NO_RESULT, "tool_call_id": "c2"},
        {"role": "user", "content": "And the weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [tool_call("c1", "lookup", "{}")],
        },
        {"role": "tool", "content": "answered twice", "tool_call_id": "c1"},
        {"role": "assistant", "content": "I could not check the weather."},
    ]


def test_a_late_result_goes_back_to_its_call(api, session):
    stored(
        session,
        ("assistant", "", {"tool_calls_json": [LOOKUP]}),
        ("user", "hurry", {}),
        ("tool", "Paris is in France.", {"tool_call_id": "c1", "tool_name": "lookup"}),
    )
    items = api.get(f"/sessions/{session.id}/messages").json()["items"]

    assert to_openai_messages(items) == [
        {"role": "assistant", "content": None, "tool_calls": [LOOKUP]},
        {"role": "tool", "content": "Paris is in France.", "tool_call_id": "c1"},
        {"role": "user", "content": "hurry"},
    ]


@pytest.mark.parametrize("size", range(1, len(OLD) + 2))
def test_every_window_and_context_of_an_old_history_replays_valid(api, session, size):
    stored(session, *OLD)
    settings = {
        "max_history_messages": size,
        "window_includes_unsummarised": False,
        "recency_limit": size,
    }
    assert api.patch("/agent/settings", {"settings": settings}).status_code == 200

    window = api.get(f"/sessions/{session.id}/window").json()
    validate(to_openai_messages(window))
    whole = api.post("/context", {"session_id": str(session.id)}).json()
    for budget in range(1, whole["usage"]["required_tokens"] + 2):
        context = api.post("/context", {"session_id": str(session.id), "max_tokens": budget})
        assert context.status_code == 200, context.content
        validate(to_openai_messages(context.json()))
