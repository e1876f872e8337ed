"""The sessions tab: searchable by key or title, most recently active first, paged."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.conversations.models import Session
from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db

URL = "/review/agents/alice-bot/sessions/"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def test_anonymous_is_sent_to_login(anon_client, agent):
    response = anon_client.get(URL)

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={URL}"


def test_another_team_gets_404(outsider_client, agent):
    assert outsider_client.get(URL).status_code == 404


def test_sessions_are_sorted_by_their_newest_message_else_their_update(viewer_client, agent):
    old = SessionFactory(agent=agent, key="old")
    busy = SessionFactory(agent=agent, key="busy")
    empty = SessionFactory(agent=agent, key="empty")
    MessageFactory(session=old, created_at=T0 - timedelta(days=3))
    for minute in range(3):
        MessageFactory(session=busy, created_at=T0 + timedelta(minutes=minute))
    Session.objects.filter(pk=empty.pk).update(updated_at=T0 - timedelta(days=1))
    SessionFactory(agent=SessionFactory().agent, key="elsewhere")

    response = viewer_client.get(URL)

    assert response.status_code == 200
    rows = response.context["rows"]
    assert [(s.key, n) for s, n in rows] == [("busy", 3), ("empty", 0), ("old", 1)]
    assert rows[0][0].last_activity == T0 + timedelta(minutes=2)
    assert rows[1][0].last_activity == T0 - timedelta(days=1)
    html = response.content.decode()
    assert f'href="/review/agents/alice-bot/sessions/{busy.pk}/"' in html


def test_q_matches_key_or_title_case_insensitively(viewer_client, api, agent):
    api.post("/sessions", {"key": "Support-42"})
    api.post("/sessions", {"key": "chat-7", "title": "Billing SUPPORT"})
    api.post("/sessions", {"key": "chat-8", "title": "weather"})

    response = viewer_client.get(URL, {"q": "support"})

    assert response.status_code == 200
    assert sorted(s.key for s, _ in response.context["rows"]) == ["Support-42", "chat-7"]
    assert 'value="support"' in response.content.decode()


def test_the_list_is_paged_by_fifty(viewer_client, agent):
    for i in range(55):
        MessageFactory(
            session=SessionFactory(agent=agent, key=f"s{i:02d}"),
            created_at=T0 - timedelta(minutes=i),
        )

    first = viewer_client.get(URL)
    second = viewer_client.get(URL, {"page": 2})

    assert [s.key for s, _ in first.context["rows"]] == [f"s{i:02d}" for i in range(50)]
    assert [s.key for s, _ in second.context["rows"]] == [f"s{i:02d}" for i in range(50, 55)]
    assert 'href="?page=2"' in first.content.decode()
