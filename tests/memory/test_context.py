"""POST /api/v1/context (seed 002's get_context with seeds 000 and 001)."""

import pytest

from apps.conversations.models import Message, Summary
from apps.entries.services import entry_add
from apps.facts.services import fact_save
from apps.learnings.services import learning_create
from apps.providers.token_counts import count_tokens

pytestmark = pytest.mark.django_db


def append(api, session, contents, **extra):
    body = {"messages": [{"role": "user", "content": c, **extra} for c in contents]}
    response = api.post(f"/sessions/{session.id}/messages", body)
    assert response.status_code == 201
    return [m["id"] for m in response.json()["messages"]]


def context(api, session, **extra):
    return api.post("/context", {"session_id": str(session.id), **extra})


def test_empty_memory_gives_an_empty_valid_context(api, session):
    response = context(api, session, query="anything")

    assert response.status_code == 200
    assert response.json() == {
        "session_id": str(session.id),
        "query": "anything",
        "system": {"parts": [], "facts": [], "tokens": 0},
        "messages": [],
        "memory": [],
        "tokens": {"system": 0, "facts": 0, "messages": 0, "memory": 0, "total": 0},
        "usage": {
            "max_tokens": 8192,
            "used_tokens": 0,
            "required_tokens": 0,
            "ratio": 0.0,
            "flush_ratio": 0.6,
            "compact_ratio": 0.7,
            "flush_recommended": False,
            "compact_required": False,
            "context_window_tokens": 128000,
            "usage_ratio": 0.0,
            "usage_tokens": 0,
            "measured_by": "estimate",
            "counted": {
                "system": 0,
                "summary": 0,
                "messages": 0,
                "message_count": 0,
                "estimate": 0,
                "observed": None,
            },
            "action": "none",
            "action_status": "none",
            "runs": [],
        },
        "dropped": [],
        "warnings": [],
        "degraded": [],
        "token_counter": "all-MiniLM-L6-v2 WordPiece (offline)",
    }


def test_system_part_and_tri_hybrid_messages(api, agent, session):
    for name in ["HEARTBEAT.md", "MEMORY.md", "USER.md", "AGENTS.md", "SOUL.md"]:
        entry_add(agent=agent, name=name, content=f"contents of {name}")
    learning_create(agent=agent, kind="error", content="grep fails on binary files")
    Summary.objects.create(session=session, content="Earlier we planned a trip.")
    salient = fact_save(agent=agent, content="Allergic to peanuts", category="health",
                        importance=0.9).fact  # fmt: skip
    fact_save(agent=agent, content="Likes jazz", category="music")
    ids = append(api, session, [f"message {n}" for n in range(1, 16)])
    Message.objects.filter(pk=ids[1]).update(importance=0.9)

    body = context(api, session).json()

    assert [(p["kind"], p["name"]) for p in body["system"]["parts"]] == [
        ("document", "SOUL.md"),
        ("document", "AGENTS.md"),
        ("document", "USER.md"),
        ("document", "MEMORY.md"),
        ("summary", "summary"),
        ("learnings", "learnings/errors.md"),
    ]
    assert body["system"]["parts"][0]["tokens"] == count_tokens("contents of SOUL.md")
    assert [(f["id"], f["value"], round(f["salience"], 6)) for f in body["system"]["facts"]] == [
        (salient.pk, "Allergic to peanuts", 0.9)
    ]
    assert [m["id"] for m in body["messages"]] == [ids[1], *ids[5:]]
    assert body["messages"][0]["legs"] == ["salience"]
    assert body["messages"][-1]["legs"] == ["recency"]
    system_tokens = sum(p["tokens"] for p in body["system"]["parts"])
    message_tokens = sum(m["tokens"] for m in body["messages"])
    fact_tokens = count_tokens("[health] allergic-to-peanuts: Allergic to peanuts")
    assert body["tokens"] == {
        "system": system_tokens,
        "facts": fact_tokens,
        "messages": message_tokens,
        "memory": 0,
        "total": system_tokens + fact_tokens + message_tokens,
    }
    assert body["usage"]["required_tokens"] == body["tokens"]["total"]
    assert body["dropped"] == []


def test_relevance_leg_finds_an_old_message_similar_to_the_query(
    api, agent, session, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        old = append(api, session, ["the spare key is under the blue flowerpot"])
        append(api, session, [f"filler {n}" for n in range(12)])

    body = context(api, session, query="the spare key is under the blue flowerpot").json()

    first = body["messages"][0]
    assert (first["id"], first["legs"], round(first["similarity"], 6)) == (
        old[0],
        ["relevance"],
        1.0,
    )
    assert len(body["messages"]) == 11


def test_budget_is_never_exceeded_and_the_newest_message_is_kept(api, agent, session):
    entry_add(agent=agent, name="SOUL.md", content="word " * 50)
    ids = append(api, session, ["alpha beta gamma", "delta epsilon", "zeta eta theta iota"])
    newest = count_tokens("zeta eta theta iota")
    middle = count_tokens("delta epsilon")

    body = context(api, session, max_tokens=newest + middle).json()

    assert [m["id"] for m in body["messages"]] == ids[1:]
    assert body["usage"]["used_tokens"] == newest + middle
    assert body["system"]["parts"] == []
    assert [(d["kind"], d["name"]) for d in body["dropped"]] == [
        ("document", "SOUL.md"),
        ("message", ids[0]),
    ]
    assert body["usage"]["required_tokens"] == 50 + newest + middle + count_tokens(
        "alpha beta gamma"
    )


def test_a_newest_message_over_the_whole_budget_is_truncated_not_dropped(api, session):
    (newest,) = append(api, session, ["one two three four five six seven eight nine ten"])

    body = context(api, session, max_tokens=4).json()

    (message,) = body["messages"]
    assert (message["id"], message["content"], message["tokens"], message["truncated"]) == (
        newest,
        "one two three four",
        4,
        True,
    )
    assert body["usage"]["used_tokens"] == 4


@pytest.mark.parametrize(
    ("window", "flush", "compact", "action"),
    [(200, False, False, "none"), (150, True, False, "flush"), (140, True, True, "compact")],
)
def test_usage_against_the_model_window_and_the_60_and_70_percent_thresholds(
    api, agent, session, window, flush, compact, action
):
    agent.settings = {"context_window_tokens": window}
    agent.save()
    append(api, session, ["word " * 100])  # 100 tokens

    usage = context(api, session, max_tokens=1000, lifecycle="off").json()["usage"]

    assert (usage["required_tokens"], usage["ratio"]) == (100, 0.1)
    assert (usage["context_window_tokens"], usage["usage_ratio"]) == (window, 100 / window)
    assert (usage["flush_recommended"], usage["compact_required"]) == (flush, compact)
    assert (usage["action"], usage["action_status"], usage["runs"]) == (
        action, "none" if action == "none" else "off", []
    )  # fmt: skip


def test_thresholds_are_per_agent_settings(api, agent, session):
    agent.settings = {"recency_limit": 2, "flush_ratio": 0.1, "context_window_tokens": 10}
    agent.save()
    ids = append(api, session, ["a", "b", "c"])

    body = context(api, session, max_tokens=10, lifecycle="off").json()

    assert [m["id"] for m in body["messages"]] == ids[1:]
    assert (body["usage"]["flush_ratio"], body["usage"]["flush_recommended"]) == (0.1, True)
    # usage counts every hot message, not only the two the recency leg returned
    assert body["usage"]["usage_ratio"] == 0.3


def test_bad_input_and_another_agents_session(api, other_api, session):
    assert context(api, session, max_tokens=0).status_code == 422
    assert api.post("/context", {}).status_code == 422
    missing = api.post("/context", {"session_id": "nope"})
    assert (missing.status_code, missing.json()) == (404, {"detail": "session not found"})
    assert context(other_api, session).status_code == 404
