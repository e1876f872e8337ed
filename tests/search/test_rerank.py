"""The reranking stage of hybrid search, through the API and the agent setting.

The reranker is the real MiniLM late-interaction one (the test settings' embedder is the
hash one, so the fused order here is BM25 + hashed vectors).
"""

import pytest
from django.test import override_settings

from apps.agents.services import agent_update_settings
from apps.search.hybrid import Scope, hybrid_search
from tests.factories import SessionFactory
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


@pytest.fixture
def chat(agent, embed_now):
    """Each turn in a session of its own (no neighbours to smooth over); only the answer and
    the distractor name Caroline, so no two turns tie in the BM25 leg."""
    with embed_now():
        for i, text in enumerate([DISTRACTOR, *OTHERS, ANSWER]):
            name = "Caroline" if text in (DISTRACTOR, ANSWER) else ""
            add(SessionFactory(agent=agent, key=f"s{i}"), text, name=name)


def _search(api, **extra):
    response = api.post("/search", {"query": QUERY, "mode": "hybrid", "k": 10, **extra})
    assert response.status_code == 200, response.content
    return response.json()["hits"]


def _contents(hits):
    return [h["content"] for h in hits]


def test_rerank_setting_moves_the_answer_up(api, agent, chat):
    # given: without reranking the turn repeating "moved" comes first (BM25 ranks it first,
    # the vector leg the answer, and the tie goes to the BM25 leg's order)
    camping, pottery, painted, weather = OTHERS[3], OTHERS[2], OTHERS[1], OTHERS[0]
    before = _search(api)
    assert _contents(before) == [DISTRACTOR, ANSWER, camping, weather, pottery, painted]
    assert before[0]["score"] == before[1]["score"]
    assert all("rerank" not in h["legs"] for h in before)

    # when
    response = api.patch("/agent/settings", {"settings": {"rerank": True}})
    after = _search(api)

    # then
    assert response.status_code == 200
    assert response.json()["settings"]["rerank"] is True
    assert _contents(after) == [ANSWER, DISTRACTOR, camping, weather, pottery, painted]
    assert [h["legs"]["rerank"]["rank"] for h in after] == [1, 2, 4, 3, 5, 6]
    assert [h["score"] for h in after] == sorted((h["score"] for h in after), reverse=True)


def test_turning_it_off_again_gives_the_fused_order_back(api, agent, chat):
    before = _search(api)
    api.patch("/agent/settings", {"settings": {"rerank": True}})
    api.patch("/agent/settings", {"settings": {"rerank": None}})  # back to the default

    assert _search(api) == before


def test_other_modes_are_not_reranked(api, agent, chat):
    agent_update_settings(agent=agent, changes={"rerank": True})

    for mode in ("semantic", "keyword", "contains"):
        hits = api.post("/search", {"query": QUERY, "mode": mode}).json()["hits"]
        assert all("rerank" not in h["legs"] for h in hits), mode


def test_a_failing_reranker_leaves_the_fused_order(api, agent, chat, tmp_path):
    # given: a model path whose file is not the pinned model
    corrupt = tmp_path / "model.onnx"
    corrupt.write_bytes(b"not the model")
    before = _search(api)
    agent_update_settings(agent=agent, changes={"rerank": True})
    providers = {
        "embedding": {"CLASS": "apps.providers.embeddings.fake.HashEmbedder", "CONFIG": {}},
        "rerank": {
            "CLASS": "apps.providers.rerank.maxsim.MiniLMMaxSimReranker",
            "CONFIG": {"MODEL_PATH": str(corrupt)},
        },
    }

    # when
    with override_settings(MEMORYHUB_PROVIDERS=providers):
        after = _search(api)

    # then: a 200 with exactly the un-reranked hits
    assert after == before


def test_hits_past_the_candidates_keep_their_fused_order_below_them(agent, chat):
    scope = [Scope("messages")]
    fused = hybrid_search(agent_id=agent.id, query=QUERY, scopes=scope, limit=10).hits

    result = hybrid_search(agent_id=agent.id, query=QUERY, scopes=scope, limit=10, rerank_depth=3)

    head, tail = result.hits[:3], result.hits[3:]
    assert result.rerank_error == ""
    assert {h.object_id for h in head} == {h.object_id for h in fused[:3]}
    assert [h.object_id for h in tail] == [h.object_id for h in fused[3:]]
    assert all("rerank" in h.legs for h in head)
    assert all("rerank" not in h.legs for h in tail)
    assert [h.score for h in tail] == [head[-1].score - n for n in range(1, len(tail) + 1)]


def test_rerank_never_shows_another_agents_messages(api, agent, other_agent, chat, embed_now):
    # given: another agent holds the perfect answer
    theirs = SessionFactory(agent=other_agent, key="theirs")
    with embed_now():
        add(theirs, "Caroline moved here from Sweden, where did she move from? Sweden.")
    agent_update_settings(agent=agent, changes={"rerank": True, "rerank_candidates": 2})

    hits = _search(api)

    assert sorted(_contents(hits)) == sorted([*OTHERS, DISTRACTOR, ANSWER])


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


def test_settings_show_the_rerank_defaults(api):
    settings = api.get("/agent").json()["settings"]

    assert (settings["rerank"], settings["rerank_candidates"]) == (False, 50)
