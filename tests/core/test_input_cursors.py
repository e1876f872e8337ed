"""Cursors are opaque and signed per listing: a crafted, tampered, foreign or malformed
cursor answers 400 naming `cursor` (a crafted one used to be a 500)."""

import base64
import json

import pytest

from apps.core.errors import BadRequest
from apps.core.pagination import encode_cursor
from apps.review.selectors import parse_cursor
from tests.factories import SessionFactory

pytestmark = pytest.mark.django_db

LISTINGS = [
    "/sessions",
    "/sessions/{sid}/messages",
    "/facts",
    "/entries",
    "/runs",
    "/memory/history",
    "/errors",
    "/learnings",
]


def _old_style(values) -> str:
    """The unsigned base64-JSON cursor this API used to hand out (and trust)."""
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode().rstrip("=")


CRAFTED = [
    "garbage",
    "!!!not-a-cursor",
    "12",
    "-1",
    "9" * 5000,
    "1" * 501,
    _old_style(["2026-01-01T00:00:00+00:00", "1"]),
    _old_style(["0001-01-01T00:00:00+20:00", "x"]),
    _old_style([str(10**30)]),
    encode_cursor(["2026-01-01T00:00:00+00:00", "1"]),  # signed, but for another purpose
    "a:b:c",
    "\u00e9\u00e9:\u00e9",
]


@pytest.mark.parametrize("cursor", CRAFTED, ids=range(len(CRAFTED)))
@pytest.mark.parametrize("path", LISTINGS)
def test_a_crafted_cursor_is_400_naming_cursor(api, session, path, cursor):
    response = api.get(path.format(sid=session.id), {"cursor": cursor})

    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert [e["loc"] for e in detail] == [["query", "cursor"]]


def _two_pages(api, path):
    first = api.get(path, {"limit": 1}).json()
    assert first["next_cursor"] is not None
    return first


def _seed(api, session):
    api.post(f"/sessions/{session.id}/messages", {"messages": [{"role": "user", "content": "a"}]})
    api.post(f"/sessions/{session.id}/messages", {"messages": [{"role": "user", "content": "b"}]})
    api.post("/facts", {"value": "one"})
    api.post("/facts", {"value": "two"})
    api.post("/entries", {"name": "a.md", "content": "a"})
    api.post("/entries", {"name": "b.md", "content": "b"})
    SessionFactory(agent=session.agent, key="chat-2")


PAGED = ["/sessions", "/sessions/{sid}/messages", "/facts", "/entries"]


@pytest.mark.parametrize("path", PAGED)
def test_a_cursor_pages_on(api, session, path):
    _seed(api, session)
    path = path.format(sid=session.id)
    first = _two_pages(api, path)
    second = api.get(path, {"limit": 1, "cursor": first["next_cursor"]})

    assert second.status_code == 200
    assert second.json()["items"] != first["items"]
    assert len(second.json()["items"]) == 1


@pytest.mark.parametrize("path", PAGED)
def test_a_tampered_cursor_is_400(api, session, path):
    _seed(api, session)
    path = path.format(sid=session.id)
    cursor = _two_pages(api, path)["next_cursor"]
    payload, signature = cursor.rsplit(":", 1)
    flipped = payload[:-1] + ("A" if payload[-1] != "A" else "B")

    for bad in (f"{flipped}:{signature}", f"{payload}:{signature[:-1]}", payload):
        response = api.get(path, {"cursor": bad})
        assert response.status_code == 400, bad
        assert response.json() == {
            "detail": [{"loc": ["query", "cursor"], "msg": "invalid cursor", "type": "value_error"}]
        }


@pytest.mark.parametrize(("source", "target"), [(a, b) for a in PAGED for b in PAGED if a != b])
def test_a_cursor_from_another_listing_is_400(api, session, source, target):
    _seed(api, session)
    cursor = _two_pages(api, source.format(sid=session.id))["next_cursor"]

    response = api.get(target.format(sid=session.id), {"cursor": cursor})

    assert response.status_code == 400


def test_another_agents_cursor_shows_nothing_of_theirs(api, other_api, session):
    _seed(api, session)
    cursor = _two_pages(api, "/facts")["next_cursor"]

    response = other_api.get("/facts", {"cursor": cursor})

    assert response.status_code == 200
    assert response.json() == {"items": [], "next_cursor": None}


@pytest.mark.parametrize(
    "values",
    [
        ["yesterday", "00000000-0000-0000-0000-000000000001"],
        ["2026-01-05T09:00:00+00:00", "not-a-uuid"],
        ["2026-01-05T09:00:00+00:00"],
    ],
)
def test_the_review_timeline_reads_its_cursors_as_the_api_does(values):
    # One cursor codec: a signed cursor that holds no (time, id) is 400 naming `cursor`
    # in the review pages too (their own reader used to answer 422).
    with pytest.raises(BadRequest) as caught:
        parse_cursor(encode_cursor(values))

    assert (caught.value.message, caught.value.loc) == ("invalid cursor", ["query", "cursor"])
