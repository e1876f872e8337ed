"""Issue 26's erasure: DELETE /users/{user} removes every session, message, fact (with its
versions), entry (with its aliases and changes), learning, HISTORY entry and run of that
user, answers the counts (which are what was created), and leaves an audit event with the
counts and a keyed hash of the user, no content. Afterwards no search finds any word of their
messages; the other user and the agent keep everything."""

import json
import re
from urllib.parse import urlencode

import pytest

from apps.agents.models import AuditEvent
from apps.conversations.models import Message, Session, Summary
from apps.entries.models import Entry, EntryAlias, EntryChange
from apps.facts.models import Fact, FactVersion
from apps.learnings.models import ErrorDetail, Learning
from apps.lifecycle.models import HistoryEntry, Run
from apps.people.services.erasure_audit import user_hmac
from tests.users.probes import SOURCES
from tests.users.world import ALICE, CAROLINE, Person, World

pytestmark = pytest.mark.django_db


def _rows(agent, user: str) -> dict[str, int]:
    """How many rows of each store belong to `user`."""
    facts = Fact.objects.filter(agent=agent, user=user)
    entries = Entry.objects.filter(agent=agent, user=user)
    return {
        "sessions": Session.objects.filter(agent=agent, user=user).count(),
        "messages": Message.objects.filter(agent=agent, session__user=user).count(),
        "summaries": Summary.objects.filter(session__agent=agent, session__user=user).count(),
        "facts": facts.count(),
        "fact_versions": FactVersion.objects.filter(fact__in=facts).count(),
        "entries": entries.count(),
        "entry_aliases": EntryAlias.objects.filter(agent=agent, user=user).count(),
        "entry_changes": EntryChange.objects.filter(agent=agent, user=user).count(),
        "learnings": Learning.objects.filter(agent=agent, user=user).count(),
        "history": HistoryEntry.objects.filter(agent=agent, user=user).count(),
        "runs": Run.objects.filter(agent=agent, user=user).count(),
        "error_details": ErrorDetail.objects.filter(agent=agent, user=user).count(),
    }


def _more_of(api, world: World, p: Person) -> None:
    """A rolling summary (with its run), an alias and a rewrite of the note, and a new
    version of the fact: rows of the stores that hang off sessions, entries and facts."""
    settings = {"settings": {"max_history_messages": 2}}
    assert api.patch("/agent/settings", settings).status_code == 200
    summary = api.post(f"/sessions/{p.session_key}/summarize").json()
    assert [(r["kind"], r["user"]) for r in summary["runs"]] == [("summary", p.user)]
    note = f"notes/{p.name.lower()}.md"
    user = {"user": p.user}
    assert (
        api.post(f"/entries/{note}/aliases", {"alias": f"{p.name}-note", **user}).status_code == 201
    )
    assert (
        api.put(f"/entries/{note}", {"content": p.note + "\nAnd more.", **user}).status_code == 200
    )
    [fact] = world.ids(p.user, "fact")
    # PATCH /facts takes `user` in its query (a body `user` is a 422, tests/core/test_input_keys.py)
    edited = api.patch(f"/facts/{fact}?{urlencode(user)}", {"value": p.fact + " a lot"})
    assert (edited.status_code, edited.json()["user"]) == (200, p.user)


def test_erasing_a_user_removes_their_rows_with_the_counts_created(
    api, agent, world: World, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _more_of(api, world, ALICE)
    created = {
        "sessions": 1,
        # and the request whose tool call failed, the failure, and the call recorded for it
        "messages": 2 * len(ALICE.messages) + 3,
        "summaries": 1,
        "facts": 1,
        "fact_versions": FactVersion.objects.filter(
            fact_id__in=world.ids(ALICE.user, "fact")
        ).count(),
        # the note, USER.md, MEMORY.md, and the daily log her fact went to
        "entries": 3
        + Entry.objects.filter(agent=agent, user=ALICE.user, name__startswith="memory/2").count(),
        "entry_aliases": 1,
        "entry_changes": EntryChange.objects.filter(agent=agent, user=ALICE.user).count(),
        "learnings": 1,
        "history": 1,
        "runs": 2,  # the consolidation's and the summary's
        "error_details": 2,  # her raw text of the failure: its error record's and learning's
    }
    assert created["fact_versions"] >= 1
    assert created["entry_changes"] >= 1
    assert _rows(agent, ALICE.user) == created
    caroline = _rows(agent, CAROLINE.user)
    agents_own = _rows(agent, "")

    response = api.delete(f"/users/{ALICE.user}")

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["user"] == ALICE.user
    # the agent's fact saved in her session stays, without the session (issue 39), and so
    # do the error record and the error learning of her failed call
    assert body["deleted"] == {**created, "provenance_cleared": 3, "audit_events_cleared": 0}
    assert _rows(agent, ALICE.user) == dict.fromkeys(created, 0)
    assert not Message.objects.filter(id__in=world.ids(ALICE.user, "message")).exists()
    assert _rows(agent, CAROLINE.user) == caroline
    assert _rows(agent, "") == agents_own


def test_the_audit_event_holds_the_counts_and_neither_the_user_nor_content(
    api, agent, world: World
):
    before = set(AuditEvent.objects.values_list("pk", flat=True))

    deleted = api.delete(f"/users/{ALICE.user}").json()["deleted"]

    [event] = AuditEvent.objects.exclude(pk__in=before)
    recorded = json.dumps([event.action, event.object_type, event.object_id, event.before,
                           event.after]).lower()  # fmt: skip
    assert event.agent_id == agent.pk
    assert ALICE.user not in recorded  # a keyed hash instead (issue 39)
    assert event.before["user_hmac"] == user_hmac(agent_id=agent.pk, user=ALICE.user)
    assert [k for k, v in deleted.items() if f'"{k}": {v}' not in recorded] == []
    for text in [*ALICE.words, *ALICE.messages, ALICE.fact, ALICE.note, ALICE.correction]:
        assert text.lower() not in recorded


KINDS = ("message", "fact", "entry", "learning", "history")
EVERY = {"all_users": True}  # every user's memory: what erasure left of anyone's


def _left_of(api, word: str, gone: dict[str, set], distinctive: bool) -> list[tuple]:
    """What the searches for `word` still find of the erased rows (by id); for a word only
    the erased user said, also any hit of keyword or contains search and any memory item
    with the word."""
    left = []
    for mode in ["keyword", "contains", "hybrid", "semantic"]:
        hits = api.post("/search", {"query": word, "mode": mode, "k": 100, **EVERY}).json()["hits"]
        exact = distinctive and mode in ("keyword", "contains")
        left += [(word, mode, h["content"]) for h in hits if exact or h["id"] in gone["message"]]
    for item in api.post("/memory/search", {"query": word, "k": 100, **EVERY}).json()["items"]:
        if item["id"] in gone[SOURCES[item["source"]]] or (
            distinctive and word.lower() in item["content"].lower()
        ):
            left.append((word, "memory/search", item["content"]))
    history = api.get("/memory/history", {"q": word, "limit": 100, **EVERY}).json()["items"]
    left += [(word, "history", h["content"]) for h in history if h["id"] in gone["history"]]
    entries = api.get("/entries/search", {"q": word, "limit": 200, **EVERY}).json()["items"]
    left += [(word, "entries", e["entry"]["name"]) for e in entries
             if e["entry"]["id"] in gone["entry"]]  # fmt: skip
    return left


def test_after_erasure_no_search_finds_a_word_of_the_users_messages(api, agent, world: World):
    gone = {kind: world.ids(ALICE.user, kind) for kind in KINDS}
    words = sorted({w for line in ALICE.messages for w in re.findall(r"[A-Za-z]+", line)})

    assert api.delete(f"/users/{ALICE.user}").status_code == 200

    assert [left for w in words for left in _left_of(api, w, gone, w in ALICE.words)] == []
    recalled = api.post("/memory/recall", {"query": ALICE.fact, "k": 100, **EVERY}).json()["items"]
    assert {h["fact"]["id"] for h in recalled} & gone["fact"] == set()
    # the other user's messages are all still found
    for word in CAROLINE.words:
        body = {"query": word, "mode": "keyword", "k": 100, **EVERY}
        hits = api.post("/search", body).json()["hits"]
        assert world.containing(word, (CAROLINE.user,), "message") <= {h["id"] for h in hits}


def test_erasing_a_user_of_another_agent_touches_nothing_here(api, other_api, agent, world):
    before = _rows(agent, ALICE.user)

    response = other_api.delete(f"/users/{ALICE.user}")

    assert response.status_code == 200
    assert set(response.json()["deleted"].values()) == {0}
    assert _rows(agent, ALICE.user) == before


@pytest.mark.parametrize("user", ["%20", "x" * 201])
def test_erasing_a_bad_user_name_is_422(api, agent, world, user):
    assert api.delete(f"/users/{user}").status_code == 422
