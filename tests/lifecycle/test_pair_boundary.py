"""Seed 000: compaction trims "on a complete user+assistant pair boundary". Where a history
has none (a long run of tool calls), compaction waits until the user speaks again, and
then cuts right before the user."""

from datetime import timedelta

import pytest

from apps.conversations.models import CompactMarker, SessionMeta
from apps.lifecycle.models import Run
from apps.lifecycle.services import boundaries
from tests.lifecycle.helpers import T0, add

pytestmark = pytest.mark.django_db

MINUTE = timedelta(minutes=1)


def _tool_run(session, calls: int, start):
    """One user request, then `calls` tool calls each with its 200-byte result."""
    rows = add(session, "run the migration", start=start)
    at = start + MINUTE
    for i in range(calls):
        call = [{"id": f"c{i}", "type": "function", "function": {"name": "sh", "arguments": "{}"}}]
        rows += add(session, "", role="assistant", tool_calls=call, start=at)
        rows += add(session, "r" * 200, role="tool", tool_call_id=f"c{i}", start=at + MINUTE)
        at += 2 * MINUTE
    return rows, at


def test_a_long_tool_run_waits_and_the_next_user_turn_is_the_cut(api, agent, session):
    agent.settings = {"max_history_bytes": 1000}
    agent.save()
    rows, at = _tool_run(session, 8, T0)  # 1 user message, then 16 tool-call messages

    waited = api.post(f"/sessions/{session.id}/compact")

    assert waited.status_code == 200
    [run] = [r for r in waited.json()["runs"] if r["kind"] == "compact"]
    assert (run["status"], run["reason"]) == ("skipped", "no_pair_boundary")
    assert waited.json()["start_at"] is None
    assert not CompactMarker.objects.filter(session=session).exists()
    assert not Run.objects.filter(session=session, kind="compact").exclude(status="skipped")

    rows += add(session, "thanks, all done?", start=at)
    cut = api.post(f"/sessions/{session.id}/compact")

    [run] = [r for r in cut.json()["runs"] if r["kind"] == "compact"]
    assert (run["status"], run["reason"]) == ("fallback", "not_configured")  # no LLM here
    user_turn = rows[-1]
    meta = SessionMeta.objects.get(session=session)
    assert meta.start_at == user_turn.created_at  # right before the user, nowhere inside
    [marker] = CompactMarker.objects.filter(session=session)
    assert marker.message_count == len(rows) - 1


def test_write_then_compact_keeps_more_than_its_last_messages_to_reach_a_pair(agent, session):
    rows, at = _tool_run(session, 3, T0)  # user, then 6 tool-call messages
    rows += add(session, "and now?", "done.", role=None, start=at)
    turns = [boundaries.Turn.of(m) for m in rows]

    # keep 4 would cut before a tool result; the nearest pair boundary keeps 2: too few
    assert boundaries.cut_keep_last(turns, keep=4) is None
    assert boundaries.cut_keep_last(turns, keep=2) == len(rows) - 2
    assert rows[len(rows) - 2].content == "and now?"


def test_a_system_note_between_the_answer_and_the_user_does_not_hide_the_pair(agent, session):
    rows = add(session, "q1", "a1", role=None, start=T0)
    rows += add(session, "(clock: 09:02)", role="system", start=T0 + 2 * MINUTE)
    rows += add(session, "q2", "a2", role=None, start=T0 + 3 * MINUTE)
    turns = [boundaries.Turn.of(m) for m in rows]

    assert boundaries.pair_cuts(turns) == [3]
    assert boundaries.cut_for_size(turns, target=4, limit=4) == 3
