"""Bad requests get a 4xx with a JSON detail naming the field, and write nothing."""

import pytest

from apps.conversations.models import Message

pytestmark = pytest.mark.django_db


def _append(api, session, messages):
    return api.post(f"/sessions/{session.id}/messages", {"messages": messages})


def _locs(response):
    return [tuple(e["loc"]) for e in response.json()["detail"]]


def test_unknown_role_is_422_naming_the_field(api, session):
    response = _append(api, session, [{"role": "robot", "content": "x"}])

    assert response.status_code == 422
    assert ("body", "payload", "messages", 0, "role") in _locs(response)
    assert Message.objects.count() == 0


def test_missing_content_is_422(api, session):
    response = _append(api, session, [{"role": "user"}])

    assert response.status_code == 422
    assert ("body", "payload", "messages", 0, "content") in _locs(response)


def test_null_content_without_tool_calls_is_422(api, session):
    response = _append(api, session, [{"role": "user", "content": None}])

    assert response.status_code == 422
    assert _locs(response) == [("body", "messages", 0, "content")]


def test_one_bad_message_rejects_the_whole_batch(api, session):
    batch = [{"role": "user", "content": f"ok {i}"} for i in range(5)]
    batch.insert(3, {"role": "user", "content": "bad", "created_at": "yesterday-ish"})

    response = _append(api, session, batch)

    assert response.status_code == 422
    assert ("body", "payload", "messages", 3, "created_at") in _locs(response)
    assert Message.objects.count() == 0


def test_unparseable_created_at_is_422(api, session):
    response = _append(api, session, [{"role": "user", "content": "x", "created_at": "2024-13-45"}])

    assert response.status_code == 422
    assert Message.objects.count() == 0


def test_importance_out_of_range_is_422(api, session):
    response = _append(api, session, [{"role": "user", "content": "x", "importance": 1.5}])

    assert response.status_code == 422
    assert ("body", "payload", "messages", 0, "importance") in _locs(response)


def test_content_over_the_limit_is_413_and_nothing_is_written(api, session):
    big = "x" * (256 * 1024 + 1)
    response = _append(
        api, session, [{"role": "user", "content": "fine"}, {"role": "user", "content": big}]
    )

    assert response.status_code == 413
    assert response.json()["loc"] == ["body", "messages", 1, "content"]
    assert "262144" in response.json()["detail"]
    assert Message.objects.count() == 0


def test_content_limit_is_a_per_agent_setting(api, session):
    api.patch("/agent/settings", {"settings": {"max_content_bytes": 10}})

    response = _append(api, session, [{"role": "user", "content": "01234567890"}])

    assert response.status_code == 413


def test_content_exactly_at_the_limit_is_accepted(api, session):
    response = _append(api, session, [{"role": "user", "content": "é" * (128 * 1024)}])

    assert response.status_code == 201


def test_more_than_1000_messages_is_413(api, session):
    batch = [{"role": "user", "content": "x"} for _ in range(1001)]

    response = _append(api, session, batch)

    assert response.status_code == 413
    assert Message.objects.count() == 0


def test_exactly_1000_messages_is_accepted(api, session):
    response = _append(api, session, [{"role": "user", "content": "x"} for _ in range(1000)])

    assert response.status_code == 201
    assert Message.objects.count() == 1000


def test_empty_batch_is_422(api, session):
    response = _append(api, session, [])

    assert response.status_code == 422


def test_malformed_json_is_400(api, session):
    response = api.post(f"/sessions/{session.id}/messages", raw='{"messages": [')

    assert response.status_code == 400
    assert response.json() == {"detail": "Cannot parse request body"}


def test_body_over_the_request_limit_is_413(api, session, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = _append(api, session, [{"role": "user", "content": "y" * 2000}])

    assert response.status_code == 413
    assert response.json() == {"detail": "request body is over 1000 bytes"}


def test_bad_session_key_is_422(api):
    response = api.post("/sessions", {"key": "has spaces/and slashes"})

    assert response.status_code == 422
    assert ("body", "payload", "key") in _locs(response)


def test_malformed_cursor_is_400(api, session):
    response = api.get(f"/sessions/{session.id}/messages", {"cursor": "!!!not-a-cursor"})

    assert response.status_code == 400
    assert _locs(response) == [("query", "cursor")]


def test_bad_query_parameters_are_422(api, session):
    assert api.get(f"/sessions/{session.id}/messages", {"role": "robot"}).status_code == 422
    assert api.get(f"/sessions/{session.id}/messages", {"after": "soon"}).status_code == 422
    assert api.get(f"/sessions/{session.id}/messages", {"limit": 0}).status_code == 422
    assert api.get("/sessions", {"limit": 10_000}).status_code == 422


def test_unknown_route_is_json_404(api):
    response = api.get("/no-such-thing")

    assert response.status_code == 404
