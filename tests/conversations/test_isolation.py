"""One agent can't see, read or change another agent's sessions: every endpoint says 404."""

import pytest

from apps.conversations.models import Message, Session
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def victim_session(session):
    MessageFactory.create_batch(3, session=session)
    return session


@pytest.mark.parametrize("ref_kind", ["id", "key"])
@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("get", "", None),
        ("patch", "", {"title": "pwned"}),
        ("post", "/reset", {}),
        ("delete", "", None),
        ("post", "/messages", {"messages": [{"role": "user", "content": "injected"}]}),
        ("get", "/messages", None),
        ("get", "/window", None),
    ],
)
def test_other_agents_session_is_404_everywhere(
    other_api, victim_session, ref_kind, method, suffix, body
):
    ref = victim_session.id if ref_kind == "id" else victim_session.key
    path = f"/sessions/{ref}{suffix}"
    call = getattr(other_api, method)

    response = call(path, body) if body is not None else call(path)

    assert response.status_code == 404
    assert response.json() == {"detail": "session not found"}
    victim_session.refresh_from_db()
    assert victim_session.title == ""
    assert Message.objects.filter(session=victim_session).count() == 3


def test_sessions_list_shows_only_own_sessions(api, other_api, victim_session):
    other_api.post("/sessions", {"key": "mine"})

    own = [s["key"] for s in other_api.get("/sessions").json()["items"]]

    assert own == ["mine"]
    assert [s["key"] for s in api.get("/sessions").json()["items"]] == ["chat-1"]


def test_same_session_key_for_two_agents_are_two_sessions(api, other_api, victim_session):
    response = other_api.post("/sessions", {"key": victim_session.key})

    assert response.status_code == 201
    assert response.json()["id"] != str(victim_session.id)
    assert Session.objects.filter(key=victim_session.key).count() == 2
