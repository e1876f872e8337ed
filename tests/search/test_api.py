"""POST /api/v1/search and GET /api/v1/search/status through real HTTP."""

from datetime import timedelta

import pytest

from apps.agents.services import agent_update_settings
from apps.conversations.models import Message
from tests.factories import SessionFactory
from tests.search.conftest import T0, add, archive_all

pytestmark = pytest.mark.django_db


def _ids(response):
    return [h["id"] for h in response.json()["hits"]]


@pytest.mark.parametrize(
    "body",
    [
        {"query": ""},
        {"query": "   \n\t"},
        {"query": "x" * 4097},
        {"query": "é" * 2049},  # 4098 bytes
        {"query": "cat", "k": 0},
        {"query": "cat", "k": 101},
        {"query": "cat", "mode": "fuzzy"},
        {"query": "cat", "role": "wizard"},
        {"query": "cat", "metadata": {"a__b": "x"}},
        {"query": "cat", "metadata": {"key": {"nested": 1}}},
        {"k": 5},
    ],
)
def test_bad_input_is_422_and_json(api, session, body):
    response = api.post("/search", body)

    assert response.status_code == 422
    assert "detail" in response.json()


def test_query_of_exactly_4_kib_is_accepted(api, session):
    response = api.post("/search", {"query": "x" * 4096, "mode": "contains"})

    assert response.status_code == 200
    assert response.json()["hits"] == []


def test_unknown_session_is_404(api):
    response = api.post("/search", {"query": "cat", "session_id": "nope"})

    assert response.status_code == 404
    assert response.json() == {"detail": "session not found"}


def test_another_agents_session_is_404_and_their_messages_never_show(
    api, other_api, other_agent, session, embed_now
):
    theirs = SessionFactory(agent=other_agent, key="theirs")
    with embed_now():
        add(theirs, "the secret sandbox password is hunter2")
        add(session, "nothing to see")
    archive_all(theirs)

    assert api.post("/search", {"query": "x", "session_id": str(theirs.id)}).status_code == 404
    for mode in ("semantic", "keyword", "hybrid", "contains"):
        for extra in ({}, {"role": "user"}, {"metadata": {}}, {"after": "2000-01-01T00:00:00Z"}):
            r = api.post("/search", {"query": "secret sandbox password", "mode": mode, **extra})
            assert r.status_code == 200
            contents = [m["content"] for w in r.json()["windows"] for m in w["messages"]]
            assert "the secret sandbox password is hunter2" not in contents
    # and their own key still finds it, unchanged
    r = other_api.post("/search", {"query": "sandbox", "mode": "contains"})
    assert [h["content"] for h in r.json()["hits"]] == ["the secret sandbox password is hunter2"]


def test_contains_is_an_exact_substring_newest_first(api, session):
    rows = add(session, "run it in the sandbox", "sand box", "SANDBOXED build", "nothing")

    r = api.post("/search", {"query": "sandbox", "mode": "contains"})

    assert r.status_code == 200
    assert _ids(r) == [str(rows[2].id), str(rows[0].id)]
    assert [h["legs"] for h in r.json()["hits"]] == [
        {"contains": {"rank": 1, "score": 1.0}},
        {"contains": {"rank": 2, "score": 1.0}},
    ]


def test_keyword_mode_is_archive_bm25_plus_hot_substring_without_duplicates(api, session):
    from apps.conversations.models import SessionMeta

    old = add(session, "deploy the sandbox", "lunch plans", "sandbox deploy failed", start=T0)
    hot = add(session, "the sandbox is back", "deploy went fine", start=T0 + timedelta(days=1))
    SessionMeta.objects.filter(session=session).update(start_at=T0 + timedelta(days=1))

    r = api.post("/search", {"query": "sandbox", "mode": "keyword", "k": 10})

    # hot window: substring only; archive: BM25 (equal scores tie by id)
    archive = sorted([str(old[0].id), str(old[2].id)])
    assert _ids(r) == [str(hot[0].id), *archive]
    assert [list(h["legs"]) for h in r.json()["hits"]] == [["contains"], ["bm25"], ["bm25"]]
    # "deploy" is in the hot window only as a word, not the whole query "deploy sandbox"
    r = api.post("/search", {"query": "sandbox deploy", "mode": "keyword"})
    assert sorted(_ids(r)) == sorted([str(old[0].id), str(old[2].id)])


def test_hits_carry_merged_context_windows(api, session):
    rows = add(session, *[f"message {i} about topic{i}" for i in range(10)])
    archive_all(session)

    # hits at 4 and 5: windows [2..5] and [3..6] overlap -> one window [2..6]; hit 9 -> [7..9]
    r = api.post("/search", {"query": "topic4 topic5 topic9", "mode": "keyword", "k": 3})

    body = r.json()
    assert sorted(_ids(r)) == sorted(str(rows[i].id) for i in (4, 5, 9))
    windows = [[m["id"] for m in w["messages"]] for w in body["windows"]]
    by_window = {h["id"]: h["window"] for h in body["hits"]}
    assert sorted(windows) == sorted(
        [[str(rows[i].id) for i in range(2, 7)], [str(rows[i].id) for i in (7, 8, 9)]]
    )
    assert by_window[str(rows[4].id)] == by_window[str(rows[5].id)]
    assert windows[by_window[str(rows[9].id)]] == [str(rows[i].id) for i in (7, 8, 9)]
    flat = [i for w in windows for i in w]
    assert len(flat) == len(set(flat)) == 8


def test_windows_respect_per_agent_settings(api, agent, session):
    agent.settings = {"search_context_before": 0, "search_context_after": 0}
    agent.save()
    rows = add(session, "alpha", "beta", "gamma")

    r = api.post("/search", {"query": "beta", "mode": "contains"})

    assert [[m["id"] for m in w["messages"]] for w in r.json()["windows"]] == [[str(rows[1].id)]]


def test_filters_session_role_time_metadata(api, agent, session):
    from apps.conversations.services import NewMessage, messages_append

    other = SessionFactory(agent=agent, key="chat-2")
    a = add(session, "sandbox one", role="user")[0]
    b = add(session, "sandbox two", role="assistant", start=T0 + timedelta(hours=1))[0]
    c = add(other, "sandbox three", start=T0 + timedelta(hours=2))[0]
    d = messages_append(
        session=other,
        messages=[NewMessage(role="user", content="sandbox four", metadata={"dia_id": "D1:3"},
                             created_at=T0 + timedelta(hours=3))],
    ).messages[0]  # fmt: skip

    def q(**extra):
        return _ids(api.post("/search", {"query": "sandbox", "mode": "contains", **extra}))

    assert q() == [str(d.id), str(c.id), str(b.id), str(a.id)]
    assert q(session_id="chat-1") == [str(b.id), str(a.id)]
    assert q(session_id=str(other.id)) == [str(d.id), str(c.id)]
    assert q(role="assistant") == [str(b.id)]
    assert q(role=["assistant", "user"], session_id="chat-1") == [str(b.id), str(a.id)]
    assert q(after=(T0 + timedelta(minutes=30)).isoformat()) == [str(d.id), str(c.id), str(b.id)]
    assert q(before=(T0 + timedelta(hours=2)).isoformat()) == [str(b.id), str(a.id)]
    assert q(metadata={"dia_id": "D1:3"}) == [str(d.id)]
    assert q(metadata={"dia_id": "D9:9"}) == []


def test_hybrid_reports_both_legs_and_min_score_is_the_callers_cutoff(api, agent, embed_now):
    # the fused scores, before reranking (tests/search/test_rerank.py); one message per
    # session, so no neighbour passes score to another
    agent_update_settings(agent=agent, changes={"rerank": False})
    with embed_now():
        rows = [
            add(SessionFactory(agent=agent), text)[0]
            for text in ("kiwi banana smoothie", "kiwi", "unrelated words here")
        ]

    r = api.post("/search", {"query": "kiwi smoothie", "mode": "hybrid", "k": 3})

    hits = r.json()["hits"]
    assert [h["id"] for h in hits] == [str(m.id) for m in rows]
    assert [sorted(h["legs"]) for h in hits] == [["bm25", "vector"], ["bm25", "vector"], ["vector"]]
    assert [h["legs"]["vector"]["rank"] for h in hits] == [1, 2, 3]
    # reciprocal-rank fusion with rank constant 10
    assert [h["score"] for h in hits] == pytest.approx([2 / 11, 2 / 12, 1 / 13])

    r = api.post("/search", {"query": "kiwi smoothie", "mode": "hybrid", "min_score": 2 / 11})
    assert _ids(r) == [str(rows[0].id)]


def test_hybrid_neighbours_share_a_fifth_of_their_score(api, agent, embed_now):
    agent_update_settings(agent=agent, changes={"rerank": False})  # the smoothed fused scores
    session = SessionFactory(agent=agent)
    with embed_now():
        rows = add(session, "what did you make", "a kiwi smoothie", "nice")
        far = add(SessionFactory(agent=agent), "zzz qqq")[0]

    r = api.post("/search", {"query": "kiwi smoothie", "mode": "hybrid", "k": 4})

    hits = {h["id"]: h for h in r.json()["hits"]}
    base = {i: sum(1 / (10 + leg["rank"]) for n, leg in h["legs"].items() if n != "neighbour")
            for i, h in hits.items()}  # fmt: skip
    top = str(rows[1].id)
    assert r.json()["hits"][0]["id"] == top
    for neighbour in (rows[0], rows[2]):
        h = hits[str(neighbour.id)]
        assert h["legs"]["neighbour"] == {"rank": 1, "score": pytest.approx(base[top])}
        assert h["score"] == pytest.approx(base[str(neighbour.id)] + 0.2 * base[top])
    assert hits[top]["score"] == pytest.approx(
        base[top] + 0.2 * (base[str(rows[0].id)] + base[str(rows[2].id)])
    )
    assert "neighbour" not in hits[str(far.id)]["legs"]
    assert hits[str(far.id)]["score"] == pytest.approx(base[str(far.id)])


def test_semantic_is_the_default_mode(api, session, embed_now):
    with embed_now():
        rows = add(session, "kiwi banana smoothie", "completely different text")

    r = api.post("/search", {"query": "kiwi banana smoothie", "k": 1})

    assert r.json()["mode"] == "semantic"
    assert _ids(r) == [str(rows[0].id)]
    assert r.json()["hits"][0]["score"] == pytest.approx(1.0, abs=1e-6)
    assert r.json()["hits"][0]["legs"]["vector"]["rank"] == 1


def test_status_counts_pending_failed_embedded(api, other_api, session, embed_now):
    with embed_now():
        add(session, "one", "two")
    add(session, "three", start=T0 + timedelta(hours=1))  # callbacks not run: pending
    failed = add(session, "four", start=T0 + timedelta(hours=2))[0]
    Message.objects.filter(pk=failed.pk).update(embedding_error="boom", embedding_attempts=5)

    r = api.get("/search/status")

    assert r.status_code == 200
    states = {"space": "fake-hash/words32@int8", "stored": 2, "pending": 0, "error": ""}
    messages = {"embedded": 2, "stale": 0, "pending": 1, "failed": 1, "token_states": states}
    none = {"embedded": 0, "stale": 0, "pending": 0, "failed": 0, "token_states": None}
    no_rows = {**none, "token_states": {**states, "stored": 0}}  # keeps states, has no rows
    assert r.json() == {
        "model": "fake-hash@384", **messages,
        "corpora": {
            "categories": {"vectors": True, **none},
            "entries": {"vectors": True, **none},
            "errors": {"vectors": True, **none},
            "facts": {"vectors": True, **no_rows},
            "history": {"vectors": True, **no_rows},
            "learnings": {"vectors": False, **none},
            "messages": {"vectors": True, **messages},
        },
    }  # fmt: skip
    assert other_api.get("/search/status").json()["embedded"] == 0


def test_search_requires_a_key(client):
    assert client.post("/api/v1/search", "{}", content_type="application/json").status_code == 401


def test_admin_shows_embedding_counts_and_filters(admin_client, session):
    rows = add(session, "one", "two", "three")
    Message.objects.filter(pk=rows[0].pk).update(embedding=[0.0] * 383 + [1.0])
    Message.objects.filter(pk=rows[1].pk).update(embedding_error="boom", embedding_attempts=1)

    page = admin_client.get("/admin/conversations/message/")
    failed = admin_client.get("/admin/conversations/message/", {"embedding_status": "failed"})

    html = page.content.decode()
    assert ("embedded (1)" in html, "pending (1)" in html, "failed (1)" in html) == (
        True, True, True,
    )  # fmt: skip
    assert [m.pk for m in failed.context["cl"].result_list] == [rows[1].pk]
