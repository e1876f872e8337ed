"""Entries are embedded (issue 41): indexed entries get vectors after commit, by their content
or the texts at their index fields; /entries/search ranks them by keyword (BM25), semantic
(cosine) or hybrid (as /memory/search), within a name prefix."""

import json

import numpy as np
import pytest

from apps.entries.models import Entry
from apps.entries.services import entry_add, entry_write
from apps.providers.embeddings import embed_query
from apps.providers.embeddings.fake import HashEmbedder
from apps.search.tasks import embed_pending_task
from tests.memory.helpers import BROKEN, MINILM, use_embedder

pytestmark = pytest.mark.django_db


@pytest.fixture
def embed_now(django_capture_on_commit_callbacks):
    """Run after-commit callbacks (the embedding sweep, eager) at the end of the block."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def cosine(query, text):
    return float(np.dot(embed_query(query), HashEmbedder().embed([text])[0]))


def search(api, q, **params):
    response = api.get("/entries/search", {"q": q, **params})
    assert response.status_code == 200, response.content
    return [(h["entry"]["name"], h["score"]) for h in response.json()["items"]]


def test_a_written_entry_gets_a_vector_of_its_content_after_commit(api, embed_now):
    with embed_now():
        added = api.post("/entries", {"name": "notes.md", "content": "ramen in Tokyo"})

    entry = Entry.objects.get(pk=added.json()["id"])
    assert (entry.embedding_model, entry.embedding_error) == ("fake-hash@384", "")
    assert entry.embedding.tolist() == pytest.approx(HashEmbedder().embed(["ramen in Tokyo"])[0])


def test_a_write_embeds_the_new_content_and_an_unchanged_one_keeps_its_vector(agent, embed_now):
    with embed_now():
        entry = entry_add(agent=agent, name="a.md", content="apples")
    with embed_now():
        entry_write(agent=agent, ref="a.md", content="bananas")

    stored = Entry.objects.get(pk=entry.pk)
    assert stored.embedding.tolist() == pytest.approx(HashEmbedder().embed(["bananas"])[0])


def test_an_entry_written_with_index_false_keeps_no_vector_and_counts_in_no_backlog(api, embed_now):
    with embed_now():
        api.post("/entries", {"name": "secret.md", "content": "ramen", "index": False})
        api.post("/entries", {"name": "open.md", "content": "ramen"})

    assert dict(Entry.objects.values_list("name", "embedding_model")) == {
        "secret.md": "",
        "open.md": "fake-hash@384",
    }
    assert embed_pending_task() == 0
    assert api.get("/search/status").json()["corpora"]["entries"] == {
        "embedded": 1, "stale": 0, "pending": 0, "failed": 0, **_tokens(api)
    }  # fmt: skip
    # indexed again: embedded again
    with embed_now():
        api.put("/entries/secret.md", {"content": "ramen", "index": True})
    assert Entry.objects.get(name="secret.md").embedding_model == "fake-hash@384"


def _tokens(api):
    status = api.get("/search/status").json()["corpora"]["entries"]
    return {k: v for k, v in status.items() if k not in {"embedded", "stale", "pending", "failed"}}


def test_index_fields_choose_the_embedded_text_of_a_json_value(api, embed_now):
    value = {"text": "I love ramen", "tags": ["food", "tokyo"], "meta": {"source": "chat"}}
    with embed_now():
        added = api.post(
            "/entries",
            {"name": "m.json", "content": json.dumps(value), "index": ["text", "tags[*]"]},
        )

    assert added.status_code == 201
    assert (added.json()["index"], added.json()["index_fields"]) == (True, ["text", "tags[*]"])
    stored = Entry.objects.get(name="m.json")
    expected = HashEmbedder().embed(["I love ramen\nfood\ntokyo"])[0]
    assert stored.embedding.tolist() == pytest.approx(expected)


def test_new_index_fields_embed_the_entry_again_and_true_clears_them(api, embed_now):
    content = json.dumps({"a": "alpha words", "b": "beta words"})
    with embed_now():
        api.post("/entries", {"name": "v.json", "content": content, "index": ["a"]})
    with embed_now():
        written = api.put("/entries/v.json", {"content": content, "index": ["b"]})

    assert written.json()["index_fields"] == ["b"]
    stored = Entry.objects.get(name="v.json")
    assert stored.embedding.tolist() == pytest.approx(HashEmbedder().embed(["beta words"])[0])
    with embed_now():
        written = api.put("/entries/v.json", {"content": content, "index": True})
    assert (written.json()["index"], written.json()["index_fields"]) == (True, None)
    stored = Entry.objects.get(name="v.json")
    assert stored.embedding.tolist() == pytest.approx(HashEmbedder().embed([content])[0])
    # a write without index keeps it
    assert api.put("/entries/v.json", {"content": content}).json()["index_fields"] is None


@pytest.mark.parametrize(
    ("index", "message"),
    [
        (["a..b"], "invalid index field 'a..b' at character 2"),
        (["tags[x]"], "invalid index field 'tags[x]' at character 5"),
        ([""], "an index field is a non-empty path of at most 200 characters"),
        (["a"] * 33, "at most 32 index fields"),
    ],
)
def test_a_bad_index_field_is_a_422_naming_it(api, index, message):
    added = api.post("/entries", {"name": "x.json", "content": "{}", "index": index})
    api.post("/entries", {"name": "y.json", "content": "{}"})
    written = api.put("/entries/y.json", {"content": "{}", "index": index})

    for response in (added, written):
        assert response.status_code == 422
        assert response.json()["detail"][0]["msg"] == message
        assert response.json()["detail"][0]["loc"] == ["body", "index"]
    assert not Entry.objects.filter(name="x.json").exists()


def test_index_of_another_type_is_a_422(api):
    for index in ([1, 2], "text", {"a": 1}):
        response = api.post("/entries", {"name": "x.json", "content": "{}", "index": index})
        assert response.status_code == 422, index


def test_semantic_mode_ranks_by_cosine_with_the_score(api, embed_now):
    texts = {"a.md": "ramen noodles", "b.md": "noodles in Tokyo", "d.md": "tax forms"}
    with embed_now():
        for name, text in texts.items():
            api.post("/entries", {"name": name, "content": text})
        api.post("/entries", {"name": "c.md", "content": "ramen noodles", "index": False})

    hits = search(api, "ramen noodles", mode="semantic", limit=3)

    expected = sorted(((n, cosine("ramen noodles", t)) for n, t in texts.items()),
                      key=lambda hit: -hit[1])  # fmt: skip
    assert [n for n, _ in hits] == ["a.md", "b.md", "d.md"]
    assert hits == [(n, pytest.approx(score, abs=1e-5)) for n, score in expected]
    assert hits[0][1] == pytest.approx(1.0, abs=1e-5)  # the same words: the same vector


def test_keyword_stays_the_default_and_bm25_scored(api, embed_now):
    with embed_now():
        api.post("/entries", {"name": "a.md", "content": "ramen"})
        api.post("/entries", {"name": "b.md", "content": "soba"})

    assert search(api, "ramen") == search(api, "ramen", mode="keyword")
    assert [n for n, _ in search(api, "ramen")] == ["a.md"]
    assert api.get("/entries/search", {"q": "x", "mode": "fuzzy"}).status_code == 422


def test_hybrid_mode_fuses_the_keyword_and_vector_legs(api, agent, embed_now):
    with embed_now():
        api.post("/entries", {"name": "a.md", "content": "ramen noodles in Tokyo"})
        api.post("/entries", {"name": "b.md", "content": "noodle bars"})
        api.post("/entries", {"name": "c.md", "content": "tax forms"})

    hits = search(api, "ramen noodles", mode="hybrid")

    # RRF with k=10: a.md is first in both legs, 1/(10+1) twice; b.md second in both (BM25
    # stems "noodle"), c.md shares no word: only the vector leg ranks it, third.
    assert hits == [
        ("a.md", pytest.approx(2 / 11)),
        ("b.md", pytest.approx(2 / 12)),
        ("c.md", pytest.approx(1 / 13)),
    ]


def test_hybrid_ranks_like_memory_search(api, embed_now):
    with embed_now():
        api.post("/entries", {"name": "a.md", "content": "ramen noodles in Tokyo"})
        api.post("/entries", {"name": "b.md", "content": "noodle bars"})

    hits = search(api, "ramen noodles", mode="hybrid")
    memory = api.post("/memory/search", {"query": "ramen noodles", "k": 10}).json()["items"]

    assert hits == [
        (h["name"], pytest.approx(h["score"])) for h in memory if h["source"] == "entry"
    ]


def test_prefix_keeps_only_entries_named_under_it_in_every_mode(api, embed_now):
    with embed_now():
        api.post("/entries", {"name": "langgraph/users/ana/prefs.json", "content": "ramen"})
        api.post("/entries", {"name": "langgraph/users/bob/prefs.json", "content": "ramen"})
        api.post("/entries", {"name": "notes.md", "content": "ramen"})

    for mode in ("keyword", "semantic", "hybrid"):
        hits = search(api, "ramen", mode=mode, prefix="langgraph/users/ana/")
        assert [n for n, _ in hits] == ["langgraph/users/ana/prefs.json"], mode
    assert [n for n, _ in search(api, "ramen", prefix="langgraph/")] == [
        "langgraph/users/ana/prefs.json",
        "langgraph/users/bob/prefs.json",
    ]


def test_semantic_search_is_per_agent_and_per_user(api, other_api, embed_now):
    with embed_now():
        api.post("/entries", {"name": "mine.md", "content": "launch codes"})
        api.post("/entries", {"name": "ana.md", "content": "launch codes", "user": "ana"})
        other_api.post("/entries", {"name": "theirs.md", "content": "launch codes"})

    for mode in ("semantic", "hybrid"):
        assert [n for n, _ in search(other_api, "launch codes", mode=mode)] == ["theirs.md"]
        assert [n for n, _ in search(api, "launch codes", mode=mode)] == ["mine.md"]
        ana = search(api, "launch codes", mode=mode, user="ana")
        assert sorted(n for n, _ in ana) == ["ana.md", "mine.md"]
        bob = search(api, "launch codes", mode=mode, user="bob")
        assert [n for n, _ in bob] == ["mine.md"]


def test_a_query_that_cannot_be_embedded_falls_back_to_keyword_degraded(api, settings):
    entry_add_via = api.post("/entries", {"name": "a.md", "content": "ramen"})
    assert entry_add_via.status_code == 201
    use_embedder(settings, BROKEN)

    for mode in ("semantic", "hybrid"):
        response = api.get("/entries/search", {"q": "ramen", "mode": mode})
        assert response.status_code == 200
        assert response.json()["degraded"] == ["semantic"]
        assert [h["entry"]["name"] for h in response.json()["items"]] == ["a.md"]


def test_minilm_finds_an_entry_by_meaning_alone(api, settings, embed_now):
    use_embedder(settings, MINILM)
    with embed_now():
        api.post("/entries", {"name": "food.md", "content": "Ana's favourite dish is ramen."})
        api.post("/entries", {"name": "car.md", "content": "The car needs new tyres."})

    hits = search(api, "what does she like to eat", mode="semantic")

    assert [n for n, _ in hits] == ["food.md", "car.md"]
    assert search(api, "what does she like to eat") == []  # no shared word: keyword finds none
