"""The reranking stage of hybrid search: weighted MaxSim over the candidates' stored token
states, no model run at query time.

Most tests use the test embedder (HashEmbedder: one hashed row per word, so its MaxSim is a
weighted word match); the meaning test and the projection's checksum use the real MiniLM.
"""

import numpy as np
import pytest
from django.test import override_settings

from apps.agents.services import agent_update_settings
from apps.conversations.models import MessageTokens
from apps.search.hybrid import Ranking, Scope, hybrid_search
from apps.search.rerank import maxsim
from tests.factories import SessionFactory
from tests.memory.helpers import MINILM
from tests.search.conftest import add

pytestmark = pytest.mark.django_db

QUERY = "Where did Caroline move from?"
ANSWER = "I relocated here from Sweden four years ago."
DISTRACTOR = "We moved the couch and moved the table, so much moving!"
OTHERS = [
    "The weather was lovely at the beach.",
    "I painted a sunset over the lake last weekend.",
    "My kids loved the pottery class.",
    "We went camping in the mountains.",
]
# Each turn in a session of its own (no neighbours: no smoothing, no windows): BM25 and the
# hashed vectors favour turns repeating one query word, the per-word MaxSim the turns that
# hold more of the query's words.
CHAT = [
    "violin violin violin practice every morning",
    "Tickets for the violin concert in Lisbon are sold out.",
    "Lisbon Lisbon, what a lovely old city",
    "The concert was loud and the concert was long.",
    "We bought bread at the market.",
    "The concert hall was cold.",
]
WORDS_QUERY = "violin concert tickets Lisbon"


@pytest.fixture
def chat(agent, embed_now):
    with embed_now():
        for i, text in enumerate(CHAT):
            add(SessionFactory(agent=agent, key=f"s{i}"), text)


def _search(api, query=WORDS_QUERY, **extra):
    response = api.post("/search", {"query": query, "mode": "hybrid", "k": 100, **extra})
    assert response.status_code == 200, response.content
    return response.json()


def _contents(hits):
    return [h["content"] for h in hits]


def test_reranking_is_on_by_default(api):
    settings = api.get("/agent").json()["settings"]

    assert (settings["rerank"], settings["rerank_candidates"]) == (True, 100)


def test_a_reranked_list_is_a_reordering_of_the_fused_candidates(api, agent, chat):
    # given the same search with reranking off, then on (the default)
    agent_update_settings(agent=agent, changes={"rerank": False})
    fused = _search(api)
    agent_update_settings(agent=agent, changes={"rerank": None})

    reranked = _search(api)

    # then: exactly the same messages, nothing added or lost, in another order
    assert sorted(h["id"] for h in reranked["hits"]) == sorted(h["id"] for h in fused["hits"])
    assert len(reranked["hits"]) == len(fused["hits"]) == len(CHAT)
    violin, tickets, lisbon, loud, bread, hall = CHAT
    assert _contents(fused["hits"]) == [tickets, violin, lisbon, loud, hall, bread]
    # the turn naming Lisbon twice overtakes the one repeating "violin": MaxSim counts each
    # query word once, and "violin" matches tickets' turn too, so it weighs less
    assert _contents(reranked["hits"]) == [tickets, lisbon, violin, loud, hall, bread]
    assert all("rerank" not in h["legs"] for h in fused["hits"])
    assert all("rerank" in h["legs"] for h in reranked["hits"])
    assert sorted(h["legs"]["rerank"]["rank"] for h in reranked["hits"]) == list(range(1, 7))
    scores = [h["score"] for h in reranked["hits"]]
    assert scores == sorted(scores, reverse=True)
    assert (fused["degraded"], reranked["degraded"]) == ([], [])


def _words_search(agent, *, rerank_depth: int = 0):
    """The words query over the messages, fused only or reranked this deep."""
    return hybrid_search(
        agent_id=agent.id,
        query=WORDS_QUERY,
        scopes=[Scope("messages")],
        limit=10,
        ranking=Ranking(rerank_depth=rerank_depth),
    )


def test_the_stage_reorders_only_the_candidates_and_keeps_the_rest_below(agent, chat):
    fused = _words_search(agent).hits

    result = _words_search(agent, rerank_depth=4)

    head, tail = result.hits[:4], result.hits[4:]
    assert result.rerank_error == ""
    assert {h.object_id for h in head} == {h.object_id for h in fused[:4]}
    assert [h.object_id for h in tail] == [h.object_id for h in fused[4:]]
    assert [h.object_id for h in head] != [h.object_id for h in fused[:4]]
    assert all("rerank" in h.legs for h in head)
    assert all("rerank" not in h.legs for h in tail)
    assert [h.score for h in tail] == [head[-1].score - n for n in range(1, len(tail) + 1)]


def test_candidates_without_stored_states_keep_their_fused_place(agent, chat):
    # given: no message has states yet (embedded before they were kept)
    fused = _words_search(agent).hits
    MessageTokens.objects.all().delete()

    result = _words_search(agent, rerank_depth=50)

    # then: the fused order, no rerank leg, and no error (nothing is broken, just not there)
    assert [h.object_id for h in result.hits] == [h.object_id for h in fused]
    assert all("rerank" not in h.legs for h in result.hits)
    assert result.rerank_error == ""


def test_one_candidate_without_states_is_scored_as_the_candidates_mean(agent, chat):
    # given: the best word match has lost its states
    MessageTokens.objects.filter(message__content=CHAT[1]).delete()

    result = _words_search(agent, rerank_depth=50)

    # then: it is still there, without a rerank leg; the others are ranked among themselves
    assert len(result.hits) == len(CHAT)
    [lost] = [h for h in result.hits if "rerank" not in h.legs]
    assert MessageTokens.objects.filter(message_id=lost.object_id).count() == 0
    assert sorted(h.legs["rerank"].rank for h in result.hits if h is not lost) == list(range(1, 6))


def test_a_candidate_is_scored_with_its_session_neighbours_at_a_discount(agent, embed_now):
    # given: the same turn in two sessions; only in the first is the next turn about the
    # query's other words
    with embed_now():
        [here, _answer] = add(
            SessionFactory(agent=agent, key="a"), "Lisbon again.", "violin tickets, sold out"
        )
        [there, _other] = add(
            SessionFactory(agent=agent, key="b"), "Lisbon again.", "We ate fish by the river."
        )

    def scores():
        result = hybrid_search(
            agent_id=agent.id,
            query="Lisbon violin tickets",
            scopes=[Scope("messages")],
            limit=10,
            ranking=Ranking(rerank_depth=100),
        )
        return {h.object_id: h.legs["rerank"].score for h in result.hits if "rerank" in h.legs}

    with_neighbours = scores()
    MessageTokens.objects.exclude(message__in=[here, there]).delete()
    alone = scores()

    # then: the turn whose neighbour answers scores higher; without the neighbours' states
    # the two are the same turn and score the same
    assert with_neighbours[here.pk] > with_neighbours[there.pk]
    assert alone[here.pk] == pytest.approx(alone[there.pk], abs=1e-6)


def test_turning_it_off_gives_the_fused_order(api, agent, chat):
    agent_update_settings(agent=agent, changes={"rerank": False})
    off = _search(api)
    agent_update_settings(agent=agent, changes={"rerank": True})
    agent_update_settings(agent=agent, changes={"rerank": False})

    assert _search(api) == off


def test_other_modes_are_not_reranked(api, chat):
    for mode in ("semantic", "keyword", "contains"):
        hits = api.post("/search", {"query": WORDS_QUERY, "mode": mode}).json()["hits"]
        assert all("rerank" not in h["legs"] for h in hits), mode


def test_rerank_never_shows_another_agents_messages(api, agent, other_agent, chat, embed_now):
    theirs = SessionFactory(agent=other_agent, key="theirs")
    with embed_now():
        add(theirs, "violin concert tickets Lisbon, all four words")
    agent_update_settings(agent=agent, changes={"rerank_candidates": 2})

    hits = _search(api)["hits"]

    assert sorted(_contents(hits)) == sorted(CHAT)


def test_maxsim_weights_query_words_by_how_rare_their_matches_are():
    # given: word 0 matches every document equally well, word 1 only the second
    query = np.eye(2, dtype=np.float32)
    docs = [np.array([[1.0, 0.0]], np.float32), np.array([[0.6, 0.8], [1.0, 0.0]], np.float32)]

    scores = maxsim(query, docs)

    # mean best matches: word 0 is 1.0, word 1 is 0.4, so word 1 weighs e^3 times more
    w1 = np.exp(3.0) / (1 + np.exp(3.0))
    assert scores == pytest.approx([(1 - w1) * 1.0 + w1 * 0.0, (1 - w1) * 1.0 + w1 * 0.8])
    assert maxsim(query, [np.zeros((0, 2), np.float32)]).tolist() == [-1.0]
    assert maxsim(np.zeros((0, 2), np.float32), docs).tolist() == [0.0, 0.0]


@pytest.mark.slow
def test_minilm_states_move_the_answer_up(api, agent, embed_now):
    # given: MiniLM; each turn in a session of its own (nothing to smooth over); only the
    # answer and the distractor name Caroline
    with override_settings(MEMORYHUB_PROVIDERS={"embedding": MINILM, "llm": None}):
        with embed_now():
            for i, text in enumerate([DISTRACTOR, *OTHERS, ANSWER]):
                name = "Caroline" if text in (DISTRACTOR, ANSWER) else ""
                add(SessionFactory(agent=agent, key=f"s{i}"), text, name=name)
        agent_update_settings(agent=agent, changes={"rerank": False})
        before = _search(api, QUERY)["hits"]
        agent_update_settings(agent=agent, changes={"rerank": True})
        after = _search(api, QUERY)["hits"]

    assert _contents(before)[0] == DISTRACTOR
    assert _contents(after)[0] == ANSWER
    assert sorted(_contents(after)) == sorted(_contents(before))
    assert MessageTokens.objects.filter(space__startswith="all-MiniLM-L6-v2/pca").count() == 6


@pytest.mark.slow
def test_a_projection_file_failing_its_checksum_is_refused(api, agent, embed_now, tmp_path):
    # given: MiniLM with a projection file that is not the pinned one
    wrong = tmp_path / "projection.npz"
    wrong.write_bytes(b"not the projection")
    broken = {**MINILM, "CONFIG": {**MINILM["CONFIG"], "TOKEN_PROJECTION_PATH": str(wrong)}}
    with override_settings(MEMORYHUB_PROVIDERS={"embedding": broken, "llm": None}):
        with embed_now():
            for i, text in enumerate([DISTRACTOR, *OTHERS, ANSWER]):
                add(SessionFactory(agent=agent, key=f"s{i}"), text, name="Caroline")
        agent_update_settings(agent=agent, changes={"rerank": False})
        fused = _search(api, QUERY)
        agent_update_settings(agent=agent, changes={"rerank": True})

        # when
        reranked = _search(api, QUERY)
        status = api.get("/search/status").json()

    # then: vectors were written, no states; the search is a 200 in fused order, saying so
    assert (status["embedded"], MessageTokens.objects.count()) == (6, 0)
    assert status["token_states"]["space"] == ""
    assert status["token_states"]["error"].startswith("MiniLM token projection: ")
    assert f"{wrong} has sha256 " in status["token_states"]["error"]
    assert [h["id"] for h in reranked["hits"]] == [h["id"] for h in fused["hits"]]
    assert reranked["degraded"] == ["rerank"]
    assert fused["degraded"] == []


@pytest.mark.parametrize(
    ("changes", "detail"),
    [
        ({"rerank": "sometimes"}, "rerank: Input should be a valid boolean, unable to interpret"),
        ({"rerank_candidates": 1}, "rerank_candidates: Input should be greater than or equal"),
        ({"rerank_candidates": 201}, "rerank_candidates: Input should be less than or equal"),
    ],
)
def test_bad_rerank_settings_are_422(api, changes, detail):
    response = api.patch("/agent/settings", {"settings": changes})

    assert response.status_code == 422
    [error] = response.json()["detail"]
    assert error["loc"] == ["body", "settings", next(iter(changes))]
    assert error["msg"].startswith(detail)
