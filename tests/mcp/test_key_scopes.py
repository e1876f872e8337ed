"""Issue 39 over MCP, on both transports: a connection made with a user-bound key is confined
to that user whatever arguments the model sends (another user, every user, another user's
session: tool errors with the API's 403 detail; no user: the bound one); with a read-only
key every write tool is a tool error and reads answer."""

import pytest

from apps.agents.services import api_key_issue
from apps.conversations.models import Session
from apps.facts.models import Fact
from tests.users.world import ALICE, CAROLINE, World, build

pytestmark = pytest.mark.django_db(transaction=True)

BOUND = f"this key acts for user '{ALICE.user}' only"


@pytest.fixture
def world(api) -> World:
    return build(api)


def test_a_bound_key_confines_every_tool_to_its_user(connect, agent, world: World):
    mcp = connect(api_key_issue(agent=agent, user=ALICE.user).raw)
    caroline = world.sessions[CAROLINE.user]["id"]

    errors = [
        mcp.error("memory_recall", {"query": "music", "user": CAROLINE.user}),
        mcp.error("memory_search", {"query": "music", "all_users": True}),
        mcp.error("search_chat_history", {"query": "music", "session_id": caroline}),
        mcp.error("get_context", {"session_id": CAROLINE.session_key}),
        mcp.error("memory_save", {"content": "x", "scope": "agent"}),
        mcp.error("append_messages", {"session_id": caroline,
                                      "messages": [{"role": "user", "content": "hi"}]}),
    ]  # fmt: skip

    assert errors == [
        f"{BOUND}; it may not name another",
        f"{BOUND}; all_users is not for it",
        f"{BOUND}; session '{caroline}' is of another user",
        f"{BOUND}; session '{CAROLINE.session_key}' is of another user",
        f'{BOUND}; it may not write the agent\'s own memory (scope "agent")',
        f"{BOUND}; session '{caroline}' is of another user",
    ]
    recalled = mcp.result("memory_recall", {"query": CAROLINE.fact, "k": 50})
    owners = {hit["fact"]["user"] for hit in recalled["items"]}
    assert ALICE.user in owners
    assert CAROLINE.user not in owners


def test_a_bound_key_writes_as_its_user_when_no_user_is_named(connect, agent, world: World):
    mcp = connect(api_key_issue(agent=agent, user=ALICE.user).raw)

    saved = mcp.result("memory_save", {"content": "Alice collects stamps"})
    session = mcp.result("create_session", {"key": "alice-mcp"})
    mcp.result("append_messages", {"session_id": "alice-new-chat",
                                   "messages": [{"role": "user", "content": "hello"}]})  # fmt: skip

    assert Fact.objects.get(pk=saved["fact"]["id"]).user == ALICE.user
    assert session["user"] == ALICE.user
    assert Session.objects.get(agent=agent, key="alice-new-chat").user == ALICE.user


def test_a_read_only_key_refuses_every_write_tool(connect, agent, world: World):
    mcp = connect(api_key_issue(agent=agent, read_only=True).raw)
    facts = Fact.objects.count()

    tools = {tool.name: tool for tool in mcp.tools()}
    # get_context may flush or compact (its hint), but with a read-only key it only reads.
    writes = sorted(
        n for n, t in tools.items() if not t.annotations.read_only_hint and n != "get_context"
    )
    errors = {name: mcp.error(name, {}) for name in writes}
    context = mcp.result("get_context", {"session_id": ALICE.session_key, "lifecycle": "wait",
                                         "observed_tokens": 10_000_000})  # fmt: skip

    assert len(writes) == 12
    assert errors == dict.fromkeys(writes, "this key is read-only; this operation writes")
    assert Fact.objects.count() == facts
    assert (context["usage"]["action_status"], context["usage"]["runs"]) == ("off", [])
    assert mcp.result("memory_recall", {"query": "music", "user": ALICE.user})["items"]
