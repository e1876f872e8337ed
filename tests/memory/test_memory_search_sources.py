"""Issue 22 point 5: memory_search (seed 001: "across workspace files and the DB") also finds
learnings and HISTORY entries, each hit labelled with its source; pending learnings and
pending facts never come back, and another agent's rows never do."""

from datetime import UTC, datetime

import pytest

from apps.facts.models import Fact
from apps.facts.services import fact_save
from apps.learnings.services import learning_create
from apps.lifecycle.models import HistoryEntry

pytestmark = pytest.mark.django_db

AT = datetime(2026, 1, 31, 23, 0, tzinfo=UTC)


def memories(agent, word="rsync"):
    """One row of each searchable kind naming `word`, plus the ones that must stay hidden."""
    learning = learning_create(agent=agent, kind="error", content=f"{word} needs --partial here")
    learning_create(agent=agent, kind="correction", content=f"{word} pending", status="pending")
    learning_create(agent=agent, kind="correction", content=f"{word} retired", status="archived")
    history = HistoryEntry.objects.create(
        agent=agent, session_key="old", created_at=AT, content=f"Deployed the site with {word}"
    )
    pending = fact_save(agent=agent, content=f"Prefers {word} over scp", category="tools").fact
    Fact.objects.filter(pk=pending.pk).update(status="pending")
    return learning, history


def test_learnings_and_history_entries_are_found_with_their_source(api, agent, other_agent):
    learning, history = memories(agent)
    memories(other_agent)  # the same words, another agent's

    response = api.post("/memory/search", {"query": "rsync"})

    assert response.status_code == 200
    items = response.json()["items"]
    assert sorted((i["source"], i["id"], i["name"], i["content"]) for i in items) == [
        ("history", history.pk, "HISTORY 2026-01-31 23:00", "Deployed the site with rsync"),
        ("learning", learning.pk, "learnings/errors.md", "rsync needs --partial here"),
    ]
    assert all(set(i["legs"]) == {"bm25"} for i in items)


def test_a_pending_learning_is_found_once_approved(api, agent):
    pending = learning_create(
        agent=agent, kind="correction", content="Call me Sam", status="pending"
    )

    assert api.post("/memory/search", {"query": "Sam"}).json()["items"] == []
    api.patch(f"/learnings/{pending.pk}", {"status": "active"})
    items = api.post("/memory/search", {"query": "Sam"}).json()["items"]
    assert [(i["source"], i["name"]) for i in items] == [("learning", "learnings/corrections.md")]


def test_another_agent_finds_none_of_them(other_api, agent):
    memories(agent)

    assert other_api.post("/memory/search", {"query": "rsync"}).json() == {
        "items": [],
        "degraded": [],
    }
