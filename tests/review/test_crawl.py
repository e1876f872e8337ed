"""The crawl (issue 11's acceptance): logged in as a team member, every link reachable from
/review/ answers without a server error; logged in as another team's member, every crawled
page of the first team's agent answers 404.

The agent is seeded through the JSON API, the agents' own write path, with every kind of
row a review page shows: sessions with messages and tool calls, a compact marker and its
archive, a rolling summary, facts active, pending and superseded with versions, notes,
MEMORY.md and HISTORY, learnings, error records, and runs ok, fallback and failed; and
rows of three end users (issue 26): one with every kind of row, one whose name needs quoting
in a path, one whose name holds a "/" (no page of their own), written through the domain
services and models while the API learns `user`.
"""

from dataclasses import dataclass, field
from datetime import timedelta
from html.parser import HTMLParser
from urllib.parse import urlencode, urljoin, urlsplit

import pytest
from django.test import Client
from django.urls import resolve
from django.utils import timezone

from apps.conversations.models import CompactMarker, Message
from apps.facts.models import Fact, FactStatus
from apps.lifecycle.models import HistoryEntry, Run
from tests.factories import SessionFactory
from tests.lifecycle.helpers import use_llm
from tests.review.users_seed import ALICE, seed_owner
from tests.support.client import ok as _ok
from tests.support.client import timed_messages as _messages
from tests.support.llm_server import Status

MAX_PAGES = 500
EXCLUDED = ("/admin/", "/api/", "/static/", "/accounts/logout/")
FILLED = "deploy"  # what the crawl types into the text boxes of GET forms (search, filters)
# The review routes that answer GET; the rest take POST only (actions).
POST_ONLY = {
    "fact_delete",
    "queue_approve",
    "queue_reject",
    "error_extend",
    "error_expire",
    "run_retry",
    "key_create",
    "key_revoke",
}


# -- the seed ---------------------------------------------------------------------------------


def _seed_sessions(api, now):
    """chat-1: a conversation with a tool call, compacted once (marker + archive); chat-2:
    a few turns on another day; long: 250 messages, three timeline pages."""
    long = _ok(api.post("/sessions", {"key": "long"}), 201)
    many = [{"role": "user", "content": f"line {i} of a long session"} for i in range(250)]
    _ok(api.post(f"/sessions/{long['id']}/messages", _messages(now - timedelta(days=9), many)), 201)
    chat = _ok(api.post("/sessions", {"key": "chat-1", "title": "Planning the deploy"}), 201)
    turns = []
    for i in range(6):
        turns.append({"role": "user", "content": f"question {i}: when do we deploy to berlin?"})
        turns.append({"role": "assistant", "content": f"answer {i}: the deploy is on friday"})
    turns += [
        {"role": "user", "content": "check the weather in tokyo"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "tokyo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "tool_name": "weather", "content": "rain"},
        {"role": "assistant", "content": "It rains in tokyo."},
    ]
    _ok(
        api.post(f"/sessions/{chat['id']}/messages", _messages(now - timedelta(days=3), turns)), 201
    )
    _ok(
        api.patch(
            "/agent/settings", {"settings": {"max_history_bytes": 600, "max_history_messages": 4}}
        )
    )
    _ok(api.post(f"/sessions/{chat['id']}/compact"))
    other = _ok(api.post("/sessions", {"key": "chat-2", "title": "Coffee"}), 201)
    more = [
        {"role": "user", "content": "I like my coffee black"},
        {"role": "assistant", "content": "Noted: black coffee."},
    ]
    _ok(
        api.post(f"/sessions/{other['id']}/messages", _messages(now - timedelta(days=1), more)), 201
    )
    return chat, other


def _seed_runs(api, settings, llm_server, chat, other):
    """A summary (ok, from the model), a failed one (the model answers 500), and a
    consolidation that writes HISTORY and MEMORY.md."""
    use_llm(settings, llm_server)
    llm_server.script(Status(500, "model down"))
    _ok(api.post(f"/sessions/{chat['id']}/summarize"))
    llm_server.script("The user plans a deploy to berlin on friday.")
    _ok(api.post(f"/sessions/{chat['id']}/summarize"))
    llm_server.script(
        '{"history_entry": "Planned the berlin deploy for friday.", '
        '"memory_update": "- The deploy to berlin is on friday."}'
    )
    _ok(api.post(f"/sessions/{chat['id']}/consolidate"))


def _seed_facts(api):
    """Active facts with versions, one superseded, and one pending review."""
    city = _ok(api.post("/facts", {"category": "places", "key": "home", "value": "berlin"}), 201)
    _ok(api.patch(f"/facts/{city['fact']['id']}", {"value": "munich"}))
    _ok(
        api.post(
            f"/facts/{city['fact']['id']}/supersede",
            {"value": "hamburg", "reason": "moved"},
        ),
        201,
    )
    _ok(api.post("/facts", {"category": "food", "key": "coffee", "value": "black"}), 201)
    _ok(api.patch("/agent/settings", {"settings": {"fact_review": True}}))
    _ok(api.post("/memory/save", {"content": "The user's dog is called Rex", "review": True}))


def _seed_notes_and_learnings(api):
    _ok(api.post("/entries", {"name": "notes/deploy.md", "content": "Deploy on friday."}), 201)
    _ok(api.post("/learnings", {"kind": "correction", "content": "Ask before deploying."}), 201)
    _ok(api.post("/errors", {"tool_name": "deploy", "error": "permission denied"}), 201)
    error = _ok(
        api.post(
            "/errors",
            {"tool_name": "weather", "error": "timeout after 10s", "arguments": {"city": "x"}},
        ),
        201,
    )
    _ok(api.patch(f"/errors/{error['id']}", {"outcome": "resolved", "resolution": "retry"}))
    _ok(api.post(f"/errors/{error['id']}/promote"), 201)


ODD_USER = "zoë ?#%&"
SLASH_USER = "team/eve"


def _seed_users(agent):
    seed_owner(agent, ALICE, "alice")
    seed_owner(agent, ODD_USER, "zoe", minutes=5)
    SessionFactory(agent=agent, key="eve-chat", user=SLASH_USER)


@pytest.fixture
def seeded(api, agent, settings, llm_server):
    now = timezone.now()
    chat, other = _seed_sessions(api, now)
    _seed_runs(api, settings, llm_server, chat, other)
    _seed_facts(api)
    _seed_notes_and_learnings(api)
    _seed_users(agent)
    return agent


def test_the_seed_holds_every_kind_of_row_a_page_shows(seeded):
    agent = seeded
    assert Message.objects.filter(agent=agent, session__user="").count() == 18 + 250
    assert Message.objects.filter(agent=agent).exclude(session__user="").count() == 2 + 2
    for user in (ALICE, ODD_USER):
        assert Fact.objects.filter(agent=agent, user=user).count() == 2
        assert HistoryEntry.objects.filter(agent=agent, user=user).count() == 1
    assert Message.objects.filter(agent=agent, role="tool").count() == 1
    assert CompactMarker.objects.filter(agent=agent).count() == 1
    statuses = set(Fact.objects.filter(agent=agent).values_list("status", flat=True))
    assert statuses == {FactStatus.ACTIVE, FactStatus.PENDING}
    assert Fact.objects.filter(agent=agent).exclude(superseded_by=None).count() == 1
    assert HistoryEntry.objects.filter(agent=agent, user="").count() == 1
    runs = sorted(Run.objects.filter(agent=agent, user="").values_list("kind", "status"))
    assert runs == [
        ("compact", "fallback"),
        ("consolidate", "ok"),
        ("extract", "fallback"),  # the compaction extracts its range's facts first
        ("summary", "failed"),
        ("summary", "ok"),
    ]


# -- the crawl --------------------------------------------------------------------------------


class _Links(HTMLParser):
    """Every same-page link target: <a href>, hx-get, and GET forms filled in."""

    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.forms: list[dict] = []
        self._form: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"])
        if a.get("hx-get"):
            self.hrefs.append(a["hx-get"])
        if tag == "form" and (a.get("method") or "get").lower() == "get":
            self._form = {"action": a.get("action") or "", "fields": {}, "choices": {}}
            self.forms.append(self._form)
        elif self._form is not None and tag in ("input", "select", "option") and a:
            self._field(tag, a)

    def _field(self, tag, a):
        form = self._form
        if tag == "select":
            form["select"] = a.get("name")
            form["choices"].setdefault(a.get("name"), [])
        elif tag == "option" and form.get("select"):
            form["choices"][form["select"]].append(a.get("value", ""))
        elif tag == "input" and a.get("name"):
            kind = a.get("type", "text")
            if kind in ("text", "search"):
                form["fields"][a["name"]] = FILLED
            elif kind in ("hidden",) or (kind in ("checkbox", "radio") and "checked" in a):
                form["fields"][a["name"]] = a.get("value", "on")

    def handle_endtag(self, tag):
        if tag == "select" and self._form is not None:
            self._form["select"] = None
        if tag == "form":
            self._form = None

    def targets(self) -> list[str]:
        """The links, then each GET form once per choice of each of its selects."""
        found = list(self.hrefs)
        for form in self.forms:
            base = dict(form["fields"])
            for name, values in form["choices"].items():
                base.setdefault(name, values[0] if values else "")
            found.append(f"{form['action']}?{urlencode(base)}")
            for name, values in form["choices"].items():
                found += [f"{form['action']}?{urlencode({**base, name: v})}" for v in values]
        return found


@dataclass
class Crawl:
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def paths(self) -> list[str]:
        return list(self.statuses)


def _same_site(page: str, target: str) -> str | None:
    """The path+query a link names, or None when it leaves the site or the crawl's scope."""
    url = urlsplit(urljoin("http://testserver" + page, target))
    if url.scheme not in ("http", "https") or url.netloc != "testserver":
        return None
    if url.path.startswith(EXCLUDED):
        return None
    return url.path + (f"?{url.query}" if url.query else "")


def crawl(client, start: str = "/review/") -> Crawl:
    """Breadth first from `start`, each path+query once, at most MAX_PAGES pages."""
    done = Crawl()
    queue = [start]
    while queue and len(done.statuses) < MAX_PAGES:
        page = queue.pop(0)
        if page in done.statuses:
            continue
        response = client.get(page)
        done.statuses[page] = response.status_code
        if response.status_code == 302:
            queue.append(_same_site(page, response["Location"]) or page)
            continue
        if response.status_code != 200 or "text/html" not in response["Content-Type"]:
            continue
        parser = _Links()
        parser.feed(response.content.decode())
        for target in parser.targets():
            found = _same_site(page, target)
            if found is not None and found not in done.statuses:
                queue.append(found)
    return done


def _review_names(paths) -> set[str]:
    names = set()
    for path in paths:
        match = resolve(urlsplit(path).path)
        if match.namespace == "review":
            names.add(match.url_name)
    return names


def _all_review_names() -> set[str]:
    from apps.review.urls import urlpatterns

    return {p.name for p in urlpatterns}


def _client(user) -> Client:
    """Logged in as `user`; a server error comes back as a 500, so the crawl lists them all."""
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def test_every_page_reachable_from_review_answers_and_every_get_route_is_reached(seeded, editor):
    done = crawl(_client(editor))

    errors = {path: status for path, status in done.statuses.items() if status not in (200, 302)}
    assert errors == {}
    assert len(done.statuses) < MAX_PAGES, "the crawl hit its cap: some pages were not visited"
    assert _review_names(done.paths) == _all_review_names() - POST_ONLY
    assert "/review/agents/alice-bot/" in done.statuses
    # Every user's page, the one whose name is quoted included; none for a name with a "/".
    user_pages = sorted(p for p in done.paths if resolve(urlsplit(p).path).url_name == "user")
    assert user_pages == [
        "/review/agents/alice-bot/users/telegram:42/",
        "/review/agents/alice-bot/users/zo%C3%AB%20%3F%23%25&/",
    ]


def test_another_team_gets_404_on_every_crawled_page_of_the_agent(seeded, editor, outsider):
    done = crawl(_client(editor))
    agent_pages = [p for p in done.paths if p.startswith("/review/agents/alice-bot/")]
    assert len(agent_pages) > 20
    outsider_client = _client(outsider)

    answers = {path: outsider_client.get(path).status_code for path in agent_pages}

    assert {path: s for path, s in answers.items() if s != 404} == {}
    assert not any("alice-bot" in path for path in crawl(outsider_client).paths)
