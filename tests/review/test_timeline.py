"""The session timeline: messages by role, tool calls collapsed, the rolling summary, compact
markers linking to their archives, the hot-window boundary, runs, and keyset pages."""

import re
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from apps.conversations.models import CompactMarker, SessionMeta, Summary
from apps.core.pagination import encode_cursor
from apps.entries.models import Entry
from apps.lifecycle.models import Run
from tests.factories import SessionFactory
from tests.lifecycle.helpers import T0, add

pytestmark = pytest.mark.django_db


def url(session, slug="alice-bot"):
    return f"/review/agents/{slug}/sessions/{session.pk}/"


def shown(response) -> list[str]:
    """The message ids on the page, in page order."""
    return re.findall(r'<li id="m-([0-9a-f-]{36})"', response.content.decode())


def ids(rows) -> list[str]:
    return [str(m.pk) for m in rows]


def follow(client, response, rel: str):
    """Follow the page's "Earlier" (rel=prev) or "Later" (rel=next) link."""
    match = re.search(rf'<a rel="{rel}" class="\w+" href="(\?[^"]+)"', response.content.decode())
    assert match is not None, f"no {rel} link"
    return client.get(response.wsgi_request.path + match.group(1).replace("&amp;", "&"))


@pytest.fixture
def long_session(session):
    """250 messages, one a minute."""
    return add(session, *[f"m{i:03d}" for i in range(250)], role=None)


def test_anonymous_is_sent_to_login(anon_client, session):
    response = anon_client.get(url(session))

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={url(session)}"


def test_another_team_gets_404(outsider_client, session):
    assert outsider_client.get(url(session)).status_code == 404


def test_another_agents_session_under_this_agents_slug_is_404(viewer_client, other_agent):
    theirs = SessionFactory(agent=other_agent)
    add(theirs, "secret")

    response = viewer_client.get(url(theirs, slug="alice-bot"))

    assert response.status_code == 404
    assert (
        viewer_client.get(f"/review/agents/alice-bot/sessions/{uuid.uuid4()}/").status_code == 404
    )


def test_the_first_page_is_the_newest_hundred_and_earlier_leads_back(viewer_client, long_session):
    newest = viewer_client.get(url(long_session[0].session))
    earlier = follow(viewer_client, newest, "prev")
    first = follow(viewer_client, earlier, "prev")
    later = follow(viewer_client, first, "next")

    assert newest.status_code == 200
    assert shown(newest) == ids(long_session[150:])
    assert shown(earlier) == ids(long_session[50:150])
    assert shown(first) == ids(long_session[:50])
    assert shown(later) == ids(long_session[50:150])
    assert 'rel="next"' not in newest.content.decode()  # nothing later than the newest page
    assert 'rel="prev"' not in first.content.decode()  # the session starts here
    assert "Start of the session" in first.content.decode()


@pytest.mark.parametrize(
    ("index", "page"),
    [(20, slice(0, 50)), (120, slice(50, 150)), (249, slice(150, 250)), (150, slice(150, 250))],
)
def test_around_shows_the_page_holding_the_message(viewer_client, long_session, index, page):
    target = long_session[index]

    response = viewer_client.get(url(target.session), {"around": str(target.pk)})

    assert response.status_code == 200
    assert shown(response) == ids(long_session[page])


def test_around_an_unknown_or_another_sessions_message_is_404(viewer_client, agent, session):
    add(session, "mine")
    other = add(SessionFactory(agent=agent, key="chat-2"), "theirs")[0]

    for around in (str(other.pk), str(uuid.uuid4()), "not-a-uuid"):
        assert viewer_client.get(url(session), {"around": around}).status_code == 404


@pytest.mark.parametrize(
    "query",
    [
        {"before": "!!!"},
        {"after": "bm90IGpzb24"},  # "not json"
        {"before": encode_cursor(["2026-01-05T09:00:00+00:00"])},  # one value, not two
        {"after": encode_cursor(["yesterday", str(uuid.uuid4())])},
        {"before": encode_cursor([T0, "not-a-uuid"])},
        {"before": encode_cursor([T0, uuid.uuid4()]), "after": encode_cursor([T0, uuid.uuid4()])},
    ],
)
def test_a_bad_cursor_is_400(viewer_client, session, query):
    add(session, "hello")

    assert viewer_client.get(url(session), query).status_code == 400


def test_messages_are_styled_by_role_with_tool_calls_collapsed(viewer_client, api, session):
    call = [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]
    api.post(
        f"/sessions/{session.pk}/messages",
        {
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "find it"},
                {"role": "assistant", "content": None, "tool_calls": call},
                {
                    "role": "tool",
                    "content": "grep: no such file",
                    "tool_call_id": "c1",
                    "is_error": True,
                },
                {"role": "assistant", "content": "not found"},
            ]
        },
    )

    response = viewer_client.get(url(session))

    html = response.content.decode()
    classes = re.findall(r'<li id="m-[0-9a-f-]{36}" class="([^"]+)"', html)
    assert classes == [
        "msg system hot-start",  # the whole session is in the hot window
        "msg user",
        "msg assistant",
        "msg tool is-error",
        "msg assistant",
    ]
    assert '<details class="tool-calls"><summary>1 tool call</summary>' in html
    assert "<code>grep</code>" in html
    assert "<details open><summary>Tool result <code>c1</code>" in html
    assert '<strong class="error">tool error</strong>' in html


def test_summary_markers_hot_boundary_and_runs(viewer_client, api, agent, session):
    api.patch(
        "/agent/settings", {"settings": {"max_history_bytes": 500, "max_history_messages": 2}}
    )
    rows = add(
        session, *[f"{'q' if i % 2 == 0 else 'a'}{i:03d} " + "x" * 95 for i in range(8)], role=None
    )
    api.post(f"/sessions/{session.pk}/compact")
    later = add(
        session,
        *[f"later {i} " + "y" * 92 for i in range(6)],
        role=None,
        start=T0 + timedelta(hours=1),
    )
    api.post(f"/sessions/{session.pk}/compact")
    api.post(f"/sessions/{session.pk}/summarize")
    first, second = CompactMarker.objects.filter(session=session).order_by("id")
    archive = Entry.objects.get(agent=agent, name=first.archive_name)
    api.client.delete(
        f"/api/v1/entries/{second.archive_name}", headers={"Authorization": f"Bearer {api.key}"}
    )
    start_at = SessionMeta.objects.get(session=session).start_at
    runs = list(Run.objects.filter(session=session).order_by("-created_at", "-id"))

    response = viewer_client.get(url(session))

    assert response.status_code == 200
    html = response.content.decode()
    everything = rows + later
    order = re.findall(r'<li[^>]* id="(m-[0-9a-f-]{36}|marker-\d+|hot-window)"', html)
    first_hot = next(m for m in everything if m.created_at == start_at)
    expected = []
    for m in everything:
        if m.created_at == first.cutoff_at:
            expected.append(f"marker-{first.pk}")
        if m.created_at == second.cutoff_at:
            expected.append(f"marker-{second.pk}")
        if m.pk == everything[-2].pk:  # the last max_history_messages=2 messages
            expected.append("hot-window")
        expected.append(f"m-{m.pk}")
    assert order == expected
    assert first_hot.created_at == second.cutoff_at
    link = f'<a href="/review/agents/alice-bot/entries/{archive.pk}/">{first.archive_name}</a>'
    assert link in html
    assert f'<span class="removed">{second.archive_name}</span>' in html
    summary = Summary.objects.get(session=session)
    assert response.context["summary"] == summary
    assert [r.pk for r in response.context["runs"]] == [r.pk for r in runs]
    for run in runs:
        assert f'href="/review/agents/alice-bot/runs/{run.pk}/"' in html


def test_the_first_page_costs_the_same_queries_whatever_the_session_size(viewer_client, session):
    add(session, *[f"m{i}" for i in range(150)], role=None)
    with CaptureQueriesContext(connection) as small:
        viewer_client.get(url(session))
    add(session, *[f"n{i}" for i in range(300)], role=None, start=T0 + timedelta(days=1))

    with CaptureQueriesContext(connection) as large:
        response = viewer_client.get(url(session))

    assert len(shown(response)) == 100
    assert len(large.captured_queries) == len(small.captured_queries)
    assert not any("COUNT(" in q["sql"].upper() for q in large.captured_queries)
