"""Issue 26's scopes: writes in a user's session belong to that user unless they say
"scope": "agent"; every output names its owner; a session_id with another `user` is 422; an
agent-wide call sees every user's memory only with `all_users` (issue 39; without it, the
agent's own: tests/users/test_safe_default.py)."""

import pytest

from apps.conversations.models import Session
from apps.entries.models import Entry
from apps.facts.models import Fact
from apps.learnings.models import Learning
from tests.users.world import AGENT, AGENT_MEMORY_MD, ALICE, CAROLINE, OPS_KEY, PEOPLE, World

pytestmark = pytest.mark.django_db


def _owners(world: World, kind: str) -> dict:
    """{id: "user" as the API shows it} for every `kind` row built: None for the agent's."""
    return {i.id: i.owner or None for i in world.items if i.kind == kind}


@pytest.mark.parametrize(
    ("kind", "path", "key"),
    [
        ("fact", "/facts", "id"),
        ("learning", "/learnings", "id"),
        ("history", "/memory/history", "id"),
        ("run", "/runs", "id"),
        ("session", "/sessions", "id"),
    ],
)
def test_an_all_users_listing_shows_every_row_with_its_owner(api, world: World, kind, path, key):
    response = api.get(path, {"limit": 100, "all_users": "true"})
    alone = api.get(path, {"limit": 100})

    assert response.status_code == 200
    assert {row[key]: row["user"] for row in response.json()["items"]} == _owners(world, kind)
    agents = {i: None for i, owner in _owners(world, kind).items() if owner is None}
    assert {row[key]: row["user"] for row in alone.json()["items"]} == agents


def test_entries_name_their_owner_and_one_name_is_one_entry_per_owner(api, world: World):
    items = api.get("/entries", {"limit": 100, "all_users": "1"}).json()["items"]

    shown = {e["id"]: e["user"] for e in items}
    assert {i: shown.get(i, "absent") for i in _owners(world, "entry")} == _owners(world, "entry")
    assert sorted(e["user"] or "" for e in items if e["name"] == "USER.md") == [
        ALICE.user,
        CAROLINE.user,
    ]
    assert sorted(e["user"] or "" for e in items if e["name"] == "MEMORY.md") == [
        AGENT,
        ALICE.user,
        CAROLINE.user,
    ]


def test_consolidating_a_users_session_writes_their_own_memory_md(api, agent, world: World):
    assert Entry.objects.get(agent=agent, user=AGENT, name="MEMORY.md").content == AGENT_MEMORY_MD
    for person in PEOPLE:
        own = Entry.objects.get(agent=agent, user=person.user, name="MEMORY.md").content
        assert f"- {person.messages[0]}" in own.splitlines()
        assert world.memory_md[person.user] == own


def test_the_agent_wide_call_with_all_users_finds_every_users_memory(api, world: World):
    every = {"all_users": True}
    for person in PEOPLE:
        [fact] = world.ids(person.user, "fact")
        for word in person.words:
            messages = world.containing(word, (person.user,), "message")
            body = {"query": word, "mode": "keyword", "k": 50, **every}
            hits = api.post("/search", body).json()["hits"]
            assert messages <= {h["id"] for h in hits}, word
            found = api.post("/memory/search", {"query": word, "k": 50, **every}).json()["items"]
            for kind in ["fact", "learning", "history"]:
                ids = {i["id"] for i in found if i["source"] == kind}
                assert world.containing(word, (person.user,), kind) <= ids, (word, kind)
        body = {"query": person.fact, "k": 20, **every}
        recalled = api.post("/memory/recall", body).json()["items"]
        assert fact in {h["fact"]["id"] for h in recalled}


def _calls(session: str, user: str) -> list:
    both = {"session_id": session, "user": user}
    return [
        ("post", "/context", {"lifecycle": "off", **both}),
        ("post", "/memory/save", {"content": "Erin likes tea", **both}),
        ("post", "/memory/recall", {"query": "tea", **both}),
        ("post", "/memory/search", {"query": "tea", **both}),
        ("post", "/search", {"query": "tea", **both}),
        ("post", "/learnings", {"kind": "correction", "content": "Erin, not Eryn", **both}),
        ("get", "/memory/history", both),
        ("get", "/runs", both),
    ]


@pytest.mark.parametrize(
    ("session", "user"),
    [
        (ALICE.session_key, CAROLINE.user),
        (CAROLINE.session_key, ALICE.user),
        (OPS_KEY, ALICE.user),
    ],
)
def test_a_session_id_with_another_user_is_422_and_writes_nothing(api, agent, world, session, user):
    counts = (Fact.objects.count(), Learning.objects.count(), Entry.objects.count())

    answers = {
        path: getattr(api, method)(path, body) for method, path, body in _calls(session, user)
    }

    statuses = {path: r.status_code for path, r in answers.items()}
    assert statuses == dict.fromkeys(answers, 422)
    assert {path: r.json()["detail"][0]["loc"][-1] for path, r in answers.items()} == dict.fromkeys(
        answers, "user"
    )
    assert (Fact.objects.count(), Learning.objects.count(), Entry.objects.count()) == counts


def test_a_session_id_with_its_own_user_is_accepted(api, world: World):
    both = {"session_id": ALICE.session_key, "user": ALICE.user}

    assert api.post("/context", {"lifecycle": "off", **both}).status_code == 200
    assert api.post("/search", {"query": "Lisbon", **both}).status_code == 200
    assert api.get("/memory/history", both).status_code == 200


def test_the_user_of_a_session_is_set_at_creation_and_never_changes(api, world: World):
    api.patch(f"/sessions/{ALICE.session_key}", {"title": "renamed", "user": CAROLINE.user})
    again = api.post("/sessions", {"key": "later", "user": ALICE.user})

    assert api.get(f"/sessions/{ALICE.session_key}").json()["user"] == ALICE.user
    assert Session.objects.get(key=ALICE.session_key).user == ALICE.user
    assert (again.status_code, again.json()["user"]) == (201, ALICE.user)
    assert api.get(f"/sessions/{OPS_KEY}").json()["user"] is None


@pytest.mark.parametrize("user", ["", "   ", "tele\x07gram", "x" * 201])
def test_a_bad_user_is_422(api, world: World, user):
    answers = [
        api.post("/sessions", {"key": "bad", "user": user}),
        api.post("/memory/search", {"query": "tea", "user": user}),
        api.get("/facts", {"user": user}),
    ]

    assert [r.status_code for r in answers] == [422, 422, 422]
    assert not Session.objects.filter(key="bad").exists()
