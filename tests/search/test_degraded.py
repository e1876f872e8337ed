"""With the embedder down, every search that embeds its query answers from keyword legs and
says so with `degraded: ["semantic"]`; healthy answers carry `degraded: []`."""

import pytest

from apps.entries.services import entry_add
from apps.facts.services import fact_save
from tests.search.conftest import add
from tests.support.llm_server import unused_port_url

pytestmark = pytest.mark.django_db


def _embedder_down(settings) -> str:
    """The real OpenAI-compatible embedder, pointed at a loopback port nobody listens on."""
    url = unused_port_url()
    settings.MEMORYHUB_PROVIDERS = {
        **settings.MEMORYHUB_PROVIDERS,
        "embedding": {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {"URL": url, "MODEL": "fake-hash", "DIMENSIONS": 384, "TIMEOUT": 2.0},
        },
    }
    return url


@pytest.fixture
def chat(session, embed_now):
    with embed_now():
        return add(
            session,
            "the deploy failed on the staging cluster",
            "lunch was pasta today",
            "staging cluster restarted after the deploy fix was reviewed by the whole team",
            "the weather is sunny",
        )


def _hits(response) -> list[tuple[str, list[str]]]:
    return [(h["content"], sorted(h["legs"])) for h in response.json()["hits"]]


def test_hybrid_falls_back_to_bm25_and_neighbours_instead_of_503(api, chat, settings):
    healthy = api.post("/search", {"query": "staging deploy", "mode": "hybrid"})
    _embedder_down(settings)

    response = api.post("/search", {"query": "staging deploy", "mode": "hybrid"})

    assert healthy.json()["degraded"] == []
    assert "vector" in healthy.json()["hits"][0]["legs"]
    assert response.status_code == 200
    assert response.json()["mode"] == "hybrid"
    assert response.json()["degraded"] == ["semantic"]
    assert _hits(response) == [
        (chat[0].content, ["bm25"]),
        (chat[2].content, ["bm25"]),
        (chat[1].content, ["neighbour"]),  # passed a share by both hits around it
        (chat[3].content, ["neighbour"]),
    ]


def test_semantic_falls_back_to_bm25_over_the_same_scope(api, chat, session, settings):
    healthy = api.post("/search", {"query": "staging deploy"})
    _embedder_down(settings)

    response = api.post(
        "/search",
        # min_score is a cosine cutoff: meaningless on BM25 scores, so not applied.
        {"query": "staging deploy", "session_id": session.key, "min_score": 0.99},
    )
    other_role = api.post("/search", {"query": "staging deploy", "role": "assistant"})

    assert healthy.json()["degraded"] == []
    assert sorted(healthy.json()["hits"][0]["legs"]) == ["vector"]
    assert response.status_code == 200
    assert response.json()["mode"] == "semantic"
    assert response.json()["degraded"] == ["semantic"]
    assert _hits(response) == [(chat[0].content, ["bm25"]), (chat[2].content, ["bm25"])]
    assert (other_role.json()["hits"], other_role.json()["degraded"]) == ([], ["semantic"])


def test_keyword_and_contains_never_need_the_embedder(api, chat, settings):
    _embedder_down(settings)

    contains = api.post("/search", {"query": "pasta", "mode": "contains"})
    keyword = api.post("/search", {"query": "weather", "mode": "keyword"})

    assert (_hits(contains), contains.json()["degraded"]) == (
        [(chat[1].content, ["contains"])],
        [],
    )
    assert keyword.json()["degraded"] == []
    assert [h["content"] for h in keyword.json()["hits"]] == [chat[3].content]


def test_memory_search_answers_by_keyword_and_says_so(api, agent, settings):
    entry_add(agent=agent, name="projects/rust.md", content="Rust borrow checker notes")
    fact = fact_save(agent=agent, content="The user writes Rust every day", category="skills")
    entry_add(agent=agent, name="groceries.md", content="milk and eggs")
    healthy = api.post("/memory/search", {"query": "Rust"}).json()
    _embedder_down(settings)

    response = api.post("/memory/search", {"query": "Rust"})

    assert healthy["degraded"] == []
    assert response.status_code == 200
    assert response.json()["degraded"] == ["semantic"]
    assert sorted(
        (i["source"], i["name"], sorted(i["legs"])) for i in response.json()["items"]
    ) == [
        ("entry", "projects/rust.md", ["bm25"]),
        ("fact", f"skills/{fact.fact.key}", ["bm25"]),
    ]


def test_memory_recall_answers_by_keyword_and_says_so(api, agent, settings):
    rust = fact_save(agent=agent, content="The user writes Rust every day", category="skills")
    fact_save(agent=agent, content="The user drinks green tea", category="food")
    healthy = api.post("/memory/recall", {"query": "Rust"}).json()
    _embedder_down(settings)

    response = api.post("/memory/recall", {"query": "Rust"})

    assert healthy["degraded"] == []
    assert response.status_code == 200
    body = response.json()
    assert (body["degraded"], body["fell_back"], body["categories"]) == (["semantic"], True, [])
    assert [(i["fact"]["id"], i["tier"]) for i in body["items"]] == [(rust.fact.pk, "flat")]


def test_get_context_drops_the_relevance_leg_and_says_so(api, chat, session, settings):
    healthy = api.post("/context", {"session_id": session.key, "query": "staging deploy"})
    url = _embedder_down(settings)

    response = api.post("/context", {"session_id": session.key, "query": "staging deploy"})

    assert (healthy.json()["degraded"], healthy.json()["warnings"]) == ([], [])
    assert response.status_code == 200
    body = response.json()
    assert body["degraded"] == ["semantic"]
    assert len(body["warnings"]) == 1
    assert body["warnings"][0].startswith(
        f"relevance leg skipped: embedding request failed: cannot reach {url}/embeddings"
    )
    # The recency leg still brings the whole (short) session; none of it by relevance.
    assert [m["content"] for m in body["messages"]] == [m.content for m in chat]
    assert all("relevance" not in m["legs"] for m in body["messages"])


def test_error_memory_search_answers_by_substring_and_says_so(api, settings):
    with_vector = api.post(
        "/errors", {"tool_name": "git_push", "error": "Rejected: non-fast-forward update"}
    ).json()
    healthy = api.post("/errors/search", {"query": "non-fast-forward"}).json()
    _embedder_down(settings)

    response = api.post("/errors/search", {"query": "non-fast-forward"})

    assert healthy["degraded"] == []
    assert response.status_code == 200
    assert response.json()["degraded"] == ["semantic"]
    assert [(h["record"]["id"], sorted(h["legs"])) for h in response.json()["items"]] == [
        (with_vector["id"], ["contains"])
    ]
