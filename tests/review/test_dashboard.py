"""/review/: the agents of the user's teams, their numbers and a 30-day activity chart."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.lifecycle.models import Run
from tests.factories import AgentFactory, MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db

URL = "/review/"


def _given_activity(api, agent):
    """Two sessions, three messages today, a current and a pending fact, one consolidation."""
    api.patch("/agent/settings", {"settings": {"fact_review": True}})
    api.post("/sessions", {"key": "chat-1"})
    api.post("/sessions", {"key": "chat-2"})
    api.post(
        "/sessions/chat-1/messages",
        {"messages": [{"role": "user", "content": f"hello {i}"} for i in range(3)]},
    )
    assert api.post("/facts", {"value": "likes tea"}).status_code == 201
    assert api.post("/facts", {"value": "lives in Oslo", "review": True}).status_code == 201
    assert api.post("/sessions/chat-1/consolidate").status_code == 200


def test_anonymous_is_sent_to_login(anon_client):
    response = anon_client.get(URL)

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/review/"


def test_another_team_sees_only_its_own_agents(outsider_client, agent, other_agent):
    response = outsider_client.get(URL)

    assert response.status_code == 200
    assert [s.agent.slug for s, _ in response.context["cards"]] == ["mallory-bot"]
    assert b"alice-bot" not in response.content


def test_a_viewer_sees_the_counts_of_the_team_agents(viewer_client, api, agent):
    _given_activity(api, agent)
    run = Run.objects.get(kind="consolidate")

    response = viewer_client.get(URL)

    assert response.status_code == 200
    [(stats, _)] = response.context["cards"]
    assert (stats.agent, stats.sessions, stats.messages) == (agent, 2, 3)
    assert (stats.facts, stats.pending_reviews) == (2, 1)
    assert stats.last_consolidation == run
    # messages are embedded after commit (never run here); facts before they are saved
    backlog = {b.corpus: (b.pending, b.failed) for b in stats.backlog}
    assert backlog["messages"] == (3, 0)
    assert backlog["facts"] == (0, 0)
    html = response.content.decode()
    # no LLM here: the consolidation ran in the extractive mode, shown as such (not a warning)
    assert (run.status, run.reason) == ("fallback", "not_configured")
    link = f'<a href="/review/agents/alice-bot/runs/{run.pk}/"><span class="status-extractive"'
    assert link in html
    assert '<dd class="pending"><a href="/review/agents/alice-bot/queue/">1</a></dd>' in html


def test_the_activity_chart_has_a_bar_per_day_with_its_count(viewer_client, agent):
    session = SessionFactory(agent=agent)
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    for _ in range(3):
        MessageFactory(session=session, created_at=today)
    MessageFactory(session=session, created_at=today - timedelta(days=2))
    MessageFactory(session=session, created_at=today - timedelta(days=31))  # out of range

    response = viewer_client.get(URL)

    [(stats, _)] = response.context["cards"]
    assert len(stats.activity) == 30
    assert [d.count for d in stats.activity][-3:] == [1, 0, 3]
    assert sum(d.count for d in stats.activity) == 4
    html = response.content.decode()
    assert html.count('<rect class="bar') == 30
    assert f"<title>{today.date().isoformat()}: 3 messages</title>" in html
    two_days_ago = (today - timedelta(days=2)).date().isoformat()
    assert f"<title>{two_days_ago}: 1 message</title>" in html
    label = "Messages per day, alice-bot: 4 messages in 30 days, at most 3 a day"
    assert f'role="img" aria-label="{label}"' in html


def test_the_query_count_does_not_grow_with_agents_or_days(viewer, viewer_client, agent):
    for day in range(5):
        MessageFactory(
            session=SessionFactory(agent=agent),
            created_at=datetime.now(UTC) - timedelta(days=day),
        )
    with CaptureQueriesContext(connection) as one:
        assert viewer_client.get(URL).status_code == 200
    for n in range(3):
        more = AgentFactory(slug=f"bot-{n}", team=agent.team)
        MessageFactory(session=SessionFactory(agent=more))

    with CaptureQueriesContext(connection) as four:
        response = viewer_client.get(URL)

    assert len(response.context["cards"]) == 4
    assert len(four.captured_queries) == len(one.captured_queries)
