"""One agent can't see, read or change another agent's sessions: every endpoint says 404."""

import pytest

from apps.conversations.models import Message, Session
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def victim_session(session):
    MessageFactory.create_batch(3, session=session)
    return session


CALLS = [
    ("get", "", None),
    ("patch", "", {"title": "pwned"}),
    ("post", "/reset", {}),
    ("delete", "", None),
    ("post", "/messages", {"messages": [{"role": "user", "content": "injected"}]}),
    ("get", "/messages", None),
    ("get", "/window", None),
]
# An append by key to a key the agent has not used starts a session of its own (issue 41):
# that case is its own test below; by id it is a 404 like every other call.
CASES = [
    (ref_kind, *call)
    for ref_kind in ("id", "key")
    for call in CALLS
    if (ref_kind, call[0], call[1]) != ("key", "post", "/messages")
]


@pytest.mark.parametrize(("ref_kind", "method", "suffix", "body"), CASES)
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


def test_an_append_to_another_agents_key_starts_a_session_of_ones_own(
    api, other_api, victim_session
):
    message = {"role": "user", "content": "mine"}
    response = other_api.post(f"/sessions/{victim_session.key}/messages", {"messages": [message]})

    assert response.status_code == 201
    own = other_api.get(f"/sessions/{victim_session.key}").json()
    assert own["id"] != str(victim_session.id)
    assert [m["session_id"] for m in response.json()["messages"]] == [own["id"]]
    assert Message.objects.filter(session=victim_session).count() == 3
    victims = api.get(f"/sessions/{victim_session.key}/messages").json()["items"]
    assert len(victims) == 3
    assert "mine" not in [m["content"] for m in victims]
