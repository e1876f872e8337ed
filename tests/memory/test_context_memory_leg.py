"""get_context's memory leg (issue 24): the query against the agent's whole history, ranked
as /search ranks it (hybrid), each hit with its context window, marked with its session and
date, packed after the other legs in rank order; never another agent's message, a deleted
one or one still waiting for its embedding."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.conversations.models import Message
from apps.providers.token_counts import count_tokens
from tests.memory.helpers import BROKEN, use_embedder

pytestmark = pytest.mark.django_db

KEY = "the spare key is under the blue flowerpot"
TRIP = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday


def append(api, session_key, contents, start=None, embed=None):
    """Append user messages one second apart from `start`; their ids. With `embed` (the
    on-commit capture fixture) the embedding tasks run, else the messages stay pending."""
    times = [start + timedelta(seconds=i) if start else None for i in range(len(contents))]
    body = {
        "messages": [
            {"role": "user", "content": c, **({"created_at": t.isoformat()} if t else {})}
            for c, t in zip(contents, times, strict=True)
        ]
    }
    if embed is None:
        response = api.post(f"/sessions/{session_key}/messages", body)
    else:
        with embed(execute=True):
            response = api.post(f"/sessions/{session_key}/messages", body)
    assert response.status_code == 201, response.content
    return [m["id"] for m in response.json()["messages"]]


def context(api, session_key="now", **extra):
    response = api.post("/context", {"session_id": session_key, "lifecycle": "off", **extra})
    assert response.status_code == 200, response.content
    return response.json()


def configure(api, **changes):
    response = api.patch("/agent/settings", {"settings": changes})
    assert response.status_code == 200, response.content


def memory_ids(body) -> list[str]:
    return [m["id"] for w in body["memory"] for m in w["messages"]]


@pytest.fixture
def trip(api, django_capture_on_commit_callbacks):
    """An earlier conversation (key "trip", on 8 May 2023) whose fifth message is KEY, and
    the current one ("now") with three messages; every message embedded."""
    api.post("/sessions", {"key": "trip", "title": "Trip planning"})
    api.post("/sessions", {"key": "now"})
    earlier = append(
        api,
        "trip",
        ["we fly on friday", "I booked the hotel", "who feeds the cat",
         "the neighbour will", KEY, "thanks, see you", "bye"],
        start=TRIP,
        embed=django_capture_on_commit_callbacks,
    )  # fmt: skip
    current = append(
        api, "now", ["hello again", "how was the trip", "great"],
        embed=django_capture_on_commit_callbacks,
    )  # fmt: skip
    return earlier, current


def test_a_hit_comes_with_its_window_session_and_date(api, trip):
    earlier, _ = trip
    configure(api, context_memory_limit=1)

    body = context(api, query=KEY)

    [window] = body["memory"]
    header = "Session Trip planning, Monday 8 May 2023"
    assert (window["session_key"], window["session_title"], window["date"]) == (
        "trip",
        "Trip planning",
        "2023-05-08",
    )
    assert (window["header"], window["rank"]) == (header, 1)
    # 2 before, the hit, 1 after, in the session's order
    assert [m["id"] for m in window["messages"]] == earlier[2:6]
    assert [(m["hit"], m["rank"], m["legs"]) for m in window["messages"]] == [
        (False, None, ["memory"]),
        (False, None, ["memory"]),
        (True, 1, ["memory"]),
        (False, None, ["memory"]),
    ]
    hit = window["messages"][2]
    assert (hit["content"], hit["created_at"]) == (KEY, "2023-05-08T13:56:04Z")
    assert sorted(hit["search_legs"]) == ["bm25", "neighbour", "rerank", "vector"]
    assert (hit["search_legs"]["bm25"]["rank"], hit["search_legs"]["vector"]["rank"]) == (1, 1)
    texts = ["who feeds the cat", "the neighbour will", KEY, "thanks, see you"]
    tokens = count_tokens(header) + sum(count_tokens(t) for t in texts)
    assert window["tokens"] == body["tokens"]["memory"] == tokens
    # seed 002's legs keep the session's own messages, apart from the memory leg's
    assert [m["content"] for m in body["messages"]] == ["hello again", "how was the trip", "great"]
    assert body["tokens"]["total"] == body["tokens"]["messages"] + tokens


def test_hits_follow_the_search_ranking_without_what_other_legs_hold(api, trip):
    earlier, current = trip

    body = context(api, query="who feeds the cat on friday")
    search = api.post("/search", {"query": "who feeds the cat on friday", "mode": "hybrid",
                                  "k": 20}).json()  # fmt: skip

    ranked = [h["id"] for h in search["hits"] if h["id"] not in current]
    hits = sorted(
        (m for w in body["memory"] for m in w["messages"] if m["hit"]), key=lambda m: m["rank"]
    )
    assert [m["id"] for m in hits] == ranked == [h for h in ranked if h in earlier]
    ranks = {h["id"]: n for n, h in enumerate(search["hits"], start=1)}
    assert [m["rank"] for m in hits] == [ranks[i] for i in ranked]
    assert [round(m["score"], 9) for m in hits] == [
        round(h["score"], 9) for h in search["hits"] if h["id"] in ranked
    ]
    # overlapping windows merge: the whole earlier session is one window, in time order
    assert [[m["id"] for m in w["messages"]] for w in body["memory"]] == [earlier]
    assert not set(memory_ids(body)) & {m["id"] for m in body["messages"]}


def test_a_message_another_leg_holds_is_not_given_again(api, django_capture_on_commit_callbacks):
    api.post("/sessions", {"key": "now"})
    ids = append(api, "now", [KEY] + [f"filler {n}" for n in range(12)],
                 embed=django_capture_on_commit_callbacks)  # fmt: skip
    configure(api, context_memory_limit=1)

    body = context(api, query=KEY)

    # KEY is the relevance leg's (cosine 1); filler 0 and 1 are neither recency's nor
    # relevance's: the memory leg's hit is the best of them, with its window around it
    assert [m["id"] for m in body["messages"]] == [ids[0], *ids[3:]]
    assert body["messages"][0]["legs"] == ["relevance"]
    [window] = body["memory"]
    assert [m["id"] for m in window["messages"]] == ids[1:3]
    assert [m["hit"] for m in window["messages"]].count(True) == 1


def test_hits_are_packed_after_the_other_legs_in_rank_order(api, agent, trip):
    earlier, _ = trip
    configure(api, context_memory_limit=2)
    full = context(api, query=KEY)
    first, second = sorted(
        (m for w in full["memory"] for m in w["messages"] if m["hit"]), key=lambda m: m["rank"]
    )
    header = count_tokens(full["memory"][0]["header"])
    session = full["tokens"]["messages"]
    span = sum(count_tokens(c) for c in ["who feeds the cat", "the neighbour will", KEY,
                                          "thanks, see you"])  # fmt: skip
    assert first["id"] == earlier[4]

    # room for the session's messages and the first hit's window, not for anything more
    body = context(api, query=KEY, max_tokens=session + header + span)

    assert [m["content"] for m in body["messages"]] == ["hello again", "how was the trip", "great"]
    assert memory_ids(body) == earlier[2:6]
    assert [d["kind"] for d in body["dropped"]] == ["memory"]
    assert body["dropped"][0]["name"] == second["id"]
    assert body["usage"]["used_tokens"] == session + header + span

    # too little room for the first hit's window: the hit alone
    body = context(api, query=KEY, max_tokens=session + header + count_tokens(KEY))
    assert memory_ids(body) == [earlier[4]]
    assert body["memory"][0]["messages"][0]["hit"] is True


def test_the_memory_leg_comes_after_the_documents_and_facts(api, trip):
    api.post("/entries", {"name": "SOUL.md", "content": "word " * 40})
    api.post("/memory/save", {"content": "the spare key is under the blue flowerpot, says Ann",
                              "importance": 0.9})  # fmt: skip
    configure(api, context_memory_limit=1)
    full = context(api, query=KEY)
    assert [p["name"] for p in full["system"]["parts"]] == ["SOUL.md"]
    assert len(full["system"]["facts"]) == 1
    fixed = full["tokens"]["system"] + full["tokens"]["facts"] + full["tokens"]["messages"]

    body = context(api, query=KEY, max_tokens=fixed)

    assert body["memory"] == []
    assert [p["name"] for p in body["system"]["parts"]] == ["SOUL.md"]
    assert len(body["system"]["facts"]) == 1
    assert [d["kind"] for d in body["dropped"]] == ["memory"]


def test_no_query_no_memory_leg_and_it_is_a_setting_on_by_default(api, agent, trip):
    assert agent.config.context_memory is True
    assert agent.config.context_memory_limit == 20
    assert context(api)["memory"] == []
    assert context(api, query="   ")["memory"] == []
    assert context(api, query=KEY)["memory"] != []

    configure(api, context_memory=False)
    assert context(api, query=KEY)["memory"] == []
    configure(api, context_memory=True, context_memory_limit=0)
    assert context(api, query=KEY)["memory"] == []


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("context_memory_limit", -1),
        ("context_memory_limit", 101),
        ("context_memory_limit", "many"),
        ("context_memory_limit", 2.5),
        ("context_memory", "maybe"),
        ("context_memory", [True]),
    ],
)
def test_bad_settings_are_422(api, agent, key, value):
    response = api.patch("/agent/settings", {"settings": {key: value}})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "settings", key]
    agent.refresh_from_db()
    assert key not in agent.settings


def test_a_long_query_is_cut_to_the_search_limit_with_a_warning(api, trip):
    earlier, _ = trip
    configure(api, context_memory_limit=1)

    body = context(api, query=KEY + " " + "x" * 5000)

    assert body["warnings"] == ["memory leg: the query was cut to its first 4096 bytes"]
    assert [m["id"] for m in body["memory"][0]["messages"] if m["hit"]] == [earlier[4]]


# --- never another agent's, a deleted or a pending message --------------------------------
def test_never_another_agents_messages(api, other_api, trip, django_capture_on_commit_callbacks):
    earlier, _ = trip
    other_api.post("/sessions", {"key": "trip"})
    theirs = append(other_api, "trip", [KEY, KEY + " again", "flowerpot"] * 3,
                    embed=django_capture_on_commit_callbacks)  # fmt: skip

    body = context(api, query=KEY)

    assert sorted(memory_ids(body)) == sorted(earlier)
    assert not set(memory_ids(body)) & set(theirs)
    # and theirs sees none of ours
    other_api.post("/sessions", {"key": "now"})
    mine = context(other_api, query=KEY)
    assert sorted(memory_ids(mine)) == sorted(theirs)


def test_never_a_deleted_message(api, trip, django_capture_on_commit_callbacks):
    earlier, _ = trip
    api.post("/sessions", {"key": "older"})
    older = append(api, "older", ["where is the key", KEY + "!"],
                   embed=django_capture_on_commit_callbacks)  # fmt: skip
    assert set(older) < set(memory_ids(context(api, query=KEY)))

    assert api.post("/sessions/trip/reset", {}).status_code == 200
    assert api.delete("/sessions/older").status_code == 204

    body = context(api, query=KEY)
    assert memory_ids(body) == []
    assert Message.objects.filter(pk__in=earlier + older).count() == 0


def test_a_pending_message_waits_for_its_embedding(api, agent, django_capture_on_commit_callbacks):
    api.post("/sessions", {"key": "trip"})
    api.post("/sessions", {"key": "now"})
    pending = append(api, "trip", ["who feeds the cat", KEY, "bye"])  # on_commit never ran
    assert Message.objects.filter(pk__in=pending, embedding_model="").count() == 3

    assert context(api, query=KEY)["memory"] == []
    # /search still finds them by their words; the memory leg takes them once embedded
    found = api.post("/search", {"query": KEY, "mode": "hybrid", "k": 5}).json()["hits"]
    assert pending[1] in [h["id"] for h in found]
    with django_capture_on_commit_callbacks(execute=True):
        from apps.search.embedding_queue import enqueue_embedding

        enqueue_embedding(corpus="messages", ids=pending)
    assert sorted(memory_ids(context(api, query=KEY))) == sorted(pending)


def test_a_message_whose_embedding_failed_is_found_by_its_words(
    api, settings, django_capture_on_commit_callbacks
):
    use_embedder(settings, BROKEN)
    api.post("/sessions", {"key": "trip"})
    api.post("/sessions", {"key": "now"})
    failed = append(api, "trip", ["who feeds the cat", KEY, "bye"],
                    embed=django_capture_on_commit_callbacks)  # fmt: skip
    assert Message.objects.filter(pk__in=failed).exclude(embedding_error="").count() == 3

    body = api.post("/context", {"session_id": "now", "query": KEY, "lifecycle": "off"}).json()

    assert body["degraded"] == ["semantic"]
    assert [[m["id"] for m in w["messages"]] for w in body["memory"]] == [failed]
    [hit] = [m for m in body["memory"][0]["messages"] if m["hit"] and m["rank"] == 1]
    assert (hit["id"], sorted(hit["search_legs"])) == (failed[1], ["bm25"])
