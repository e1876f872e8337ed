"""The agent's overview page and its audit log."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.agents.services import audit_record
from apps.lifecycle.models import Run
from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db

OVERVIEW = "/review/agents/alice-bot/"
AUDIT = "/review/agents/alice-bot/audit/"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("url", [OVERVIEW, AUDIT])
def test_anonymous_is_sent_to_login(anon_client, agent, url):
    response = anon_client.get(url)

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={url}"


@pytest.mark.parametrize("url", [OVERVIEW, AUDIT])
def test_another_team_gets_404(outsider_client, agent, url):
    assert outsider_client.get(url).status_code == 404


def test_the_overview_lists_sessions_by_last_activity_runs_and_tabs(viewer_client, api, agent):
    sessions = [SessionFactory(agent=agent, key=f"s{i:02d}") for i in range(12)]
    for i, session in enumerate(sessions):
        # s00 is the most recently active, s11 the least
        MessageFactory(session=session, created_at=T0 - timedelta(hours=i))
    api.post("/sessions/s00/compact")
    [run] = Run.objects.all()

    response = viewer_client.get(OVERVIEW)

    assert response.status_code == 200
    assert [s.key for s in response.context["sessions"]] == [f"s{i:02d}" for i in range(10)]
    assert response.context["runs"] == [run]
    stats = response.context["stats"]
    assert (stats.sessions, stats.messages, stats.facts) == (12, 12, 0)
    html = response.content.decode()
    for tab in ("sessions", "search", "facts", "queue", "entries", "learnings", "runs", "audit"):
        assert f'href="/review/agents/alice-bot/{tab}/"' in html
    assert f'href="/review/agents/alice-bot/runs/{run.pk}/"' in html


def test_the_audit_log_shows_who_did_what_and_the_keys_that_changed(
    viewer_client, editor, agent, other_agent
):
    event = audit_record(
        user=editor,
        agent=agent,
        source="review",
        action="fact.update",
        target=agent,
        before={"value": "tea", "importance": 0.5, "gone": 1},
        after={"value": "coffee", "importance": 0.5, "new": "x"},
    )
    audit_record(user=editor, agent=other_agent, source="admin", action="x.y", target=other_agent)

    overview = viewer_client.get(OVERVIEW)
    response = viewer_client.get(AUDIT)

    assert response.status_code == 200
    [row] = response.context["events"]
    assert (row.event, row.erased, row.user_hmac) == (event, None, "")
    assert [(c.key, c.before, c.after) for c in row.changes] == [
        ("gone", "1", None),
        ("new", None, "x"),
        ("value", "tea", "coffee"),
    ]
    html = response.content.decode()
    assert "eddie" in html
    assert "<code>fact.update</code>" in html
    assert "<dt>value</dt>" in html
    assert "<del>tea</del> → <ins>coffee</ins>" in html
    assert "<dt>importance</dt>" not in html  # unchanged keys are not listed
    assert "x.y" not in html  # another agent's event
    assert [row.event for row in overview.context["events"]] == [event]


def test_an_erasure_in_the_audit_log_reads_as_counts_not_removed_values(
    viewer_client, editor, agent
):
    counts = {"sessions": 1, "messages": 12, "facts": 0, "fact_versions": 1, "history": 2}
    before = {"user_hmac": "0123456789abcdef" * 4, **counts, "provenance_cleared": 1}
    event = audit_record(
        user=editor,
        agent=agent,
        source="review",
        action="user.erase",
        target="user",
        before=before,
        after=None,
    )

    response = viewer_client.get(AUDIT)

    [row] = response.context["events"]
    assert (row.event, row.changes) == (event, [])
    assert row.erased == [
        (1, "session"),
        (12, "messages"),
        (1, "fact version"),
        (2, "history entries"),
    ]
    assert row.cleared == [(1, "provenance link")]
    html = response.content.decode()
    assert (
        '<p class="erased">Erased <span class="erased-count"><strong>1</strong> session</span>, '
        '<span class="erased-count"><strong>12</strong> messages</span>, '
        '<span class="erased-count"><strong>1</strong> fact version</span>, '
        '<span class="erased-count"><strong>2</strong> history entries</span>.</p>'
    ) in html
    assert "<del>" not in html
    assert '<code title="' + before["user_hmac"] + '">0123456789ab…</code>' in html
