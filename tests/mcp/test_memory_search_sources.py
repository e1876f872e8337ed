"""Issue 22 point 5 over MCP: the memory_search tool finds learnings and HISTORY entries,
labelled with their source, exactly as /memory/search does, and only the caller's own."""

from datetime import UTC, datetime

import pytest

from apps.learnings.services import learning_create
from apps.lifecycle.models import HistoryEntry

pytestmark = pytest.mark.django_db(transaction=True)


def test_memory_search_finds_learnings_and_history_with_their_source(
    connect, mcp, api, agent, other_key
):
    learning = learning_create(agent=agent, kind="error", content="rsync needs --partial here")
    learning_create(agent=agent, kind="correction", content="rsync pending", status="pending")
    history = HistoryEntry.objects.create(
        agent=agent,
        session_key="old",
        created_at=datetime(2026, 1, 31, 23, 0, tzinfo=UTC),
        content="Deployed the site with rsync",
    )

    searched = mcp.result("memory_search", {"query": "rsync"})

    assert searched == api.post("/memory/search", {"query": "rsync"}).json()
    assert sorted((i["source"], i["id"], i["name"]) for i in searched["items"]) == [
        ("history", history.pk, "HISTORY 2026-01-31 23:00"),
        ("learning", learning.pk, "learnings/errors.md"),
    ]
    # another agent's session finds none of them
    assert connect(other_key).result("memory_search", {"query": "rsync"}) == {
        "items": [],
        "degraded": [],
    }
