from datetime import UTC, datetime, timedelta

import pytest

from apps.conversations.models import SessionMeta, Summary
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db

BASE = datetime(2024, 3, 1, tzinfo=UTC)


def _messages(session, n):
    return [
        MessageFactory(session=session, content=f"m{i}", created_at=BASE + timedelta(seconds=i))
        for i in range(n)
    ]


def test_window_is_the_last_16_messages(api, session):
    _messages(session, 20)

    body = api.get(f"/sessions/{session.id}/window").json()

    assert [m["content"] for m in body["messages"]] == [f"m{i}" for i in range(4, 20)]
    assert body["summary"] is None
    assert body["start_at"] is None


def test_window_starts_at_the_compaction_cutoff_and_carries_the_summary(api, session):
    _messages(session, 20)
    SessionMeta.objects.create(session=session, start_at=BASE + timedelta(seconds=15))
    Summary.objects.create(session=session, content="Earlier: greetings.")

    body = api.get(f"/sessions/{session.id}/window").json()

    assert [m["content"] for m in body["messages"]] == ["m15", "m16", "m17", "m18", "m19"]
    assert body["summary"] == "Earlier: greetings."
    assert body["start_at"] == "2024-03-01T00:00:15Z"


def test_window_size_is_a_per_agent_setting(api, session):
    _messages(session, 10)
    api.patch("/agent/settings", {"settings": {"max_history_messages": 3}})

    body = api.get(f"/sessions/{session.id}/window").json()

    assert [m["content"] for m in body["messages"]] == ["m7", "m8", "m9"]


def test_window_larger_than_working_memory_reads_the_database(api, session):
    _messages(session, 70)
    api.patch("/agent/settings", {"settings": {"max_history_messages": 60}})

    body = api.get(f"/sessions/{session.id}/window").json()

    assert len(body["messages"]) == 60
    assert body["messages"][0]["content"] == "m10"


@pytest.mark.django_db(transaction=True)
def test_window_is_fresh_after_append_and_reset(api, session):
    """Invalidation runs on commit, so this test commits for real."""
    _messages(session, 3)
    assert len(api.get(f"/sessions/{session.id}/window").json()["messages"]) == 3

    api.post(f"/sessions/{session.id}/messages", {"messages": [{"role": "user", "content": "new"}]})
    after_append = api.get(f"/sessions/{session.id}/window").json()["messages"]
    api.post(f"/sessions/{session.id}/reset")
    after_reset = api.get(f"/sessions/{session.id}/window").json()["messages"]

    assert [m["content"] for m in after_append] == ["m0", "m1", "m2", "new"]
    assert after_reset == []
