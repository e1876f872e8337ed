"""Keyword mode's hot-window leg (issue 29, item 5): the substring match reads each session's
hot rows (at or after its compaction cutoff) only; the archive is BM25's."""

import json
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from apps.agents.users import AGENT_ONLY
from apps.conversations.hot_window import hot_matches, hot_matches_query, postgres_hot_matches_sql
from apps.conversations.models import Message, SessionMeta
from apps.conversations.selectors import message_search
from tests.factories import SessionFactory
from tests.search.conftest import T0, add, archive_all

pytestmark = pytest.mark.django_db
DAY = timedelta(days=1)


def _cut(session, at):
    SessionMeta.objects.update_or_create(session=session, defaults={"start_at": at})


@pytest.fixture
def sessions(agent, other_agent):
    """Three sessions of the agent holding "sandbox" in archived and hot rows, another
    agent's hot "sandbox", and the rows by name."""
    cut, never, closed = (SessionFactory(agent=agent, key=k) for k in ("cut", "never", "closed"))
    rows = {}
    rows["cut_old"], rows["cut_lunch"] = add(cut, "sandbox one", "lunch", start=T0)
    rows["cut_at"], rows["cut_new"] = add(
        cut, "sandbox at the cut", "a SANDBOX later", start=T0 + DAY
    )
    _cut(cut, T0 + DAY)  # the message exactly at the cutoff is hot
    (rows["never"],) = add(never, "never compacted sandbox", start=T0 + 2 * DAY)
    SessionMeta.objects.filter(session=never).delete()  # no meta row at all: all hot
    (rows["closed"],) = add(closed, "closed sandbox", start=T0 + 3 * DAY)
    archive_all(closed)
    theirs = SessionFactory(agent=other_agent, key="theirs")
    rows["theirs"] = add(theirs, "their sandbox", start=T0 + 4 * DAY)[0]
    return rows


def test_the_hot_leg_matches_hot_rows_only_newest_first(agent, sessions):
    found = hot_matches(agent_id=agent.pk, text="sandbox", limit=10)

    assert found == [sessions["never"].pk, sessions["cut_new"].pk, sessions["cut_at"].pk]


def test_the_hot_leg_keeps_the_limit_and_the_filters(agent, sessions):
    assert hot_matches(agent_id=agent.pk, text="sandbox", limit=2) == [
        sessions["never"].pk,
        sessions["cut_new"].pk,
    ]
    scope = Message.objects.filter(agent=agent, session__key="cut")
    assert hot_matches(agent_id=agent.pk, text="SANDBOX", limit=10, queryset=scope) == [
        sessions["cut_new"].pk,
        sessions["cut_at"].pk,
    ]
    assert hot_matches(agent_id=agent.pk, text="lunch", limit=10) == []  # archived


def test_keyword_mode_finds_archived_rows_by_bm25_and_hot_rows_by_substring(agent, sessions):
    result = message_search(agent=agent, query="sandbox", mode="keyword", k=10, audience=AGENT_ONLY)

    hot = [sessions[k].pk for k in ("never", "cut_new", "cut_at")]
    legs = [(h.message.pk, list(h.legs)) for h in result.hits]
    assert legs[:3] == [(pk, ["contains"]) for pk in hot]
    # the archive's two "sandbox" rows, by BM25 (equal scores tie by id)
    archive = sorted([sessions["cut_old"].pk, sessions["closed"].pk], key=str)
    assert legs[3:] == [(pk, ["bm25"]) for pk in archive]
    assert sessions["theirs"].pk not in {h.message.pk for h in result.hits}


def test_a_compaction_moves_rows_from_the_hot_leg_to_bm25(agent, session):
    rows = add(session, "quokka notes", "more quokka notes", start=T0)

    before = message_search(
        agent=agent, query="quokka notes", mode="keyword", k=10, audience=AGENT_ONLY
    )
    archive_all(session)
    after = message_search(
        agent=agent, query="quokka notes", mode="keyword", k=10, audience=AGENT_ONLY
    )

    assert [(h.message.pk, list(h.legs)) for h in before.hits] == [
        (rows[1].pk, ["contains"]),
        (rows[0].pk, ["contains"]),
    ]
    # BM25: the shorter row scores higher on the same two terms
    assert [(h.message.pk, list(h.legs)) for h in after.hits] == [
        (rows[0].pk, ["bm25"]),
        (rows[1].pk, ["bm25"]),
    ]


def _message_scans(plan: dict) -> list[tuple[str, str]]:
    """PostgreSQL: (index, index condition) of each scan of the messages table in the plan."""
    found = []
    if plan.get("Relation Name") == "conversations_message":
        # A bitmap heap scan reads what its bitmap index scan found: that one names the index.
        index = plan["Plans"][0] if plan["Node Type"] == "Bitmap Heap Scan" else plan
        found.append((index.get("Index Name", plan["Node Type"]), index.get("Index Cond", "")))
        return found
    for child in plan.get("Plans", []):
        found += _message_scans(child)
    return found


def test_the_hot_leg_reads_no_archived_row(agent, other_agent, session):
    archived = add(session, *[f"old sandbox {i}" for i in range(40)], start=T0)
    later = datetime(2030, 1, 1, tzinfo=UTC)
    hot = add(session, "sandbox", "nothing", "sandbox again", start=later)
    _cut(session, hot[0].created_at)
    # Archived rows newer than that cutoff, in another session and in another agent: a read
    # of every row after the cutoff's time would see them.
    for owner in (agent, other_agent):
        elsewhere = SessionFactory(agent=owner, key=f"elsewhere-{owner.pk}")
        archived += add(elsewhere, *[f"sandbox {i}" for i in range(20)], start=later + DAY)
        archive_all(elsewhere)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            sql, params = postgres_hot_matches_sql(agent_id=agent.pk, text="sandbox", limit=10)
            cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
            value = cursor.fetchone()[0]
            (plan,) = json.loads(value) if isinstance(value, str) else value
        else:
            query = hot_matches_query(agent_id=agent.pk, text="sandbox", limit=10)
            sql, params = query.query.sql_with_params()
            cursor.execute(f"EXPLAIN QUERY PLAN {sql}", params)
            plan = [row[-1] for row in cursor.fetchall()]

    assert len(archived) == 80
    if connection.vendor == "postgresql":
        # one read per session, from its cutoff: no archived row of another session or agent
        assert _message_scans(plan["Plan"]) == [
            (
                "message_session_time",
                "((session_id = s.id) AND (created_at >= COALESCE(sm.start_at, "
                "'0001-01-01 00:00:00+00'::timestamp with time zone)))",
            )
        ]
    else:
        assert any(
            "USING INDEX message_session_time (session_id=? AND created_at>?)" in step
            for step in plan
        ), plan
    assert hot_matches(agent_id=agent.pk, text="sandbox", limit=10) == [hot[2].pk, hot[0].pk]
