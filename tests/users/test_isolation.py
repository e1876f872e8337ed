"""Issue 26's isolation suite: two users of one agent, every search path probed as each of
them with each user's distinctive words, the agent's and generic queries. Each probe asserts
that nothing of the other user comes back (their words, user id, session and row ids) and
that the user's own and the agent's items the query names do; the agent's memory is found by
both. Each test asserts how many probes it made: 810 in all, on each backend."""

import pytest

from tests.users.probes import QUERIES, SOURCES, VIEWERS, Probes
from tests.users.world import AGENT_CORRECTION, AGENT_MEMORY_MD, World

pytestmark = pytest.mark.django_db

ROUNDS = len(VIEWERS) * len(QUERIES)  # 54: every viewer asks every query


def _done(probes: Probes, calls_per_round: int) -> None:
    assert probes.failures == [], "\n".join(probes.failures)
    assert probes.count == ROUNDS * calls_per_round


def test_recall_finds_own_and_agent_facts_never_the_other_users(api, world: World):
    probes = Probes(world)
    for viewer in VIEWERS:
        for q in QUERIES:
            for how in [{"user": viewer.user}, {"session_id": viewer.session_key}]:
                label = f"POST /memory/recall {q!r} {how}"
                body = api.post("/memory/recall", {"query": q, "k": 20, **how})
                if (body := probes.answer(label, viewer, body)) is None:
                    continue
                found = {"fact": {hit["fact"]["id"] for hit in body["items"]}}
                probes.check(label, viewer, body, found, probes.expect(q, viewer, "fact"))
    _done(probes, 2)


def test_memory_search_finds_own_and_agent_memory_never_the_other_users(api, world: World):
    probes = Probes(world)
    for viewer in VIEWERS:
        for q in QUERIES:
            for how in [{"user": viewer.user}, {"session_id": viewer.session_key}]:
                label = f"POST /memory/search {q!r} {how}"
                body = api.post("/memory/search", {"query": q, "k": 50, **how})
                if (body := probes.answer(label, viewer, body)) is None:
                    continue
                found: dict[str, set] = {kind: set() for kind in SOURCES.values()}
                for item in body["items"]:
                    found[SOURCES[item["source"]]].add(item["id"])
                expected = probes.expect(q, viewer, "fact", "entry", "learning", "history")
                probes.check(label, viewer, body, found, expected)
    _done(probes, 2)


def _message_ids(body: dict) -> set:
    hits = {h["id"] for h in body["hits"]}
    return hits | {m["id"] for w in body["windows"] for m in w["messages"]}


def test_chat_history_search_in_every_mode_never_finds_the_other_users_messages(api, world: World):
    probes = Probes(world)
    for viewer in VIEWERS:
        for q in QUERIES:
            for mode in ["keyword", "hybrid", "contains", "semantic"]:
                label = f"POST /search {mode} {q!r} user"
                body = {"query": q, "mode": mode, "k": 50, "user": viewer.user}
                if (body := probes.answer(label, viewer, api.post("/search", body))) is None:
                    continue
                # semantic hits are the nearest vectors, whatever words they share
                expected = probes.expect(q, viewer, "message") if mode != "semantic" else {}
                probes.check(label, viewer, body, {"message": _message_ids(body)}, expected)
            label = f"POST /search hybrid {q!r} session"
            body = {"query": q, "mode": "hybrid", "k": 50, "session_id": viewer.session_key}
            if (body := probes.answer(label, viewer, api.post("/search", body))) is None:
                continue
            expected = probes.expect(q, viewer, "message", owners=(viewer.user,))
            probes.check(label, viewer, body, {"message": _message_ids(body)}, expected)
    _done(probes, 5)


def test_get_context_every_leg_holds_own_and_agent_memory_never_the_other_users(api, world: World):
    probes = Probes(world)
    for viewer in VIEWERS:
        documents = [
            viewer.user_md,
            world.memory_md[viewer.user],
            AGENT_MEMORY_MD,
            viewer.correction,
            AGENT_CORRECTION,
        ]
        for q in QUERIES:
            label = f"POST /context {q!r}"
            body = {"session_id": viewer.session_key, "query": q, "lifecycle": "off"}
            if (body := probes.answer(label, viewer, api.post("/context", body))) is None:
                continue
            messages = {m["id"] for m in body["messages"]}
            memory = {m["id"] for w in body["memory"] for m in w["messages"]}
            found = {
                "fact": {f["id"] for f in body["system"]["facts"]},
                "message": messages | memory,
                "session": {w["session_id"] for w in body["memory"]},
            }
            probes.check(label, viewer, body, found, probes.expect(q, viewer, "fact", "message"))
            parts = "\n".join(p["content"] for p in body["system"]["parts"])
            probes.lines_in(label + " system parts", viewer, parts, documents)
    _done(probes, 1)


def test_entry_search_finds_own_and_agent_entries_never_the_other_users(api, world: World):
    probes = Probes(world)
    for viewer in VIEWERS:
        for q in QUERIES:
            # issue 41: the semantic and hybrid modes read the entries' vectors
            for mode in ("keyword", "semantic", "hybrid"):
                label = f"GET /entries/search {q!r} {mode}"
                query = {"q": q, "limit": 50, "user": viewer.user, "mode": mode}
                answer = api.get("/entries/search", query)
                if (body := probes.answer(label, viewer, answer)) is None:
                    continue
                found = {"entry": {hit["entry"]["id"] for hit in body["items"]}}
                probes.check(label, viewer, body, found, probes.expect(q, viewer, "entry"))
    _done(probes, 3)


def test_history_grep_finds_own_and_agent_entries_never_the_other_users(api, world: World):
    probes = Probes(world)
    for viewer in VIEWERS:
        for q in QUERIES:
            for how, owners in [
                ({"user": viewer.user}, None),
                ({"session_id": viewer.session_key}, (viewer.user,)),
            ]:
                label = f"GET /memory/history {q!r} {how}"
                response = api.get("/memory/history", {"q": q, "limit": 100, **how})
                if (body := probes.answer(label, viewer, response)) is None:
                    continue
                found = {"history": {entry["id"] for entry in body["items"]}}
                expected = probes.expect(q, viewer, "history", owners=owners)
                probes.check(label, viewer, body, found, expected)
    _done(probes, 2)
