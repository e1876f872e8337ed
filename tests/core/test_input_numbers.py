"""NaN, Infinity and numbers out of range in a JSON body: 422 naming the field.

Python's json reads NaN, Infinity, 1e400 (as inf) and any integer; PostgreSQL answered them
with a 500 and SQLite with a false 409. The body check refuses them before any schema.
"""

import pytest

from apps.conversations.models import Message, Session
from apps.facts.models import Fact

pytestmark = pytest.mark.django_db

BIG = "9" * 5000  # past Python's int-digits limit: int() itself raises ValueError

# (literal as sent, message)
NUMBERS = [
    ("NaN", "NaN is not a JSON number"),
    ("Infinity", "Infinity is not a JSON number"),
    ("-Infinity", "-Infinity is not a JSON number"),
    ("1e400", "number is out of range"),
    ("-1e400", "number is out of range"),
    ("9223372036854775808", "integer is out of range (64-bit)"),
    ("-9223372036854775809", "integer is out of range (64-bit)"),
    (BIG, "integer is out of range (64-bit)"),
]

# (method, path, raw body with {n} for the number, loc after "body")
SWEEP = [
    (
        "/sessions/{sid}/messages",
        '{{"messages": [{{"role": "user", "content": "x", "importance": {n}}}]}}',
        ["messages", 0, "importance"],
    ),
    (
        "/sessions/{sid}/messages",
        '{{"messages": [{{"role": "user", "content": "x", "metadata": {{"a": [1, {n}]}}}}]}}',
        ["messages", 0, "metadata", "a", 1],
    ),
    ("/facts", '{{"value": "v", "importance": {n}}}', ["importance"]),
    ("/memory/save", '{{"content": "c", "importance": {n}}}', ["importance"]),
    ("/memory/recall", '{{"query": "q", "k": {n}}}', ["k"]),
    ("/memory/search", '{{"query": "q", "k": {n}}}', ["k"]),
    ("/search", '{{"query": "q", "mode": "keyword", "min_score": {n}}}', ["min_score"]),
    ("/search", '{{"query": "q", "metadata": {{"x": {n}}}}}', ["metadata", "x"]),
    ("/search", '{{"query": "q", "k": {n}}}', ["k"]),
    ("/context", '{{"session_id": "chat-1", "max_tokens": {n}}}', ["max_tokens"]),
    ("/sessions", '{{"metadata": {{"n": {n}}}}}', ["metadata", "n"]),
    ("/errors", '{{"tool_name": "t", "error": "e", "context": {{"n": {n}}}}}', ["context", "n"]),
]


@pytest.mark.parametrize(("literal", "message"), NUMBERS, ids=[n[:12] for n, _ in NUMBERS])
@pytest.mark.parametrize(("path", "raw", "loc"), SWEEP)
def test_numbers_json_cannot_round_trip_are_422_naming_the_field(
    api, session, literal, message, path, raw, loc
):
    sessions = Session.objects.count()
    response = api.post(path.format(sid=session.id), raw=raw.format(n=literal))

    assert response.status_code == 422, response.content
    assert response.json() == {
        "detail": [{"loc": ["body", *loc], "msg": message, "type": "value_error"}]
    }
    assert (Message.objects.count(), Fact.objects.count()) == (0, 0)
    assert Session.objects.count() == sessions


def test_agent_settings_refuse_infinity_and_giant_ints(api):
    for literal in ("Infinity", "1e400", BIG):
        response = api.client.patch(
            "/api/v1/agent/settings",
            f'{{"settings": {{"recall_k": {literal}}}}}',
            content_type="application/json",
            headers=api._headers(),
        )

        assert response.status_code == 422
        assert response.json()["detail"][0]["loc"] == ["body", "settings", "recall_k"]


def test_a_nan_spelled_as_a_string_is_422_too(api):
    # Pydantic reads "NaN" into a float field in lax mode; the field type refuses it.
    response = api.post("/search", {"query": "q", "mode": "keyword", "min_score": "NaN"})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "payload", "min_score"]


def test_the_largest_64_bit_numbers_are_still_numbers(api, session):
    body = {
        "messages": [
            {
                "role": "user",
                "content": "x",
                "metadata": {"max": 2**63 - 1, "min": -(2**63), "half": 2.5},
            }
        ]
    }
    response = api.post(f"/sessions/{session.id}/messages", body)

    assert response.status_code == 201
    assert Message.objects.get().metadata == {
        "max": 2**63 - 1,
        "min": -(2**63),
        "half": 2.5,
    }


@pytest.mark.parametrize(
    ("method", "path", "detail"),
    [
        ("get", "/facts/99999999999999999999999", "fact not found"),
        ("get", "/facts/9223372036854775808/versions", "fact not found"),
        ("delete", "/facts/99999999999999999999999", "fact not found"),
        ("get", "/runs/99999999999999999999999", "run not found"),
        ("get", "/errors/99999999999999999999999", "error record not found"),
        ("get", "/learnings/99999999999999999999999", "learning not found"),
        ("get", "/sessions/99999999999999999999999", "session not found"),
    ],
)
def test_an_id_past_64_bits_in_the_path_is_a_plain_404(api, method, path, detail):
    response = getattr(api.client, method)(f"/api/v1{path}", headers=api._headers())

    assert response.status_code == 404
    assert response.json() == {"detail": detail}
