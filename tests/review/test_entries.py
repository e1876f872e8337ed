"""The entries tab: documents (MEMORY.md first), notes, archives, HISTORY by month; one entry
with its aliases and change log; one month of history."""

import json
from datetime import UTC, datetime

import pytest
import time_machine

from apps.entries.models import Entry
from apps.lifecycle.models import HistoryEntry

pytestmark = pytest.mark.django_db

LIST = "/review/agents/alice-bot/entries/"


def put(api, path, body):
    return api.client.put(
        f"/api/v1{path}",
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {api.key}"},
    )


def _entries(api):
    for name, kind in [
        ("notes/zeta.md", "note"),
        ("USER.md", "note"),
        ("MEMORY.md", "note"),
        ("archive/old/1", "archive"),
        ("AGENTS.md", "note"),
        ("memory/2026-01-05.md", "note"),
        ("notes/alpha.md", "note"),
    ]:
        assert (
            api.post("/entries", {"name": name, "content": f"{name} v1", "kind": kind}).status_code
            == 201
        )


def _consolidate_at(api, key, at):
    with time_machine.travel(at, tick=False):
        api.post("/sessions", {"key": key})
        api.post(f"/sessions/{key}/messages", {"messages": [{"role": "user", "content": key}]})
        assert api.post(f"/sessions/{key}/consolidate").status_code == 200


@pytest.mark.parametrize("path", ["entries/", "entries/1/", "history/2026-01/"])
def test_anonymous_is_sent_to_login(anon_client, agent, path):
    response = anon_client.get(f"/review/agents/alice-bot/{path}")

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/review/agents/alice-bot/{path}"


def test_another_team_gets_404(outsider_client, api, agent):
    _entries(api)
    _consolidate_at(api, "jan", datetime(2026, 1, 10, tzinfo=UTC))
    entry = Entry.objects.get(name="MEMORY.md")

    for path in ("entries/", f"entries/{entry.pk}/", "history/2026-01/"):
        assert outsider_client.get(f"/review/agents/alice-bot/{path}").status_code == 404


def test_entries_are_grouped_with_memory_first_and_history_months(viewer_client, api, agent):
    _entries(api)
    _consolidate_at(api, "jan", datetime(2026, 1, 10, tzinfo=UTC))
    _consolidate_at(api, "mar", datetime(2026, 3, 2, tzinfo=UTC))

    response = viewer_client.get(LIST)

    assert response.status_code == 200
    groups = response.context["groups"]
    assert [e.name for e in groups.documents] == ["MEMORY.md", "AGENTS.md", "USER.md"]
    # each consolidation also wrote its day's log (seed 001, issue 22)
    assert [e.name for e in groups.daily_logs] == [
        "memory/2026-03-02.md",
        "memory/2026-01-10.md",
        "memory/2026-01-05.md",
    ]
    assert [e.name for e in groups.notes] == ["notes/alpha.md", "notes/zeta.md"]
    assert [e.name for e in groups.archives] == ["archive/old/1"]
    assert [(m.month, m.count) for m in response.context["months"]] == [
        ("2026-03", 1),
        ("2026-01", 1),
    ]
    html = response.content.decode()
    assert '<a href="/review/agents/alice-bot/history/2026-03/">HISTORY-2026-03.md</a>' in html
    memory = Entry.objects.get(agent=agent, name="MEMORY.md")
    assert f'<a href="/review/agents/alice-bot/entries/{memory.pk}/">MEMORY.md</a>' in html


def test_an_entry_shows_its_aliases_tokens_and_previous_contents(viewer_client, api, agent):
    api.post("/entries", {"name": "notes/plan.md", "content": "first draft"})
    put(api, "/entries/notes/plan.md", {"content": "second draft"})
    api.post("/entries/notes/plan.md/aliases", {"alias": "plan"})
    entry = Entry.objects.get(agent=agent, name="notes/plan.md")

    response = viewer_client.get(f"/review/agents/alice-bot/entries/{entry.pk}/")

    assert response.status_code == 200
    assert [a.name for a in response.context["aliases"]] == ["plan"]
    changes = response.context["changes"]
    assert [c.action for c in changes] == ["alias", "write", "add"]
    html = response.content.decode()
    assert "<pre>first draft</pre>" in html  # the content before the write
    assert '<div class="markdown"><p>second draft</p>\n</div>' in html  # rendered
    assert '<a href="?raw=1">As stored</a>' in html
    assert f"<dt>Tokens</dt><dd>{entry.token_count}</dd>" in html
    assert "<code>plan</code>" in html


def test_another_agents_entry_id_is_404(viewer_client, other_api, agent):
    other_api.post("/entries", {"name": "notes/secret.md", "content": "x"})
    theirs = Entry.objects.get(name="notes/secret.md")

    assert viewer_client.get(f"/review/agents/alice-bot/entries/{theirs.pk}/").status_code == 404


def test_a_history_month_lists_its_entries(viewer_client, api, agent):
    _consolidate_at(api, "jan-a", datetime(2026, 1, 10, tzinfo=UTC))
    _consolidate_at(api, "jan-b", datetime(2026, 1, 31, 23, 59, tzinfo=UTC))
    # not "feb": three hex letters, which a session id in the page may hold
    _consolidate_at(api, "february", datetime(2026, 2, 1, tzinfo=UTC))
    january = list(HistoryEntry.objects.filter(created_at__month=1).order_by("created_at"))

    response = viewer_client.get("/review/agents/alice-bot/history/2026-01/")

    assert response.status_code == 200
    assert response.context["entries"] == january
    assert len(january) == 2
    html = response.content.decode()
    assert "<h1>memory/HISTORY-2026-01.md</h1>" in html
    assert "jan-a" in html
    assert "jan-b" in html
    assert "february" not in html.split("<h1>")[1]


@pytest.mark.parametrize("month", ["2026-13", "2026-1", "january", "2026-02"])
def test_a_malformed_or_empty_month_is_404(viewer_client, api, agent, month):
    _consolidate_at(api, "jan", datetime(2026, 1, 10, tzinfo=UTC))

    assert viewer_client.get(f"/review/agents/alice-bot/history/{month}/").status_code == 404
