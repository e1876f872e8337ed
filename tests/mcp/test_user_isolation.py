"""Issue 26 over MCP, on both transports: the tools take the same `user` (or a user's
session) as the API, and never return the other user's memory; a session with another
`user` is refused as the API refuses it."""

from typing import Any

import pytest

from tests.mcp.conftest import McpClient
from tests.users.probes import SOURCES, VIEWERS, Probes, other_of
from tests.users.world import AGENT_WORDS, ALICE, CAROLINE, Person, World, build

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS_PER_QUERY = 7


@pytest.fixture
def world(api) -> World:
    return build(api)


def _queries(viewer: Person) -> list[str]:
    return [*other_of(viewer).words, *viewer.words[:2], *AGENT_WORDS[:2]]


def _result(probes: Probes, label: str, viewer: Person, mcp: McpClient, tool: str, args: dict):
    probes.count += 1
    result = mcp.call(tool, args)
    if result.is_error:
        probes.failures.append(f"{label} as {viewer.name}: {result.content[0].text[:300]}")
        return None
    return result.structured_content


def _by_source(body: dict) -> dict[str, set]:
    found: dict[str, set] = {kind: set() for kind in SOURCES.values()}
    for item in body["items"]:
        found[SOURCES[item["source"]]].add(item["id"])
    return found


def _context_found(body: dict) -> dict[str, set]:
    memory = {m["id"] for w in body["memory"] for m in w["messages"]}
    return {
        "fact": {f["id"] for f in body["system"]["facts"]},
        "message": {m["id"] for m in body["messages"]} | memory,
    }


def _calls(viewer: Person, q: str) -> list[tuple[str, dict, Any, tuple[str, ...]]]:
    """(tool, arguments, the ids found in its result, the kinds its hits are of)."""
    user = {"user": viewer.user}
    return [
        ("memory_recall", {"query": q, "k": 20, **user},
         lambda b: {"fact": {h["fact"]["id"] for h in b["items"]}}, ("fact",)),
        ("memory_search", {"query": q, "k": 50, **user}, _by_source,
         ("fact", "entry", "learning", "history")),
        ("memory_search", {"query": q, "k": 50, "session_id": viewer.session_key}, _by_source,
         ("fact", "entry", "learning", "history")),
        ("search_chat_history", {"query": q, "mode": "keyword", "k": 50, **user},
         lambda b: {"message": {h["id"] for h in b["hits"]}}, ("message",)),
        ("search_history", {"q": q, **user},
         lambda b: {"history": {h["id"] for h in b["items"]}}, ("history",)),
        ("entry_search", {"q": q, **user},
         lambda b: {"entry": {h["entry"]["id"] for h in b["items"]}}, ("entry",)),
        ("get_context", {"session_id": viewer.session_key, "query": q, "lifecycle": "off"},
         _context_found, ("fact", "message")),
    ]  # fmt: skip


def test_the_tools_take_the_user_and_never_return_the_other_users_memory(mcp, world: World):
    probes = Probes(world)
    rounds = 0
    for viewer in VIEWERS:
        for q in _queries(viewer):
            rounds += 1
            for tool, args, found_of, kinds in _calls(viewer, q):
                label = f"{tool} {args}"
                if (body := _result(probes, label, viewer, mcp, tool, args)) is None:
                    continue
                probes.check(label, viewer, body, found_of(body), probes.expect(q, viewer, *kinds))

    assert probes.failures == [], "\n".join(probes.failures)
    assert probes.count == rounds * TOOLS_PER_QUERY == 168


def test_a_tool_call_naming_a_session_and_another_user_is_refused(mcp, world: World):
    both = {"session_id": ALICE.session_key, "user": CAROLINE.user}

    details = {
        "get_context": mcp.error("get_context", {"lifecycle": "off", **both}),
        "memory_save": mcp.error("memory_save", {"content": "Erin likes tea", **both}),
        "search_chat_history": mcp.error("search_chat_history", {"query": "tea", **both}),
    }

    own = {"session_id": ALICE.session_key, "user": ALICE.user, "lifecycle": "off"}

    assert {tool: d[0]["loc"][-1] for tool, d in details.items()} == dict.fromkeys(details, "user")
    assert mcp.result("get_context", own)["session_id"] == world.sessions[ALICE.user]["id"]
