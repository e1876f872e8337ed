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
from apps.entries.models import Entry, EntryChange
from apps.entries.services import entry_add
from apps.lifecycle.models import Run
from apps.people.services import session_archives
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
    assert '<code class="tool-name">grep</code>' in html
    assert '<span class="calls">→ calls <code class="tool-name">grep</code>(…)</span>' in html
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
    # Both sessions reach past the page and past what the hot window reads (window_messages:
    # working_memory_cap, window_unsummarised_max): only the session's size differs.
    add(session, *[f"m{i}" for i in range(150)], role=None)
    add(session, *[f"n{i}" for i in range(300)], role=None, start=T0 + timedelta(days=1))
    viewer_client.get(url(session))  # the first request fills per-process caches
    with CaptureQueriesContext(connection) as small:
        viewer_client.get(url(session))
    add(session, *[f"o{i}" for i in range(600)], role=None, start=T0 + timedelta(days=2))

    with CaptureQueriesContext(connection) as large:
        response = viewer_client.get(url(session))

    assert len(shown(response)) == 100
    assert len(large.captured_queries) == len(small.captured_queries)
    assert not any("COUNT(" in q["sql"].upper() for q in large.captured_queries)


# --- resets and the archives made for a session (issue 28) ---------------------------------


def _talk(session, n=4, start=T0):
    texts = [f"{session.key} {'q' if i % 2 == 0 else 'a'}{i} " + "x" * 50 for i in range(2 * n)]
    return add(session, *texts, role=None, start=start)


def _compact(api, session) -> str:
    body = api.post(f"/sessions/{session.pk}/compact").json()
    return body["markers"][-1]["archive_name"]


def _reset(api, session) -> str | None:
    response = api.post(f"/sessions/{session.pk}/reset")
    assert response.status_code == 200, response.content
    return response.json()["archive"]


def _made(agent, name, user=""):
    """The archive entry and the time its "add" change records."""
    entry = Entry.objects.get(agent=agent, user=user, name=name)
    change = EntryChange.objects.get(entry=entry, action="add")
    return entry, change.changed_at


def _link(entry) -> str:
    return f'<a href="/review/agents/{entry.agent.slug}/entries/{entry.pk}/">{entry.name}</a>'


def _rows(html) -> list[str]:
    """The ids of the timeline's rows, in page order."""
    return re.findall(r'<li[^>]* id="(m-[0-9a-f-]{36}|marker-\d+|reset-\d+|hot-window)"', html)


def _resets(html) -> list[str]:
    """Each reset row's text, tags kept, whitespace folded."""
    blocks = re.findall(r'<li class="reset" id="reset-\d+">(.*?)</li>', html, re.S)
    return [" ".join(b.split()) for b in blocks]


REMOVED = '<span class="muted">(removed)</span>'


def _markers(html) -> list[tuple[int, str]]:
    """Each marker row's id and what follows "archived in"."""
    found = re.findall(
        r'<li class="marker" id="marker-(\d+)">.*?archived in\s*(.*?)</span>\s*</li>', html, re.S
    )
    return [(int(pk), link) for pk, link in found]


def _entry_links(html) -> set[int]:
    return {int(n) for n in re.findall(r'href="/review/agents/alice-bot/entries/(\d+)/"', html)}


def _when(at) -> str:
    return f'<time datetime="{at.isoformat()}">{at:%Y-%m-%d %H:%M:%S}</time>'


def test_after_a_reset_the_timeline_says_so_and_links_to_the_archive(
    viewer_client, api, agent, session
):
    _talk(session)
    name = _reset(api, session)
    archive, at = _made(agent, name)

    response = viewer_client.get(url(session))

    assert response.status_code == 200
    html = response.content.decode()
    assert name == "archive/chat-1/1"
    assert _rows(html) == ["reset-1"]
    assert _resets(html) == [
        f"<span>Session reset {_when(at)}: its messages are archived in {_link(archive)}. </span>"
    ]
    assert "No messages.</li>" not in html
    assert '<li class="muted">No messages since.</li>' in html
    assert 'class="resets"' not in html  # the page starts the session: no header note


def test_compactions_before_a_reset_are_listed_with_it_and_later_ones_at_their_markers(
    viewer_client, api, agent, session
):
    _talk(session)
    first = _compact(api, session)
    reset = _reset(api, session)
    later = _talk(session, start=T0 + timedelta(hours=1))
    second = _compact(api, session)
    (first_entry, _), (reset_entry, at) = _made(agent, first), _made(agent, reset)
    second_entry, _ = _made(agent, second)
    [marker] = CompactMarker.objects.filter(session=session)

    response = viewer_client.get(url(session))

    html = response.content.decode()
    assert (first, reset, second) == ("archive/chat-1/1", "archive/chat-1/2", "archive/chat-1/3")
    rows = [r for r in _rows(html) if r != "hot-window"]
    assert rows[0] == "reset-1"  # every message left came after the reset
    kept = next(m for m in later if m.created_at == marker.cutoff_at)
    assert rows[rows.index(f"marker-{marker.pk}") + 1] == f"m-{kept.pk}"
    assert _resets(html) == [
        f"<span>Session reset {_when(at)}: its messages are archived in {_link(reset_entry)}. "
        f"Compacted before it: {_link(first_entry)}.</span>"
    ]
    assert _markers(html) == [(marker.pk, _link(second_entry))]
    assert "No messages since." not in html
    # The timeline links exactly the archives a removal of the session would delete.
    assert _entry_links(html) == set(session_archives(session=session))


def test_a_reset_that_archived_nothing_says_so(viewer_client, api, agent, session):
    _talk(session)
    name = _reset(api, session)
    archive, at = _made(agent, name)
    assert _reset(api, session) is None  # nothing left to archive: a skipped run only
    [last_run] = Run.objects.filter(session=session, trigger="reset").order_by("-id")[:1]

    html = viewer_client.get(url(session)).content.decode()

    assert _rows(html) == ["reset-1", "reset-2"]
    assert _resets(html) == [
        f"<span>Session reset {_when(at)}: its messages are archived in {_link(archive)}. </span>",
        f"<span>Session reset {_when(last_run.created_at)}: nothing needed archiving "
        "(consolidation took what there was; see the runs below). </span>",
    ]


def test_a_renamed_archive_is_followed_and_a_removed_one_named(viewer_client, api, agent, session):
    _talk(session)
    compacted = _compact(api, session)
    _talk(session, start=T0 + timedelta(hours=1))
    reset = _reset(api, session)
    entry, _ = _made(agent, compacted)
    _, at = _made(agent, reset)
    assert api.patch(f"/entries/{compacted}", {"name": "kept/berlin.md"}).status_code == 200
    assert api.delete(f"/entries/{reset}").status_code == 204
    entry.refresh_from_db()

    html = viewer_client.get(url(session)).content.decode()

    assert _resets(html) == [
        f'<span>Session reset {_when(at)}: its messages are archived in <span class="removed">'
        f'{reset}</span> <span class="muted">(removed)</span>. '
        f"Compacted before it: {_link(entry)}.</span>"
    ]
    assert entry.name == "kept/berlin.md"


def test_a_marker_links_its_archive_renamed_or_removed(viewer_client, api, agent, session):
    _talk(session)
    first = _compact(api, session)
    _talk(session, start=T0 + timedelta(hours=1))
    second = _compact(api, session)
    entry, _ = _made(agent, first)
    api.patch(f"/entries/{first}", {"name": "kept/first.md"})
    api.delete(f"/entries/{second}")
    # A later archive may take the removed one's name: the marker keeps to its own.
    third = _compact_into(api, session, start=T0 + timedelta(hours=2))
    newer, _ = _made(agent, third)
    markers = list(CompactMarker.objects.filter(session=session).order_by("id"))
    entry.refresh_from_db()

    html = viewer_client.get(url(session)).content.decode()

    assert (entry.name, second, third) == ("kept/first.md", "archive/chat-1/2", "archive/chat-1/2")
    assert _markers(html) == [
        (markers[0].pk, _link(entry)),
        (markers[1].pk, f'<span class="removed">{second}</span> {REMOVED}'),
        (markers[2].pk, _link(newer)),
    ]


def _compact_into(api, session, start):
    _talk(session, start=start)
    return _compact(api, session)


def test_a_session_links_only_the_archives_made_for_it(
    viewer_client, api, other_api, agent, other_agent
):
    """Keys that share its prefix or start its change detail, another user's entry of the
    marker's name, another agent's session of the same key, and the archives of a removed
    session of the same key are none of its archives."""
    gone = SessionFactory(agent=agent, key="chat-1")
    _talk(gone)
    _compact(api, gone)
    _reset(api, gone)
    assert api.delete(f"/sessions/{gone.pk}").status_code == 204
    session = SessionFactory(agent=agent, key="chat-1", user="bob")
    _talk(session)
    _compact(api, session)
    _reset(api, session)
    _talk(session, start=T0 + timedelta(hours=1))
    _compact(api, session)
    for key in ("chat 1", "chat-1: 8 messages", "CHAT-1"):
        other = SessionFactory(agent=agent, key=key, user="bob")
        _talk(other)
        _compact(api, other)
        _reset(api, other)
    entry_add(agent=agent, name="archive/chat-1/9", content="carol's", owner="carol")
    entry_add(agent=agent, name="archive/chat-1/3", content="the agent's", kind="archive")
    theirs = SessionFactory(agent=other_agent, key="chat-1")
    _talk(theirs)
    _compact(other_api, theirs)
    _reset(other_api, theirs)
    own = [
        Entry.objects.get(agent=agent, user="bob", name=f"archive/chat-1/{n}").pk for n in (1, 2, 3)
    ]

    html = viewer_client.get(url(session)).content.decode()

    assert _entry_links(html) == set(own)
    assert len(_resets(html)) == 1
    assert set(session_archives(session=session)) == set(own)  # what its removal deletes


def test_a_page_that_does_not_start_the_session_names_its_resets_in_the_header(
    viewer_client, api, agent, session
):
    _talk(session)
    name = _reset(api, session)
    archive, at = _made(agent, name)
    add(session, *[f"m{i}" for i in range(150)], role=None, start=T0 + timedelta(days=1))

    newest = viewer_client.get(url(session))
    first = follow(viewer_client, newest, "prev")

    header = re.search(r'<p class="resets">(.*?)</p>', newest.content.decode())
    assert header is not None
    assert header.group(1) == (
        f'Reset <time datetime="{at.isoformat()}">{at:%Y-%m-%d %H:%M}</time>, archived in '
        f"{_link(archive)}. The session's first page says more."
    )
    assert _resets(newest.content.decode()) == []
    assert 'class="resets"' not in first.content.decode()
    assert _rows(first.content.decode())[0] == "reset-1"
