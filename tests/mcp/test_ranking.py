"""Issue 24: the MCP tools rank as the API does (one hybrid ranking, reranked by default)."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.conversations.services import NewMessage, messages_append
from tests.factories import SessionFactory

pytestmark = pytest.mark.django_db(transaction=True)

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
TURNS = [
    "violin violin violin practice every morning",
    "The concert hall was cold.",
    "Tickets for the violin concert in Lisbon are sold out.",
    "Lisbon Lisbon, what a lovely old city",
    "We bought bread at the market.",
]


def test_search_chat_history_is_the_reranked_hybrid_search(mcp, api, agent):
    session = SessionFactory(agent=agent, key="chat-1")
    messages_append(
        session=session,
        messages=[
            NewMessage(role="user", content=t, created_at=T0 + timedelta(minutes=i))
            for i, t in enumerate(TURNS)
        ],
    )  # committed: the (eager) embedding task wrote vectors and token states
    body = {"query": "violin concert tickets Lisbon", "mode": "hybrid", "k": 10}

    found = mcp.result("search_chat_history", body)

    assert found == api.post("/search", body).json()
    assert found["hits"][0]["content"] == TURNS[2]
    assert all("rerank" in h["legs"] for h in found["hits"])
