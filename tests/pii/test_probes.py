"""Issue 39's PII suite: Carol and Bruno each have failing tool calls whose arguments, errors,
requests and error records carry an e-mail address, a phone number, an IBAN, a card number,
an IP address, a token and their name. Every read path, as the other user (and agent-wide),
returns none of those strings, in 343 probes; the lesson (the tool, the error class and
the resolution) still reaches them. The user's own reads see their raw text."""

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from apps.agents.models import MemberRole
from apps.agents.services import membership_set
from tests.mcp.conftest import McpClient, http_client
from tests.pii.people import (
    CHARGE,
    ERROR_CLASS,
    PEOPLE,
    RESOLUTION,
    Person,
    build,
    ok,
    other_of,
)
from tests.support.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)

GENERIC = ("payment refused", "charge_card", "card declined by the bank")


def queries(viewer: Person) -> list[str]:
    """The other user's every datum as a query, then generic ones about the failure."""
    theirs = other_of(viewer).personal
    return [v for k, v in theirs.items() if k != "user"] + list(GENERIC)


@dataclass
class Probes:
    """Each probe: the answer must hold none of the other user's marks; a failure is
    recorded and the run goes on, so one run lists them all."""

    count: int = 0
    failures: list[str] = field(default_factory=list)

    def clean(self, label: str, viewer: Person, text: str, *, also: Person | None = None) -> str:
        self.count += 1
        lowered = text.lower()
        for person in [other_of(viewer), *([also] if also else [])]:
            leaked = [mark for mark in person.marks if mark in lowered]
            if leaked:
                self.failures.append(f"{label} as {viewer.name}: {person.name}'s {leaked}")
        return lowered

    def json(self, label: str, viewer: Person, response, status: int = 200, **kw) -> Any:
        if response.status_code != status:
            self.count += 1
            self.failures.append(f"{label}: {response.status_code} {response.content[:300]!r}")
            return None
        body = response.json()
        echo = {k: v for k, v in body.items() if k != "query"} if isinstance(body, dict) else body
        self.clean(label, viewer, json.dumps(echo, ensure_ascii=False), **kw)
        return body

    def lesson(self, label: str, text: str, *parts: str) -> None:
        missing = [p for p in parts if p.lower() not in text.lower()]
        if missing:
            self.failures.append(f"{label}: the lesson's {missing} is missing")


@pytest.fixture
def api(key) -> ApiClient:
    return ApiClient(key=key, client=Client())


@pytest.fixture
def world(api) -> None:
    build(api)


@pytest.fixture
def mcp(live_url, key):
    client = http_client(f"{live_url}/mcp", key)
    yield client
    client.close()


@pytest.fixture
def reviewer(agent) -> Client:
    person = get_user_model().objects.create_user(username="vera", password="pw-vera")
    membership_set(team=agent.team, user=person, role=MemberRole.VIEWER)
    client = Client()
    client.force_login(person)
    return client


def _api_reads(p: Probes, api: ApiClient, viewer: Person, q: str) -> None:
    """11 probes of the API's search paths for one query, as `viewer`."""
    mine = {"user": viewer.user}
    for mode in ["keyword", "hybrid", "contains", "semantic"]:
        body = {"query": q, "mode": mode, "k": 50, **mine}
        p.json(f"POST /search {mode} {q!r}", viewer, api.post("/search", body))
    p.json(f"POST /memory/search {q!r}", viewer,
           api.post("/memory/search", {"query": q, "k": 50, **mine}))  # fmt: skip
    p.json(f"POST /memory/recall {q!r}", viewer,
           api.post("/memory/recall", {"query": q, "k": 50, **mine}))  # fmt: skip
    context = {"session_id": viewer.session_key, "query": q, "lifecycle": "off"}
    body = p.json(f"POST /context {q!r}", viewer, api.post("/context", context))
    if body is not None:
        parts = "\n".join(part["content"] for part in body["system"]["parts"])
        p.lesson(f"POST /context {q!r} system", parts, CHARGE, RESOLUTION)
    for how in [{"session_id": viewer.session_key}, mine, {}]:
        label = f"POST /errors/search {q!r} {how}"
        body = p.json(label, viewer, api.post("/errors/search", {"query": q, "k": 20, **how}),
                      also=None if how else viewer)  # fmt: skip
        if body is not None and q in GENERIC[:2]:
            text = json.dumps(body["items"])
            p.lesson(label, text, CHARGE, ERROR_CLASS, RESOLUTION)


def _api_listings(p: Probes, api: ApiClient, viewer: Person) -> None:
    """The listings as `viewer`, and agent-wide (where neither user's data may show)."""
    mine = {"user": viewer.user}
    body = p.json("GET /errors", viewer, api.get("/errors", {"limit": 100, **mine}))
    ids = [r["id"] for r in body["items"]] if body else []
    p.lesson("GET /errors", json.dumps(body), CHARGE, ERROR_CLASS, RESOLUTION)
    for record_id in ids:
        p.json(f"GET /errors/{record_id}", viewer, api.get(f"/errors/{record_id}", mine))
    p.json("GET /errors agent-wide", viewer, api.get("/errors", {"limit": 100}), also=viewer)
    p.json("GET /learnings", viewer, api.get("/learnings", {"limit": 100, **mine}))
    p.json("GET /learnings all_users", viewer,
           api.get("/learnings", {"limit": 100, "kind": "error", "all_users": "true"}),
           also=viewer)  # fmt: skip
    for path in ["/facts", "/entries", "/runs", "/memory/history", "/sessions"]:
        p.json(f"GET {path}", viewer, api.get(path, {"limit": 100, **mine}))


def _mcp_reads(p: Probes, mcp: McpClient, viewer: Person, q: str) -> None:
    """4 probes of the MCP tools for one query, as `viewer`."""
    calls: list[tuple[str, dict]] = [
        ("get_context", {"session_id": viewer.session_key, "query": q, "lifecycle": "off"}),
        ("memory_search", {"query": q, "k": 50, "user": viewer.user}),
        ("search_chat_history", {"query": q, "mode": "hybrid", "k": 50, "user": viewer.user}),
        ("search_error_memory", {"query": q, "k": 20, "session_id": viewer.session_key}),
    ]
    for tool, args in calls:
        result = mcp.call(tool, args)
        if result.is_error:
            p.count += 1
            p.failures.append(f"MCP {tool} {q!r}: {result.content[0].text[:300]}")
            continue
        body = {k: v for k, v in result.structured_content.items() if k != "query"}
        p.clean(f"MCP {tool} {q!r}", viewer, json.dumps(body, ensure_ascii=False))


def _mcp_records(p: Probes, mcp: McpClient, viewer: Person, ids: list[int]) -> None:
    for record_id in ids:
        result = mcp.call("read_error_memory", {"error_id": record_id, "user": viewer.user})
        text = "\n".join(c.text for c in result.content if c.type == "text")
        p.clean(f"MCP read_error_memory {record_id}", viewer, text)


# What a review page shows of the request itself: its forms (the query as typed, the user
# filter, whose choices list the agent's users to the team by design) and the search's
# summary line, which quotes the query.
_ECHO = re.compile(r'<form.*?</form>|<p class="muted search-summary">.*?</p>', re.DOTALL)


def _page(response) -> str:
    # <wbr>: a tool name's place to wrap (review_tools.tool_name), not a character of it.
    return _ECHO.sub("", response.content.decode()).replace("<wbr>", "")


def _review(p: Probes, client: Client, slug: str, viewer: Person, q: str | None) -> None:
    base = f"/review/agents/{slug}"
    if q is None:
        for page in ["learnings", "facts", "entries", "runs", "sessions"]:
            response = client.get(f"{base}/{page}/", {"user": viewer.user})
            text = p.clean(f"review {page}", viewer, _page(response))
            if response.status_code != 200:
                p.failures.append(f"review {page}: {response.status_code}")
            elif page == "learnings":
                p.lesson("review learnings", text, CHARGE, RESOLUTION)
        return
    response = client.get(f"{base}/search/", {"q": q, "mode": "hybrid", "user": viewer.user})
    p.clean(f"review search {q!r}", viewer, _page(response))


def _hints(p: Probes, api: ApiClient, viewer: Person) -> None:
    """The viewer's own charge_card fails again: the hints teach the lesson, nobody's data."""
    batch = [{"role": "tool", "tool_name": CHARGE, "is_error": True,
              "content": f"{ERROR_CLASS}: card expired"}]  # fmt: skip
    body = p.json("append hints", viewer,
                  api.post(f"/sessions/{viewer.session_key}/messages", {"messages": batch}),
                  status=201)  # fmt: skip
    if body is not None:
        p.lesson("append hints", json.dumps(body["hints"]), f"apply: {RESOLUTION}")


def test_no_read_path_shows_another_users_personal_data_and_the_lesson_reaches_everyone(
    api, world, mcp, reviewer, agent
):
    p = Probes()
    ids = [r["id"] for r in ok(api.get("/errors", {"limit": 100}))["items"]]
    for viewer in PEOPLE:
        for q in queries(viewer):
            _api_reads(p, api, viewer, q)
            _mcp_reads(p, mcp, viewer, q)
            _review(p, reviewer, agent.slug, viewer, q)
        _api_listings(p, api, viewer)
        _mcp_records(p, mcp, viewer, ids)
        _review(p, reviewer, agent.slug, viewer, None)
        _hints(p, api, viewer)

    assert p.failures == [], "\n".join(p.failures)
    assert (len(ids), p.count) == (3, 343)  # one lesson per failure, whoever hit it


def _raw_for(api: ApiClient, person: Person, path: str, body: dict | None = None) -> str:
    if body is None:
        return json.dumps(ok(api.get(path, {"limit": 100, "user": person.user})))
    return json.dumps(ok(api.post(path, {**body, "user": person.user})))


def test_each_user_reads_their_own_failures_raw(api, world):
    for person in PEOPLE:
        listed = _raw_for(api, person, "/errors")
        found = _raw_for(api, person, "/errors/search", {"query": ERROR_CLASS, "k": 20})
        learnings = _raw_for(api, person, "/learnings")
        for text in (listed, found, learnings):
            assert person.email in text
            assert person.name in text
            assert all(mark not in text.lower() for mark in other_of(person).marks)


def test_the_same_failure_of_two_users_is_one_lesson(api, world):
    records = ok(api.get("/errors", {"tool_name": CHARGE, "limit": 100}))["items"]
    captured = [r for r in records if r["strategy"] == ""]
    resolved = [r for r in records if r["outcome"] == "resolved"]

    assert len(captured) == 1
    assert captured[0]["hit_count"] == 1  # Bruno's failure was Carol's, de-identified
    assert len(resolved) == 1
    assert RESOLUTION in resolved[0]["resolution"]
