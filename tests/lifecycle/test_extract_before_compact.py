"""Seed 001: nothing is compacted before its facts are extracted. Every compaction (write-
then-compact and the size compaction) extracts what it would archive first, and while the
agent's lease is held elsewhere it never cuts past the flush cursor; the retry catches up."""

from datetime import timedelta

import pytest

from apps.conversations.models import CompactMarker, Message, SessionMeta
from apps.facts.models import Fact
from apps.lifecycle.services.leases import agent_lease, lease_acquire, lease_release
from tests.lifecycle.helpers import T0, add

pytestmark = pytest.mark.django_db

# user+assistant pairs; every user line is a first-person statement the no-LLM extraction
# keeps as a fact
FIRST = [
    "My cat is called Whiskerino.",
    "A lovely name.",
    "My sister lives in Lyon.",
    "Lyon is beautiful.",
    "My favourite tea is oolong.",
    "Good choice.",
    "My car is a green Renault.",
    "Noted.",
]
LATER = [
    "My brother plays the cello.",
    "How nice.",
    "My flat is on the fifth floor.",
    "Lots of stairs.",
    "My dentist is Dr Okafor.",
    "Noted.",
    "My bike was stolen last week.",
    "Sorry to hear it.",
]


def _settings(agent, **more):
    # A held lease is waited for this long (seconds) before the extraction gives up.
    agent.settings = {"consolidation_timeout_seconds": 0.2, **more}
    agent.save()


def _hold(agent):
    held = lease_acquire(name=agent_lease(agent.pk), ttl=600)
    assert held is not None
    return held


def _archived_were_extracted(session) -> list[Message]:
    """The messages that left the hot window, after asserting each is at or before the
    flush cursor (its facts were extracted)."""
    meta = SessionMeta.objects.get(session=session)
    archived = list(Message.objects.filter(session=session, created_at__lt=meta.start_at))
    cursor = (meta.flush_cursor, meta.flush_cursor_id)
    assert archived
    assert all((m.created_at, m.id) <= cursor for m in archived)
    return archived


def _statuses(runs) -> list[tuple]:
    return [(r["kind"], r["status"], r["reason"]) for r in runs]


def test_write_then_compact_stops_at_the_flush_cursor_while_the_lease_is_held(api, agent, session):
    _settings(agent, context_window_tokens=10)  # any usage is over compact_ratio
    rows = add(session, *FIRST, role=None)
    api.post(f"/sessions/{session.id}/flush")  # the first four (all but the last four)
    rows += add(session, *LATER, role=None, start=T0 + timedelta(hours=1))
    held = _hold(agent)

    usage = api.post("/context", {"session_id": str(session.id), "lifecycle": "wait"}).json()[
        "usage"
    ]

    assert (usage["action"], usage["action_status"]) == ("compact", "done")
    assert _statuses(usage["runs"])[:2] == [
        ("extract", "skipped", "busy"),
        ("compact", "fallback", "not_configured"),
    ]
    # write-then-compact would keep the last 4; it stopped at the cursor (rows[3]) instead
    meta = SessionMeta.objects.get(session=session)
    assert (meta.flush_cursor_id, meta.start_at) == (rows[3].id, rows[4].created_at)
    assert [m.id for m in _archived_were_extracted(session)] == [r.id for r in rows[:4]]
    assert CompactMarker.objects.get(session=session).message_count == 4

    lease_release(held)
    usage = api.post("/context", {"session_id": str(session.id), "lifecycle": "wait"}).json()[
        "usage"
    ]

    assert _statuses(usage["runs"])[:2] == [
        ("extract", "fallback", "not_configured"),
        ("compact", "fallback", "not_configured"),
    ]
    meta = SessionMeta.objects.get(session=session)
    assert (meta.flush_cursor_id, meta.start_at) == (rows[11].id, rows[12].created_at)
    assert len(_archived_were_extracted(session)) == 12
    assert sorted(Fact.objects.filter(agent=agent).values_list("value", flat=True)) == sorted(
        FIRST[0:4:2] + FIRST[4::2] + LATER[0:4:2]
    )


def test_without_any_extraction_nothing_is_compacted_until_the_lease_is_free(api, agent, session):
    _settings(agent, context_window_tokens=10)
    add(session, *FIRST, role=None)
    held = _hold(agent)

    usage = api.post("/context", {"session_id": str(session.id), "lifecycle": "wait"}).json()[
        "usage"
    ]

    assert _statuses(usage["runs"])[:2] == [
        ("extract", "skipped", "busy"),
        ("compact", "skipped", "not_extracted"),
    ]
    assert SessionMeta.objects.get(session=session).start_at is None
    assert not CompactMarker.objects.exists()
    assert not Fact.objects.exists()
    lease_release(held)


def test_a_size_compaction_extracts_first_and_never_cuts_past_the_cursor(api, agent, session):
    _settings(agent, max_history_bytes=100)  # every one of these sessions is over it
    rows = add(session, *FIRST, *LATER, role=None)
    held = _hold(agent)

    busy = api.post(f"/sessions/{session.id}/compact").json()

    assert _statuses(busy["runs"]) == [
        ("extract", "skipped", "busy"),
        ("compact", "skipped", "not_extracted"),
    ]
    assert busy["start_at"] is None
    assert busy["markers"] == []

    lease_release(held)
    api.post(f"/sessions/{session.id}/flush")  # facts of rows[0..11]: cursor at rows[11]
    rows += add(session, "My plant is a fern.", "Ok.", role=None, start=T0 + timedelta(hours=1))
    held = _hold(agent)

    # 80% of 100 bytes keeps the last four messages (cut at rows[14]); the extraction of
    # rows[12..13] cannot run, so the cut is the newest pair boundary within the cursor
    partial = api.post(f"/sessions/{session.id}/compact").json()

    assert _statuses(partial["runs"]) == [
        ("extract", "skipped", "busy"),
        ("compact", "fallback", "not_configured"),
    ]
    assert SessionMeta.objects.get(session=session).start_at == rows[12].created_at
    assert len(_archived_were_extracted(session)) == 12

    lease_release(held)
    done = api.post(f"/sessions/{session.id}/compact").json()

    assert _statuses(done["runs"]) == [
        ("extract", "fallback", "not_configured"),
        ("compact", "fallback", "not_configured"),
    ]
    assert SessionMeta.objects.get(session=session).start_at == rows[14].created_at
    assert len(_archived_were_extracted(session)) == 14
    assert Fact.objects.filter(agent=agent, value="My dentist is Dr Okafor.").exists()
