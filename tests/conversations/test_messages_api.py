from datetime import UTC, datetime, timedelta

import pytest

from apps.conversations.models import Message

pytestmark = pytest.mark.django_db


LOOKUP = {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


def _append(api, session, *messages):
    return api.post(f"/sessions/{session.id}/messages", {"messages": list(messages)})


def test_append_batch_returns_stored_messages_in_order(api, session):
    response = _append(
        api,
        session,
        {"role": "user", "content": "Hi, I'm Caroline", "name": "Caroline"},
        {"role": "assistant", "content": "Hello Caroline!", "tool_calls": [LOOKUP]},
        {"role": "tool", "content": '{"ok": true}', "tool_call_id": "c1", "tool_name": "lookup"},
        {"role": "system", "content": "Be brief."},
    )

    body = response.json()
    assert response.status_code == 201
    assert body["created"] == 4
    assert body["deduplicated"] == 0
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "tool", "system"]
    assert [m["importance"] for m in body["messages"]] == [0.5, 0.5, 0.3, 0.1]
    assert body["messages"][1]["tool_calls"] == [LOOKUP]
    assert body["messages"][0]["name"] == "Caroline"
    stored = list(Message.objects.filter(session=session).order_by("created_at", "id"))
    assert [str(m.id) for m in stored] == [m["id"] for m in body["messages"]]
    assert stored[2].tool_call_id == "c1"
    assert stored[2].tool_name == "lookup"
    assert stored[0].token_count > 0
    assert stored[0].byte_size == len("Hi, I'm Caroline")
    assert stored[0].agent_id == session.agent_id


def test_agent_sets_importance_and_metadata(api, session):
    response = _append(
        api,
        session,
        {
            "role": "user",
            "content": "Remember: deploy on Fridays is banned",
            "importance": 0.95,
            "metadata": {"dia_id": "D1:3"},
        },
    )

    message = response.json()["messages"][0]
    assert message["importance"] == 0.95
    assert message["metadata"] == {"dia_id": "D1:3"}


def test_client_created_at_is_kept_with_microseconds_in_utc(api, session):
    response = _append(
        api,
        session,
        {"role": "user", "content": "old", "created_at": "2023-05-08T13:56:00.123456+02:00"},
        {"role": "user", "content": "naive means UTC", "created_at": "2023-05-08T13:56:00"},
    )

    stored = {m.content: m.created_at for m in Message.objects.filter(session=session)}
    assert response.status_code == 201
    assert response.json()["messages"][0]["created_at"] == "2023-05-08T11:56:00.123456Z"
    assert stored["old"] == datetime(2023, 5, 8, 11, 56, 0, 123456, tzinfo=UTC)
    assert stored["naive means UTC"] == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_assistant_tool_call_without_content(api, session):
    calls = [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
    response = _append(api, session, {"role": "assistant", "content": None, "tool_calls": calls})

    assert response.status_code == 201
    assert Message.objects.get(session=session).tool_calls_json == calls


def test_same_idempotency_key_twice_stores_one_row(api, session):
    msg = {"role": "user", "content": "once", "idempotency_key": "k-1"}

    first = _append(api, session, msg)
    second = _append(api, session, msg)

    assert first.status_code == second.status_code == 201
    assert second.json()["created"] == 0
    assert second.json()["deduplicated"] == 1
    assert second.json()["messages"][0]["id"] == first.json()["messages"][0]["id"]
    assert Message.objects.filter(session=session).count() == 1


def test_repeated_idempotency_key_inside_one_batch(api, session):
    msg = {"role": "user", "content": "twice", "idempotency_key": "k-2"}

    body = _append(api, session, msg, msg).json()

    assert body["created"] == 1
    assert body["messages"][0]["id"] == body["messages"][1]["id"]
    assert Message.objects.filter(session=session).count() == 1


def test_list_messages_filters_by_time_and_role_with_cursor(api, session):
    base = datetime(2024, 1, 1, tzinfo=UTC)
    _append(
        api,
        session,
        *[
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"m{i}",
                "created_at": (base + timedelta(minutes=i)).isoformat(),
            }
            for i in range(10)
        ],
    )

    after = (base + timedelta(minutes=1)).isoformat()
    before = (base + timedelta(minutes=8)).isoformat()
    page1 = api.get(
        f"/sessions/{session.id}/messages",
        {"after": after, "before": before, "role": "user", "limit": 2},
    ).json()
    page2 = api.get(
        f"/sessions/{session.id}/messages",
        {
            "after": after,
            "before": before,
            "role": "user",
            "limit": 2,
            "cursor": page1["next_cursor"],
        },
    ).json()

    assert [m["content"] for m in page1["items"]] == ["m2", "m4"]
    assert [m["content"] for m in page2["items"]] == ["m6"]
    assert page2["next_cursor"] is None


def test_list_messages_newest_first(api, session):
    _append(api, session, *[{"role": "user", "content": f"m{i}"} for i in range(3)])

    body = api.get(f"/sessions/{session.id}/messages", {"order": "desc"}).json()

    assert [m["content"] for m in body["items"]] == ["m2", "m1", "m0"]
