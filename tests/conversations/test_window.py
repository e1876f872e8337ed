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
    """Seed 000's plain window: window_includes_unsummarised off."""
    _messages(session, 20)
    api.patch("/agent/settings", {"settings": {"window_includes_unsummarised": False}})

    body = api.get(f"/sessions/{session.id}/window").json()

    assert [m["content"] for m in body["messages"]] == [f"m{i}" for i in range(4, 20)]
    assert (body["summary"], body["start_at"], body["unsummarised"], body["recap"]) == (
        None,
        None,
        0,
        None,
    )


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
    settings = {"max_history_messages": 3, "window_includes_unsummarised": False}
    api.patch("/agent/settings", {"settings": settings})

    body = api.get(f"/sessions/{session.id}/window").json()

    assert [m["content"] for m in body["messages"]] == ["m7", "m8", "m9"]


def test_window_larger_than_working_memory_reads_the_database(api, session):
    _messages(session, 70)
    settings = {"max_history_messages": 60, "window_includes_unsummarised": False}
    api.patch("/agent/settings", {"settings": settings})

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


# --- the messages that left the window, until the summary covers them (issue 22) -------------
def _window(api, session):
    body = api.get(f"/sessions/{session.id}/window").json()
    return [m["content"] for m in body["messages"]], body["unsummarised"]


def _summarised_through(session, message):
    SessionMeta.objects.update_or_create(
        session=session,
        defaults={"summary_cursor": message.created_at, "summary_cursor_id": message.id},
    )


def test_window_carries_what_left_it_while_no_summary_covers_it(api, session):
    _messages(session, 20)

    assert _window(api, session) == ([f"m{i}" for i in range(20)], 4)


def test_window_reaches_back_to_the_summary_cursor_only(api, session):
    rows = _messages(session, 20)
    _summarised_through(session, rows[1])

    assert _window(api, session) == ([f"m{i}" for i in range(2, 20)], 2)


def test_window_is_seed_000s_once_the_summary_covers_what_left(api, session):
    rows = _messages(session, 20)
    _summarised_through(session, rows[3])

    assert _window(api, session) == ([f"m{i}" for i in range(4, 20)], 0)


def test_unsummarised_messages_in_the_window_are_capped(api, session):
    _messages(session, 20)
    api.patch("/agent/settings", {"settings": {"window_unsummarised_max": 3}})

    assert _window(api, session) == ([f"m{i}" for i in range(1, 20)], 3)


def test_unsummarised_messages_past_working_memory_come_from_the_database(api, session):
    rows = _messages(session, 100)  # working memory holds the newest 50
    _summarised_through(session, rows[9])  # m10..m83 left the window unsummarised: 74

    contents, unsummarised = _window(api, session)

    assert contents == [f"m{i}" for i in range(20, 100)]  # the newest 64 of them
    assert unsummarised == 64


def test_window_never_reaches_behind_the_compact_marker(api, session):
    _messages(session, 30)
    SessionMeta.objects.create(session=session, start_at=BASE + timedelta(seconds=5))

    assert _window(api, session) == ([f"m{i}" for i in range(5, 30)], 9)
