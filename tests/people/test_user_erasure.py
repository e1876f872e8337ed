"""Issue 26, point 4: DELETE /users/{user} erases every session, message, vector, fact (with
its versions), entry, learning, HISTORY entry and run of one end user, and nothing else. After
it no table holds a row of theirs, a key to one, or a word only they used, including the
BM25 and vector side tables; a search for that word finds nothing; the counts are what was
made; and one audit event names the user and the counts, and holds none of their words.

Committed for real (transaction=True): the embedding pipeline runs after each commit, so the
vectors and token states are there to be erased."""

import json
from urllib.parse import quote

import pytest
from django.db import connection

from apps.agents.models import AuditEvent
from apps.conversations.models import Session
from apps.facts.models import Fact
from apps.people.selectors import user_erasure_counts, user_erasures
from apps.people.services.erasure_audit import user_hmac
from apps.search.backends.base import fts_table
from tests.people import erasure_probe as probe
from tests.people.erasure_seed import Owner, seed

pytestmark = pytest.mark.django_db(transaction=True)

ERASED = "telegram:42"
KEPT = "mail:bob@example.com"
# What the seed makes for one user (tests/people/erasure_seed.py).
SEEDED = {
    "sessions": 2,
    "messages": 8 + 6,
    "summaries": 2,
    "facts": 2,  # the one saved, the one compaction extracted
    "fact_versions": 2 + 1,  # saved then updated; extracted
    "entries": 4,  # their MEMORY.md, the archive, their daily log, the note
    "entry_aliases": 1,
    "entry_changes": 5,  # MEMORY.md's add and write, the archive's add, the note's add, alias
    "learnings": 1,
    "history": 1,
    "runs": 5,  # compaction's summary, extraction and compaction; a summary; a consolidation
    "error_details": 0,  # no tool of theirs failed
}
# What the erasure clears besides: the agent's fact saved in their session loses the link.
CLEARED = {"provenance_cleared": 1, "audit_events_cleared": 0}


@pytest.fixture
def owners(api, agent):
    own = seed(api, Owner("", "albatross", "own"))
    erased = seed(api, Owner(ERASED, "zanzibar", "tg42"))
    kept = seed(api, Owner(KEPT, "quokka", "bob"))
    # Saved in the erased user's session for the agent (scope "agent"): it stays.
    shared = {"content": "The albatross is shared", "session_id": erased.session_ids[0]}
    response = api.post("/memory/save", {**shared, "scope": "agent"})
    assert response.status_code == 200, response.content
    return own, erased, kept


def _erase(api, user: str):
    return api.delete(f"/users/{quote(user, safe='')}")


def test_erasing_a_user_deletes_exactly_their_rows_and_answers_the_counts(api, agent, owners):
    theirs = probe.related(ERASED, {})
    before = probe.all_rows()
    preview = user_erasure_counts(agent=agent, user=ERASED).deletions()

    response = _erase(api, ERASED)

    assert response.status_code == 200
    assert response.json() == {"user": ERASED, "deleted": SEEDED | CLEARED, "vacuumed": False}
    assert preview == SEEDED
    after = probe.all_rows()
    gone = {m: ids for m, ids in ((m, before[m] - after[m]) for m in before) if ids}
    assert gone == theirs  # every row of theirs, and not one row of anyone else
    assert {m._meta.label for m in gone} >= {
        "conversations.MessageTokens",  # the vectors' token states went with their rows
        "facts.FactTokens",
        "lifecycle.HistoryEntryTokens",
    }


def test_nothing_of_the_user_is_left_in_any_table_or_side_table(api, agent, owners):
    theirs = probe.related(ERASED, {})
    assert probe.texts_with("zanzibar")  # the checks below can find what they look for
    assert set(probe.side_tables("zanzibar", theirs)) >= _side_tables_with_rows()

    assert _erase(api, ERASED).status_code == 200

    assert probe.leaks(ERASED, theirs) == {}
    assert probe.texts_with("zanzibar") == {}
    assert probe.texts_with(ERASED, skip=[AuditEvent]) == {}
    assert probe.side_tables("zanzibar", theirs) == {}
    # The kept user and the agent still find theirs.
    assert set(probe.side_tables("quokka", {})) >= _term_tables(pages=False)
    assert set(probe.side_tables("albatross", {})) >= _term_tables(pages=False)
    shared = Fact.objects.filter(value="The albatross is shared")
    assert list(shared.values_list("session", "user")) == [(None, "")]


def _term_tables(*, pages: bool = True) -> set[str]:
    """The tables holding an owner's word for every keyword corpus the seed fills; with
    `pages`, SQLite's index pages too, which hold "zanzibar" whole (a word may be stored
    as the suffix of the word before it)."""
    tables = ("conversations_message", "facts_fact", "entries_entry", "learnings_learning")
    tables += ("lifecycle_historyentry",)
    if connection.vendor != "sqlite":
        return {f"{t}_bm25term" for t in tables}
    found = {f"{fts_table(t)} match" for t in tables}
    return found | {f"{fts_table(t)}_data" for t in tables} if pages else found


def _side_tables_with_rows() -> set[str]:
    """Before the erasure, every side table holds the user's documents and vectors."""
    if connection.vendor == "sqlite":
        vectors = {"conversations_message_vec", "facts_fact_vec", "lifecycle_historyentry_vec"}
        return _term_tables() | vectors | {"conversations_message_content_trgm"}
    tables = ("conversations_message", "facts_fact", "entries_entry", "learnings_learning")
    tables += ("lifecycle_historyentry",)
    return _term_tables() | {f"{t}_bm25doc" for t in tables} | {f"{t}_bm25post" for t in tables}


def _words(body: dict) -> str:
    """The answer's text, without the query it repeats."""
    return json.dumps({k: v for k, v in body.items() if k != "query"}).lower()


def test_a_search_for_the_users_words_finds_nothing_afterwards(api, owners):
    every = {"all_users": True}  # every user's memory: what erasure left of anyone's
    searches = [
        ("/search", {"query": "zanzibar", "mode": "keyword", **every}),
        ("/search", {"query": "zanzibar", "mode": "contains", **every}),
        ("/search", {"query": "zanzibar", "mode": "hybrid", **every}),
        ("/memory/search", {"query": "zanzibar", **every}),
        ("/memory/recall", {"query": "zanzibar", **every}),
    ]
    found = [api.post(path, body) for path, body in searches]
    assert all(r.status_code == 200 for r in found), [r.content for r in found]
    assert all("zanzibar" in _words(r.json()) for r in found[:4])

    assert _erase(api, ERASED).status_code == 200

    for path, body in searches:
        response = api.post(path, body)
        assert response.status_code == 200
        assert "zanzibar" not in _words(response.json()), path
    hits = api.post("/search", {"query": "zanzibar", "mode": "keyword", **every}).json()["hits"]
    assert hits == []
    kept = api.post("/search", {"query": "quokka", "mode": "keyword", "k": 50, **every})
    kept = kept.json()["hits"]
    assert len(kept) == 14  # every message of the kept user


def test_one_audit_event_holds_the_counts_and_a_keyed_hash_not_the_user(api, agent, owners):
    assert _erase(api, ERASED).status_code == 200

    [event] = AuditEvent.objects.filter(agent=agent, action="user.erase")
    assert (event.source, event.username, event.object_type) == ("api", "agent", "user")
    assert event.before == {"user_hmac": user_hmac(agent_id=agent.pk, user=ERASED), **SEEDED,
                            **CLEARED}  # fmt: skip
    assert len(event.before["user_hmac"]) == 64  # SHA-256, hex
    assert event.after is None
    recorded = json.dumps([event.before, event.after, str(event)])
    assert "zanzibar" not in recorded
    assert ERASED not in recorded
    assert user_erasures(agent=agent, user=ERASED) == [event]
    assert user_erasures(agent=agent, user=KEPT) == []


def test_a_second_erasure_finds_nothing_and_answers_zeros(api, agent, owners):
    assert _erase(api, ERASED).status_code == 200

    again = _erase(api, ERASED)

    assert again.status_code == 200
    assert again.json() == {
        "user": ERASED,
        "deleted": dict.fromkeys(SEEDED | CLEARED, 0),
        "vacuumed": False,
    }
    assert Session.objects.filter(agent=agent, user=KEPT).count() == 2
