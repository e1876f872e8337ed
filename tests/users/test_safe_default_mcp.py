"""Issue 39 over MCP: every tool that reads (read-only hints, and get_context), called
in-process as the connection's agent, follows the API's rule. Without a session, `user` or
`all_users` it returns the agent's memory and nothing of any user; with `all_users` both
users'; with `user` theirs and the agent's; `user` with `all_users` is a tool error naming
`all_users`."""

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from apps.mcp.tools import TOOLS, run
from tests.users.reads import WORDS, Found, context_found, matching, messages_found, sources_found
from tests.users.world import AGENT, AGENT_WORDS, ALICE, CAROLINE, OPS_KEY, PEOPLE, World

pytestmark = pytest.mark.django_db

EVERYONE = (AGENT, ALICE.user, CAROLINE.user)
SESSIONS = {p.user: p.session_key for p in PEOPLE}
CONTEXT_QUERIES = (*ALICE.words[:2], *CAROLINE.words[:2], *AGENT_WORDS[:2])


@dataclass(frozen=True)
class ToolRead:
    """A tool that reads: its calls' arguments for a `how`, the ids of an answer, and what
    must be among them when `visible` owners are seen."""

    name: str
    args: Callable[[dict], list[dict]]
    found: Callable[[Any], Found] = lambda body: {}
    expect: Callable[[World, tuple[str, ...]], Found] = lambda world, visible: {}


def _per_word(param: str, **extra: Any) -> Callable[[dict], list[dict]]:
    return lambda how: [{param: w, **extra, **how} for w in WORDS]


def _context(how: dict) -> list[dict]:
    session = how.get("session_id") or SESSIONS.get(how.get("user", ""), OPS_KEY)
    rest = {k: v for k, v in how.items() if k != "session_id"}
    return [{"session_id": session, "query": q, "lifecycle": "off", **rest}
            for q in CONTEXT_QUERIES]  # fmt: skip


def _session_messages(world: World, visible: tuple[str, ...]) -> Found:
    return {"message": world.ids(visible[-1], "message")}


TOOL_READS = [
    ToolRead("search_chat_history", _per_word("query", mode="keyword", k=50), messages_found,
             matching("message")),
    ToolRead("search_history", _per_word("q", limit=100),
             lambda b: {"history": {h["id"] for h in b["items"]}}, matching("history")),
    ToolRead("memory_recall", _per_word("query", k=20),
             lambda b: {"fact": {h["fact"]["id"] for h in b["items"]}}, matching("fact")),
    ToolRead("memory_search", _per_word("query", k=50), sources_found,
             matching("fact", "entry", "learning", "history")),
    ToolRead("entry_search", _per_word("q", limit=50),
             lambda b: {"entry": {h["entry"]["id"] for h in b["items"]}}, matching("entry")),
    ToolRead("get_context", _context, context_found, _session_messages),
    ToolRead("get_window", lambda how: [{"session_id": OPS_KEY, **how}],
             lambda b: {"message": {m["id"] for m in b["messages"]}}),
    ToolRead("search_error_memory", _per_word("query")),
    ToolRead("read_error_memory", lambda how: [{**how}]),
]  # fmt: skip


def _takes(tool: str) -> set[str]:
    return set(TOOLS[tool].params.model_json_schema().get("properties", {}))


def _text(body: dict) -> str:
    return json.dumps({k: v for k, v in body.items() if k != "query"}, ensure_ascii=False).lower()


def probe(agent, world: World, read: ToolRead, how: dict, visible: tuple[str, ...]) -> list[str]:
    """What went wrong: a tool error, a hidden user's word, id or row, a visible row missing."""
    failures, texts, found = [], [], defaultdict(set)
    for args in read.args(how):
        result = run(TOOLS[read.name], agent, args)
        if result.is_error:
            failures.append(f"{read.name} {args}: {result.content[0].text[:200]}")
            continue
        body = result.structured_content or {}
        texts.append(_text(body))
        for kind, ids in read.found(body).items():
            found[kind] |= ids
    text = "\n".join(texts)
    for person in (p for p in PEOPLE if p.user not in visible):
        words = [w for w in (*person.words, person.user) if w.lower() in text]
        rows = {k: sorted(ids & world.ids(person.user, k)) for k, ids in found.items()}
        if words or any(rows.values()):
            failures.append(f"{read.name} {how}: {person.name}'s {words} {rows}")
    for kind, ids in read.expect(world, visible).items():
        if missing := ids - found.get(kind, set()):
            failures.append(f"{read.name} {how}: {kind} missing {sorted(missing)}")
    return failures


def _probe_all(agent, world: World, how: dict, visible: tuple[str, ...]) -> list[str]:
    taking = [r for r in TOOL_READS if set(how) <= _takes(r.name)]
    assert len(taking) >= 5, how
    return [f for read in taking for f in probe(agent, world, read, how, visible)]


def test_every_tool_that_reads_is_probed():
    reading = {name for name, tool in TOOLS.items() if tool.about.hints.read_only}

    assert {r.name for r in TOOL_READS} == reading | {"get_context"}


def test_every_tool_that_reads_for_a_user_takes_all_users():
    takes = {r.name: _takes(r.name) for r in TOOL_READS}
    user_only = {name for name, t in takes.items() if "user" in t and "all_users" not in t}

    assert user_only == {"get_context"}  # it always names a session


def test_a_tool_call_without_a_session_user_or_all_users_sees_the_agents_memory_alone(
    agent, world: World
):
    failures = _probe_all(agent, world, {}, (AGENT,))

    assert failures == [], "\n".join(failures)


def test_a_tool_call_in_a_session_without_a_user_sees_the_agents_memory_alone(agent, world):
    failures = _probe_all(agent, world, {"session_id": OPS_KEY}, (AGENT,))

    assert failures == [], "\n".join(failures)


def test_a_tool_call_with_all_users_sees_every_users_memory(agent, world: World):
    failures = _probe_all(agent, world, {"all_users": True}, EVERYONE)

    assert failures == [], "\n".join(failures)


@pytest.mark.parametrize("person", PEOPLE, ids=lambda p: p.name)
def test_a_tool_call_with_user_sees_theirs_and_the_agents(agent, world: World, person):
    failures = _probe_all(agent, world, {"user": person.user}, (AGENT, person.user))

    assert failures == [], "\n".join(failures)


@pytest.mark.parametrize(
    "how",
    [{"user": ALICE.user, "all_users": True}, {"session_id": OPS_KEY, "all_users": True}],
    ids=["user", "session"],
)
def test_all_users_with_user_or_a_session_is_a_tool_error_naming_it(agent, world, how):
    taking = [r for r in TOOL_READS if set(how) <= _takes(r.name)]
    results = {r.name: run(TOOLS[r.name], agent, r.args(how)[0]) for r in taking}
    details = {name: json.loads(r.content[0].text) for name, r in results.items()}

    # 5, and the two error memory reads (issue 39: they take `user`)
    assert len(results) >= 3 if "session_id" in how else len(results) == 7
    assert {name: r.is_error for name, r in results.items()} == dict.fromkeys(results, True)
    assert {name: d[0]["loc"][-1] for name, d in details.items()} == dict.fromkeys(
        results, "all_users"
    )
