"""MemoryHubStore(index={"dims": 384, ...}) without `embed` (issue 41): the server embeds the
items with its own model and ranks a query search by its hybrid ranking, through the live
server; a put's fields (its own, else the store's) choose the embedded text. The tests'
server embeds with the deterministic hashed embedder (fake-hash@384)."""

import asyncio
import json

import numpy as np
import pytest
from memoryhub_client.langgraph import MemoryHubStore

from apps.entries.models import Entry
from apps.providers.embeddings.fake import HashEmbedder

pytestmark = pytest.mark.django_db(transaction=True)


def _view(items) -> list[tuple]:
    return [(i.namespace, i.key, i.value) for i in items]


def _vector_of(name: str) -> list[float]:
    return Entry.objects.get(name=name).embedding.tolist()


def test_a_dims_other_than_the_servers_is_a_value_error_naming_both(hub):
    with pytest.raises(ValueError, match=r"index dims 1536 is not the server's 384"):
        MemoryHubStore(client=hub, index={"dims": 1536})
    store = MemoryHubStore(client=hub, index={"dims": 384})
    assert (store.index_config, store.embeddings) == ({"dims": 384}, None)


def test_items_are_embedded_by_the_server_and_a_query_ranks_by_hybrid_with_scores(hub):
    store = MemoryHubStore(client=hub, index={"dims": 384})
    store.put(("users", "ana", "memories"), "m1", {"text": "ana loves ramen noodles"})
    store.put(("users", "ana", "memories"), "m2", {"text": "ana drives a blue car"})
    store.put(("users", "bob", "memories"), "m1", {"text": "bob loves ramen noodles"})
    store.put(("docs",), "guide", {"text": "ramen recipe"})

    # the whole value is embedded ("$"): the entry's content
    content = json.dumps({"text": "ana loves ramen noodles"})
    name = "users/ana/memories/m1.json"
    assert Entry.objects.get(name=name).user == "ana"
    assert _vector_of(name) == pytest.approx(HashEmbedder().embed([content])[0])

    hits = store.search(("users", "ana"), query="ramen noodles")

    # RRF (k=10) of the BM25 and vector legs: m1 first in both, m2 second by vector alone;
    # bob's and the docs' items are outside the op's user and namespace folder.
    assert _view(hits) == [
        (("users", "ana", "memories"), "m1", {"text": "ana loves ramen noodles"}),
        (("users", "ana", "memories"), "m2", {"text": "ana drives a blue car"}),
    ]
    assert [h.score for h in hits] == [pytest.approx(2 / 11), pytest.approx(1 / 12)]
    assert _view(store.search(("users", "ana"), query="ramen noodles", offset=1)) == _view(hits[1:])
    assert store.search(("users", "ana"), query="ramen", filter={"text": "nothing"}) == []


def test_the_stores_fields_and_a_puts_own_choose_what_is_embedded(hub):
    store = MemoryHubStore(client=hub, index={"dims": 384, "fields": ["text"]})
    store.put(("mem",), "a", {"text": "green tea", "note": "coffee"})
    store.put(("mem",), "b", {"text": "black coffee", "note": "tea"}, index=["note"])

    assert hub.entries.get("mem/a.json").index_fields == ["text"]
    assert hub.entries.get("mem/b.json").index_fields == ["note"]
    assert _vector_of("mem/a.json") == pytest.approx(HashEmbedder().embed(["green tea"])[0])
    assert _vector_of("mem/b.json") == pytest.approx(HashEmbedder().embed(["tea"])[0])


def test_a_put_with_fields_ranks_by_those_fields_langmem_style(hub):
    # LangMem's memories are {"content": ..., ...}; with fields ["content"] only the memory's
    # text is embedded, so its other keys do not pull a query towards it.
    store = MemoryHubStore(client=hub, index={"dims": 384, "fields": ["content"]})
    store.put(("memories", "ana"), "tea", {"content": "drinks green tea", "kind": "weather report"})
    store.put(("memories", "ana"), "sky", {"content": "weather report: sunny", "kind": "misc"})
    whole = MemoryHubStore(client=hub, index={"dims": 384})  # fields "$": the whole value
    whole.put(("memories", "bob"), "tea", {"content": "drinks green tea", "kind": "weather report"})

    hits = store.search(("memories", "ana"), query="weather report")

    assert [h.key for h in hits] == ["sky", "tea"]
    assert [h.score for h in hits] == [pytest.approx(2 / 11), pytest.approx(2 / 12)]
    # the vector leg's own scores: ana's "tea" by its content alone, bob's by all of it
    semantic = {
        h.entry.name: h.score
        for h in hub.entries.search("weather report", mode="semantic", all_users=True).items
    }
    query = np.array(HashEmbedder().embed(["weather report"])[0])
    by_content = float(query @ HashEmbedder().embed(["drinks green tea"])[0])
    assert semantic["memories/ana/tea.json"] == pytest.approx(by_content, abs=1e-5)
    assert semantic["memories/bob/tea.json"] > by_content + 0.3


def test_index_false_items_are_not_returned_by_a_query_search_but_listed(hub):
    store = MemoryHubStore(client=hub, index={"dims": 384})
    store.put(("mem",), "visible", {"text": "kiwi smoothie"})
    store.put(("mem",), "hidden", {"text": "kiwi secret"}, index=False)

    assert [i.key for i in store.search(("mem",), query="kiwi")] == ["visible"]
    assert sorted(i.key for i in store.search(("mem",))) == ["hidden", "visible"]
    assert Entry.objects.get(name="mem/hidden.json").embedding is None


def test_the_async_search_asks_the_server_too(env, hub):
    store = MemoryHubStore(index={"dims": 384})

    async def scenario():
        await store.aput(("mem",), "a", {"text": "sencha tea"})
        await store.aput(("mem",), "b", {"text": "espresso"})
        return await store.asearch(("mem",), query="tea")

    hits = asyncio.run(scenario())
    assert [h.key for h in hits] == ["a", "b"]
    assert hits[0].score == pytest.approx(2 / 11)
