"""Phone-sized pages (issue 28): on a 390 px phone every review page, the home page, the login
and the password change pages fit the screen's width: the document does not scroll sideways.
They fit a 1366 px window too. A failure names each page that does not fit, its widths and
its widest culprits (tests/review/e2e/conftest.py, Browser.overflow).

The agent is seeded with what makes pages wide in real use: long session keys (with hyphens,
and without any break), long fact keys and categories, long user names, URLs, a long unbroken
token, tool calls with JSON arguments, long errors, and tables of many columns (runs,
sessions, facts, learnings, error memory, the audit log). The page list comes from the URL
conf: a review route that answers GET and has no page here fails the first test.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import URLPattern, resolve, reverse
from django.utils import timezone

from apps.agents.models import AuditEvent
from apps.agents.services import api_key_issue
from apps.conversations.models import CompactMarker, Session
from apps.entries.models import Entry
from apps.facts.models import Fact, FactStatus
from apps.learnings.models import ErrorRecord, Learning
from apps.lifecycle.models import HistoryEntry, Run
from apps.review.urls import urlpatterns
from tests.lifecycle.helpers import use_llm
from tests.review.e2e.conftest import DESKTOP, PHONE
from tests.review.test_crawl import POST_ONLY
from tests.support.client import ok as _ok
from tests.support.client import timed_messages as _messages
from tests.support.llm_server import Status

SLUG = "alice-bot"

# What makes a page wide.
TOKEN = "sk-live-" + "9fQ2xLw7Rt4Zp8Kd3Mv6Hs1Nc5Jb0Ge" * 4  # 136 characters, no break
URL = (
    "https://grafana.internal.example.com/d/berlin-prod-latency/production-latency-overview"
    "?orgId=1&from=now-24h&to=now&var-service=checkout-api&var-region=eu-central-1&refresh=30s"
)
LONG_KEY = "telegram-group-1001234567890-thread-4242-support-escalation-berlin-production-deploy"
UNBROKEN_KEY = "sess_" + "3f9a6c1e8b2d4f7a" * 6  # 101 characters, no break
LONG_USER = "whatsapp:+4915112345678:group:120363041234567890@g.us:participant:4915198765432"
CATEGORY = "infrastructure_and_deployment_preferences_of_the_platform_team"
FACT_KEY = "preferred_notification_channel_for_production_incidents_outside_business_hours"
TOOL = "kubernetes_rollout_status_for_namespace_and_deployment"
NOTE = "notes/projects/berlin-production-deploy/runbook-for-the-checkout-service.md"
ARCHIVE = f"archive/{LONG_KEY}/1"


def _deploy_turns() -> list[dict]:
    """A conversation with a URL, a token, a tool call with JSON arguments and a tool error."""
    arguments = json.dumps({"namespace": "checkout-production-eu-central-1", "dashboard": URL})
    turns = [
        {"role": "user", "content": f"Open {URL} and tell me why p99 jumped after the deploy."},
        {"role": "assistant", "content": f"The deploy key in the logs is {TOKEN}; rotating it."},
    ]
    for i in range(4):
        turns.append({"role": "user", "content": f"question {i}: is {LONG_KEY} still paged?"})
        turns.append({"role": "assistant", "content": f"answer {i}: yes, see {URL}"})
    turns += [
        {"role": "user", "content": "check the rollout"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_" + "7" * 40,
                    "type": "function",
                    "function": {"name": TOOL, "arguments": arguments},
                }
            ],
        },
        {
            "role": "tool",
            "tool_call_id": "call_" + "7" * 40,
            "tool_name": TOOL,
            "content": "Error: /var/lib/kubelet/pods/" + "a1b2c3d4" * 12 + "/volumes not found",
            "is_error": True,
        },
        {"role": "assistant", "content": f"The rollout failed; the runbook is at {URL}."},
    ]
    return turns


def _seed_sessions(api, now) -> tuple[dict, dict]:
    """LONG_KEY (of LONG_USER, compacted once: a marker and an archive) and UNBROKEN_KEY."""
    chat = _ok(
        api.post(
            "/sessions",
            {
                "key": LONG_KEY,
                "title": "Planning the berlin production deploy with the on-call team "
                "and the release managers of the checkout service",
                "user": LONG_USER,
            },
        ),
        201,
    )
    start = now - timedelta(days=2)
    _ok(api.post(f"/sessions/{chat['id']}/messages", _messages(start, _deploy_turns())), 201)
    settings = {"max_history_bytes": 600, "max_history_messages": 4}
    _ok(api.patch("/agent/settings", {"settings": settings}))
    _ok(api.post(f"/sessions/{chat['id']}/compact"))
    other = _ok(api.post("/sessions", {"key": UNBROKEN_KEY, "title": TOKEN}), 201)
    turns = [
        {"role": "user", "content": f"my api token is {TOKEN}"},
        {"role": "assistant", "content": "Noted; I will not repeat it."},
    ]
    _ok(api.post(f"/sessions/{other['id']}/messages", _messages(now, turns)), 201)
    return chat, other


def _seed_runs(api, settings, llm_server, chat) -> None:
    """A failed summary (the model answers 500 with a long body), a summary, and a
    consolidation that writes HISTORY and MEMORY.md."""
    use_llm(settings, llm_server)
    llm_server.script(Status(500, f"upstream model gateway error at {URL}: {TOKEN}"))
    _ok(api.post(f"/sessions/{chat['id']}/summarize"))
    llm_server.script(f"The user plans the berlin deploy; the dashboard is {URL}; key {TOKEN}.")
    _ok(api.post(f"/sessions/{chat['id']}/summarize"))
    answer = {
        "history_entry": f"Planned the berlin deploy; dashboard {URL}; token {TOKEN}.",
        "memory_update": f"- The deploy to berlin is on friday.\n- Dashboard: {URL}",
    }
    llm_server.script(json.dumps(answer))
    _ok(api.post(f"/sessions/{chat['id']}/consolidate"))


def _seed_facts(api) -> None:
    """A long-keyed fact with versions and a successor; the user's fact; one pending."""
    fact = {"category": CATEGORY, "key": FACT_KEY, "value": f"pager, then {URL}"}
    first = _ok(api.post("/facts", fact), 201)["fact"]
    _ok(api.patch(f"/facts/{first['id']}", {"value": f"the token {TOKEN} opens the pager"}))
    supersede = {"value": f"slack #incidents, then {URL}", "reason": f"moved, see {URL}"}
    _ok(api.post(f"/facts/{first['id']}/supersede", supersede), 201)
    mine = {"category": CATEGORY, "key": FACT_KEY + "_mine", "value": TOKEN, "user": LONG_USER}
    _ok(api.post("/facts", mine), 201)
    _ok(api.patch("/agent/settings", {"settings": {"fact_review": True}}))
    save = {"content": f"The user's deploy dashboard is {URL} and the key is {TOKEN}"}
    _ok(api.post("/memory/save", {**save, "review": True}))


def _seed_entries_and_learnings(api) -> None:
    _ok(api.post("/entries", {"name": NOTE, "content": f"# Runbook\n\nSee {URL}\n\n{TOKEN}"}), 201)
    learning = {"kind": "correction", "content": f"Never paste {TOKEN}; link {URL} instead."}
    _ok(api.post("/learnings", learning), 201)
    failure = {"tool_name": TOOL, "error": f"403 at {URL}: {TOKEN}", "arguments": {"url": URL}}
    error = _ok(api.post("/errors", failure), 201)
    fix = {"outcome": "resolved", "strategy": f"retry with {TOKEN}", "resolution": f"use {URL}"}
    _ok(api.patch(f"/errors/{error['id']}", fix))


def _seed_audit(editor, agent) -> None:
    """An editor's change on the review pages: an audit event with a long before and after."""
    fact = Fact.objects.get(agent=agent, key=FACT_KEY, valid_to=None)
    client = Client()
    client.force_login(editor)
    form = {"value": f"{TOKEN} {URL}", "category": CATEGORY, "key": FACT_KEY, "importance": 0.9}
    response = client.post(reverse("review:fact_edit", args=[SLUG, fact.pk]), form)
    assert response.status_code == 302, response.content


@pytest.fixture
def wide(api, agent, editor, settings, llm_server):
    """The agent, seeded with the rows that make pages wide."""
    now = timezone.now()
    chat, _ = _seed_sessions(api, now)
    _seed_runs(api, settings, llm_server, chat)
    _seed_facts(api)
    _seed_entries_and_learnings(api)
    _seed_audit(editor, agent)
    # a key bound to the long user, with a long unbroken name (names are at most 100)
    api_key_issue(agent=agent, name=f"app-{UNBROKEN_KEY[:90]}", user=LONG_USER, read_only=True)
    return agent


# -- the pages --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    label: str
    path: str


def _r(name: str, *args) -> str:
    return reverse(f"review:{name}", args=[SLUG, *args])


def _sessions():
    return Session.objects.get(key=LONG_KEY), Session.objects.get(key=UNBROKEN_KEY)


def _facts():
    current = Fact.objects.get(key=FACT_KEY, valid_to=None)
    superseded = Fact.objects.get(key=FACT_KEY, superseded_by=current)
    pending = Fact.objects.get(status=FactStatus.PENDING)
    return current, superseded, pending


# Every review route that answers GET: its pages, from the seed. A route added to
# apps/review/urls.py without an entry here fails the first test below.
ROUTES: dict[str, Callable[[], list[Page]]] = {
    "dashboard": lambda: [Page("dashboard", reverse("review:dashboard"))],
    "agent": lambda: [Page("agent overview", _r("agent"))],
    "audit": lambda: [Page("audit log", _r("audit"))],
    "sessions": lambda: [Page("sessions", _r("sessions"))],
    "timeline": lambda: [
        Page("timeline, long key", _r("timeline", _sessions()[0].pk)),
        Page("timeline, unbroken key", _r("timeline", _sessions()[1].pk)),
    ],
    "search": lambda: [
        Page("search form", _r("search")),
        Page("search hits", _r("search") + "?q=berlin&mode=keyword&session=&user=+"),
    ],
    "facts": lambda: [Page("facts", _r("facts"))],
    "fact": lambda: [
        Page("fact", _r("fact", _facts()[0].pk)),
        Page("fact, superseded", _r("fact", _facts()[1].pk)),
    ],
    "fact_edit": lambda: [Page("fact edit", _r("fact_edit", _facts()[0].pk))],
    "queue": lambda: [Page("review queue", _r("queue"))],
    "queue_edit": lambda: [Page("queue edit", _r("queue_edit", _facts()[2].pk))],
    "queue_merge": lambda: [
        Page("queue merge choice", _r("queue_merge", _facts()[2].pk)),
        Page("queue merge choice, searched", _r("queue_merge", _facts()[2].pk) + "?q=pager"),
    ],
    "entries": lambda: [Page("entries", _r("entries"))],
    "entry": lambda: [
        Page(f"entry {e.name}", _r("entry", e.pk)) for e in Entry.objects.order_by("name")
    ],
    "history": lambda: [
        Page(f"history {m}", _r("history", m))
        for m in sorted({h.created_at.strftime("%Y-%m") for h in HistoryEntry.objects.all()})
    ],
    "learnings": lambda: [Page("learnings", _r("learnings"))],
    "learning_edit": lambda: [
        Page("learning edit", _r("learning_edit", Learning.objects.order_by("pk")[0].pk))
    ],
    "error_edit": lambda: [
        Page(f"error edit #{e.pk}", _r("error_edit", e.pk)) for e in ErrorRecord.objects.all()
    ],
    "runs": lambda: [Page("runs", _r("runs"))],
    "run": lambda: [
        Page(f"run {r.kind} {r.status}", _r("run", r.pk)) for r in Run.objects.order_by("pk")
    ],
    "users": lambda: [Page("users", _r("users"))],
    "user": lambda: [Page("user", _r("user", LONG_USER))],
    "user_erase": lambda: [Page("user erase", _r("user_erase", LONG_USER))],
    "keys": lambda: [Page("api keys", _r("keys"))],
}

OUTSIDE = [  # the pages around the review pages, logged in
    Page("home", "/"),
    Page("password change", "/accounts/password_change/"),
]


def _get_routes() -> set[str]:
    return {p.name for p in urlpatterns if isinstance(p, URLPattern)} - POST_ONLY


def test_every_get_route_has_a_phone_page_and_the_rest_take_post_only(editor_client):
    assert set(ROUTES) == _get_routes()
    # The exemptions are POST only: a GET is refused before anything is looked up.
    for name in sorted(POST_ONLY):
        pattern = next(p for p in urlpatterns if p.name == name)
        args = dict.fromkeys(pattern.pattern.converters, "1")
        path = reverse(f"review:{name}", kwargs={**args, "slug": SLUG})
        assert editor_client.get(path).status_code == 405, name


def _fits(browser, page: Page, failures: dict, *, person: str | None = "eddie") -> None:
    """Open `page` on the phone and check it (_check)."""
    browser.visit(page.path)
    assert browser.path.split("?")[0] == urlsplit(page.path).path, page
    _check(browser, page, failures, person=person)


def _check(browser, page: Page, failures: dict, *, person: str | None = "eddie") -> None:
    """The page on screen has the viewport meta tag and its header names `person` (None:
    logged out, it offers to log in); what sticks out sideways on the phone and then on the
    desktop window, if anything, goes into `failures` under `page`'s label and the width."""
    assert browser.width == PHONE
    header = browser.texts("header.site nav a, header.site nav button")
    assert header == (["Review", person, "Log out"] if person else ["Log in"]), page
    viewport = browser.driver.execute_script(
        "return document.querySelector('meta[name=viewport]').content"
    )
    assert viewport == "width=device-width, initial-scale=1", page
    found = browser.overflow()
    browser.set_width(DESKTOP)
    on_desktop = browser.overflow()
    browser.set_width(PHONE)
    if found is not None:
        failures[f"{page.label} ({page.path}) at {PHONE} px"] = found
    else:
        assert browser.driver.execute_script("return window.innerWidth") == PHONE, page
    if on_desktop is not None:
        failures[f"{page.label} ({page.path}) at {DESKTOP} px"] = on_desktop


def test_the_seed_holds_the_wide_rows(wide):
    assert CompactMarker.objects.get(session=_sessions()[0]).archive_name == ARCHIVE
    entries = sorted(Entry.objects.values_list("name", flat=True))
    assert entries[:2] + entries[3:] == ["MEMORY.md", ARCHIVE, NOTE]
    assert re.fullmatch(r"memory/\d{4}-\d{2}-\d{2}\.md", entries[2])  # the day's log
    assert sorted(Run.objects.values_list("kind", "status")) == [
        ("compact", "fallback"),
        ("consolidate", "ok"),
        ("extract", "fallback"),  # the compaction extracts its range's facts first
        ("summary", "failed"),
        ("summary", "ok"),
    ]
    # The tool error in the conversation is captured; the other one is posted.
    assert sorted(ErrorRecord.objects.values_list("tool_name", "outcome")) == [
        (TOOL, "open"),
        (TOOL, "resolved"),
    ]
    assert list(AuditEvent.objects.values_list("action", flat=True)) == ["fact.update"]
    assert Fact.objects.filter(user=LONG_USER).count() == 1
    assert Fact.objects.filter(status=FactStatus.PENDING).count() == 1


def test_no_review_page_scrolls_sideways_on_a_390px_phone_or_a_1366px_window(browser, wide):
    pages = [page for name in ROUTES for page in ROUTES[name]()]
    assert {resolve(urlsplit(p.path).path).url_name for p in pages} == _get_routes()
    assert len(pages) == 36
    failures: dict[str, dict] = {}

    browser.set_width(PHONE)
    _fits(browser, Page("login", "/accounts/login/"), failures, person=None)
    browser.login("eddie", "pw-eddie")
    for page in [*OUTSIDE, *pages]:
        _fits(browser, page, failures)

    assert failures == {}, "pages wider than the screen:\n" + "\n".join(
        f"{label}: {json.dumps(found)}" for label, found in failures.items()
    )


# The chips of a hit, the text of its message, and where each sits, on screen.
HIT_BOXES_JS = """
const area = (els) => els.reduce((sum, e) => {
  const r = e.getBoundingClientRect(); return sum + r.width * r.height; }, 0);
return [...document.querySelectorAll('ol.window li.is-hit')].map((li) => {
  const head = li.querySelector('.hit-head'), line = li.querySelector('.line');
  return {chips: area([...head.querySelectorAll('.score, .leg')]),
          head: area([head]), line: area([line]),
          head_top: head.getBoundingClientRect().top,
          line_bottom: line.getBoundingClientRect().bottom,
          chip_px: [...head.querySelectorAll('.score, .leg')].map(
            (e) => parseFloat(getComputedStyle(e).fontSize))};
});
"""


def test_a_search_hits_chips_are_small_and_under_its_message_on_a_390px_phone(browser, wide):
    browser.set_width(PHONE)
    browser.visit("/accounts/login/")
    browser.login("eddie", "pw-eddie")
    browser.visit(_r("search") + "?q=berlin&mode=hybrid&session=&user=+")

    hits = browser.driver.execute_script(HIT_BOXES_JS)
    assert len(hits) == 16
    for hit in hits:
        assert hit["chips"] > 0, hit
        assert hit["chips"] < hit["line"], hit  # the message takes more room than its chips
        assert hit["head_top"] >= hit["line_bottom"], hit  # under the message
        assert set(hit["chip_px"]) <= {11.2, 10.4}, hit  # 0.7rem and 0.65rem
    browser.show(browser.one("ol.window li.is-hit"), "search-hit-phone")

    browser.set_width(DESKTOP)  # on the desktop the hit's line leads, above its message
    hits = browser.driver.execute_script(HIT_BOXES_JS)
    assert all(hit["head_top"] < hit["line_bottom"] for hit in hits)


def test_a_long_tool_name_wraps_only_after_an_underscore(browser, wide):
    browser.visit("/accounts/login/")
    browser.login("eddie", "pw-eddie")
    browser.visit(_r("learnings"))

    names = browser.all("table.errors td[data-label=Tool] code.tool-name")
    assert [n.text for n in names] == [TOOL, TOOL]
    for width in (DESKTOP, PHONE):
        browser.set_width(width)
        for name in names:
            lines = browser.lines(name)
            assert "".join(lines) == TOOL, (width, lines)
            assert all(line.endswith("_") for line in lines[:-1]), (width, lines)
