"""Seed 004: MEMORY.md is in the prompt on every message. get_context reserves its room
before anything else, the newest message included, and cuts it only when it alone is over
the budget."""

import pytest

from apps.entries.services import entry_add
from apps.providers.token_counts import count_tokens

pytestmark = pytest.mark.django_db

MEMORY = " ".join(f"fact{n}" for n in range(1, 21))


def append(api, session, contents):
    body = {"messages": [{"role": "user", "content": c} for c in contents]}
    response = api.post(f"/sessions/{session.id}/messages", body)
    assert response.status_code == 201
    return [m["id"] for m in response.json()["messages"]]


def context(api, session, max_tokens):
    response = api.post(
        "/context", {"session_id": str(session.id), "max_tokens": max_tokens, "lifecycle": "off"}
    )
    assert response.status_code == 200
    return response.json()


def test_a_tight_budget_keeps_memory_md_whole_and_drops_the_rest(api, agent, session):
    entry_add(agent=agent, name="SOUL.md", content="word " * 10)
    entry_add(agent=agent, name="USER.md", content="user " * 3)
    entry_add(agent=agent, name="MEMORY.md", content=MEMORY)
    ids = append(api, session, ["alpha beta gamma", "delta epsilon", "zeta eta theta iota"])
    memory, newest = count_tokens(MEMORY), count_tokens("zeta eta theta iota")
    assert (memory, newest) == (40, 5)  # SOUL.md (10) would have fitted before MEMORY.md

    body = context(api, session, max_tokens=memory + newest + 4)

    assert body["system"]["parts"] == [
        {"kind": "document", "name": "USER.md", "title": "About your users",
         "content": "user " * 3, "tokens": 3, "truncated": False},
        {"kind": "document", "name": "MEMORY.md", "title": "Agent memory", "content": MEMORY,
         "tokens": 40, "truncated": False},
    ]  # fmt: skip
    assert [m["id"] for m in body["messages"]] == [ids[2]]
    assert body["messages"][0]["truncated"] is False
    assert [(d["kind"], d["name"], d["tokens"]) for d in body["dropped"]] == [
        ("document", "SOUL.md", 10),
        ("message", ids[1], count_tokens("delta epsilon")),
        ("message", ids[0], count_tokens("alpha beta gamma")),
    ]
    assert body["usage"]["used_tokens"] == 40 + 5 + 3
    assert body["warnings"] == []


def test_memory_md_over_the_whole_budget_is_truncated_with_a_warning(api, agent, session):
    entry_add(agent=agent, name="SOUL.md", content="soul")
    entry_add(agent=agent, name="MEMORY.md", content=MEMORY)
    (newest,) = append(api, session, ["one two three"])

    body = context(api, session, max_tokens=10)

    assert body["system"]["parts"] == [
        {"kind": "document", "name": "MEMORY.md", "title": "Agent memory",
         "content": "fact1 fact2 fact3 fact4 fact5", "tokens": 10, "truncated": True},
    ]  # fmt: skip
    assert body["warnings"] == [
        "MEMORY.md is 40 tokens, over the 10-token budget: truncated to 10 tokens"
    ]
    # The newest message stays, cut to the room MEMORY.md left: none.
    [message] = body["messages"]
    assert (message["id"], message["content"], message["tokens"], message["truncated"]) == (
        newest,
        "",
        0,
        True,
    )
    assert [(d["kind"], d["name"]) for d in body["dropped"]] == [("document", "SOUL.md")]
    assert body["usage"]["used_tokens"] == 10
    assert body["tokens"]["total"] == 10
    assert body["usage"]["required_tokens"] == 40 + count_tokens("soul") + 3


def test_the_newest_message_gets_the_room_memory_md_leaves(api, agent, session):
    entry_add(agent=agent, name="MEMORY.md", content=MEMORY)
    (newest,) = append(api, session, ["one two three four five six seven eight nine ten"])

    body = context(api, session, max_tokens=44)

    assert [(p["name"], p["tokens"], p["truncated"]) for p in body["system"]["parts"]] == [
        ("MEMORY.md", 40, False)
    ]
    [message] = body["messages"]
    assert (message["id"], message["content"], message["tokens"], message["truncated"]) == (
        newest,
        "one two three four",
        4,
        True,
    )
    assert body["warnings"] == []
    assert body["usage"]["used_tokens"] == 44
