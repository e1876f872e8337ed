"""memoryhub_client.langgraph.MemoryHubStore, a LangGraph BaseStore, against the live server:
the batch's ops with exact results, items as entries (names escaped reversibly), search by
memoryhub's keyword search with filters and pages, put(index=False), the async ops. The
namespaces here name no end user (the agent's own items); test_langgraph_users.py has the
users, and StateGraphs run for two of them."""

import asyncio

import pytest
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)
from memoryhub_client import AsyncMemoryHub, InvalidInput
from memoryhub_client.langgraph import MemoryHubStore, entry_name, parse_name


def _names(hub) -> list[str]:
    return sorted(e.name for e in hub.entries.list())


def _view(items) -> list[tuple]:
    """What a test compares of Items: namespace, key, value (and score for search hits)."""
    return [(i.namespace, i.key, i.value) for i in items]


def _seed(store: MemoryHubStore) -> None:
    store.put(("teams", "alice", "prefs"), "food", {"likes": "ramen", "spicy": 3})
    store.put(("teams", "alice", "prefs"), "drink", {"likes": "green tea", "spicy": 0})
    store.put(("teams", "alice"), "prefs", {"note": "an item beside the prefs namespace"})
    store.put(("teams", "bob", "prefs"), "food", {"likes": "ramen", "spicy": 5})
    store.put(("docs",), "guide", {"title": "Deploy guide", "tags": ["ops", "deploy"]})


def test_items_are_json_entries_named_by_namespace_and_key(hub):
    store = MemoryHubStore(client=hub)
    assert isinstance(store, BaseStore)
    assert store.supports_ttl is False

    _seed(store)

    assert _names(hub) == [
        "docs/guide.json",
        "teams/alice/prefs.json",
        "teams/alice/prefs/drink.json",
        "teams/alice/prefs/food.json",
        "teams/bob/prefs/food.json",
    ]
    assert hub.entries.get("teams/alice/prefs/food.json").content == (
        '{"likes": "ramen", "spicy": 3}'
    )
    food = store.get(("teams", "alice", "prefs"), "food")
    entry = hub.entries.get("teams/alice/prefs/food.json")
    assert food == Item(
        value={"likes": "ramen", "spicy": 3},
        key="food",
        namespace=("teams", "alice", "prefs"),
        created_at=entry.created_at,
        updated_at=entry.updated_at,
    )
    assert store.get(("teams", "alice", "prefs"), "nothing") is None
    assert store.get(("teams", "carol"), "food") is None


def test_put_replaces_and_a_none_value_deletes(hub):
    store = MemoryHubStore(client=hub)
    store.put(("a",), "k", {"v": 1})
    store.put(("a",), "k", {"v": 2})
    assert store.get(("a",), "k").value == {"v": 2}
    assert hub.entries.get("a/k.json").content == '{"v": 2}'

    store.delete(("a",), "k")
    store.delete(("a",), "k")  # deleting what is gone is fine

    assert store.get(("a",), "k") is None
    assert _names(hub) == []


def test_the_batch_runs_every_op_kind_with_exact_results(hub):
    store = MemoryHubStore(client=hub)
    _seed(store)

    results = store.batch(
        [
            GetOp(("teams", "alice", "prefs"), "food"),
            SearchOp(("teams",), filter={"likes": "ramen"}, limit=10),
            SearchOp(("teams", "alice"), query="ramen"),
            ListNamespacesOp(),
            PutOp(("teams", "carol", "prefs"), "food", {"likes": "pho"}),
            GetOp(("teams", "carol", "prefs"), "food"),  # reads see the store before the puts
            PutOp(("teams", "bob", "prefs"), "food", None),
        ]
    )

    assert len(results) == 7
    assert _view([results[0]]) == [
        (("teams", "alice", "prefs"), "food", {"likes": "ramen", "spicy": 3})
    ]
    assert sorted(_view(results[1])) == [
        (("teams", "alice", "prefs"), "food", {"likes": "ramen", "spicy": 3}),
        (("teams", "bob", "prefs"), "food", {"likes": "ramen", "spicy": 5}),
    ]
    assert _view(results[2]) == [
        (("teams", "alice", "prefs"), "food", {"likes": "ramen", "spicy": 3})
    ]
    assert all(isinstance(i, SearchItem) for i in results[1] + results[2])
    assert results[2][0].score > 0
    assert results[3] == [
        ("docs",),
        ("teams", "alice"),
        ("teams", "alice", "prefs"),
        ("teams", "bob", "prefs"),
    ]
    assert results[4] is None
    assert results[5] is None
    assert results[6] is None
    # The puts ran after the reads.
    assert store.get(("teams", "carol", "prefs"), "food").value == {"likes": "pho"}
    assert store.get(("teams", "bob", "prefs"), "food") is None
    suffixed = MatchCondition(match_type="suffix", path=("prefs",))
    [depth_two] = store.batch(
        [ListNamespacesOp(match_conditions=(suffixed,), max_depth=2, limit=1, offset=1)]
    )
    assert depth_two == [("teams", "carol")]


def test_several_puts_of_one_item_in_a_batch_leave_the_last(hub):
    store = MemoryHubStore(client=hub)
    store.batch(
        [
            PutOp(("n",), "k", {"v": 1}),
            PutOp(("n",), "other", {"v": 9}),
            PutOp(("n",), "k", {"v": 2}),
        ]
    )
    assert store.get(("n",), "k").value == {"v": 2}
    assert store.get(("n",), "other").value == {"v": 9}


def test_search_without_a_query_filters_then_pages_newest_first(hub):
    store = MemoryHubStore(client=hub)
    for i in range(5):
        store.put(("scores",), f"s{i}", {"n": i, "even": i % 2 == 0, "meta": {"team": "x"}})

    keys = [i.key for i in store.search(("scores",))]
    assert keys == ["s4", "s3", "s2", "s1", "s0"]
    assert [i.key for i in store.search(("scores",), limit=2, offset=1)] == ["s3", "s2"]
    assert [i.key for i in store.search(("scores",), filter={"even": True})] == ["s4", "s2", "s0"]
    assert [i.key for i in store.search(("scores",), filter={"n": {"$gte": 2, "$lt": 4}})] == [
        "s3",
        "s2",
    ]
    assert [i.key for i in store.search(("scores",), filter={"n": {"$ne": 4}}, limit=2)] == [
        "s3",
        "s2",
    ]
    assert [
        i.key
        for i in store.search(("scores",), filter={"meta": {"team": "x"}, "even": False}, offset=1)
    ] == ["s1"]
    assert store.search(("scores",), filter={"n": 99}) == []
    assert store.search(("elsewhere",)) == []
    assert [i.score for i in store.search(("scores",), limit=1)] == [None]


def test_search_with_a_query_uses_memoryhubs_keyword_search_within_the_prefix(hub):
    store = MemoryHubStore(client=hub)
    _seed(store)
    hub.entries.add("notes/ramen.md", "the best ramen in town")  # not an item: never returned

    hits = store.search(("teams",), query="ramen")
    assert sorted(_view(hits)) == [
        (("teams", "alice", "prefs"), "food", {"likes": "ramen", "spicy": 3}),
        (("teams", "bob", "prefs"), "food", {"likes": "ramen", "spicy": 5}),
    ]
    assert all(h.score > 0 for h in hits)
    assert _view(store.search(("teams",), query="ramen", filter={"spicy": {"$gt": 4}})) == [
        (("teams", "bob", "prefs"), "food", {"likes": "ramen", "spicy": 5})
    ]
    assert len(store.search(("teams",), query="ramen", limit=1)) == 1
    assert store.search(("teams",), query="ramen", offset=2) == []
    assert _view(store.search((), query="deploy")) == [
        (("docs",), "guide", {"title": "Deploy guide", "tags": ["ops", "deploy"]})
    ]
    assert store.search(("teams",), query="deploy") == []


def test_put_with_index_false_is_left_out_of_query_searches_but_listed(hub):
    store = MemoryHubStore(client=hub)
    store.put(("mem",), "visible", {"text": "kiwi smoothie"})
    store.put(("mem",), "hidden", {"text": "kiwi secret"}, index=False)

    assert [i.key for i in store.search(("mem",), query="kiwi")] == ["visible"]
    assert sorted(i.key for i in store.search(("mem",))) == ["hidden", "visible"]
    assert store.get(("mem",), "hidden").value == {"text": "kiwi secret"}
    # memoryhub leaves it out of its own searches too.
    assert hub.entries.get("mem/hidden.json").index is False
    assert [h.entry.name for h in hub.entries.search("kiwi").items] == ["mem/visible.json"]
    # (the vector leg ranks every embedded entry: the visible one comes back, by meaning)
    assert [h.name for h in hub.memory.search("secret").items] == ["mem/visible.json"]

    store.put(("mem",), "hidden", {"text": "kiwi secret"})  # indexed again
    assert sorted(i.key for i in store.search(("mem",), query="kiwi")) == ["hidden", "visible"]


def test_list_namespaces_matches_prefix_suffix_depth_and_pages(hub):
    store = MemoryHubStore(client=hub)
    _seed(store)
    store.put(("teams", "bob", "v1"), "x", {})

    def listed(**kwargs):
        return store.list_namespaces(**kwargs)

    assert listed(prefix=("teams",)) == [
        ("teams", "alice"),
        ("teams", "alice", "prefs"),
        ("teams", "bob", "prefs"),
        ("teams", "bob", "v1"),
    ]
    assert listed(prefix=("teams", "*", "prefs")) == [
        ("teams", "alice", "prefs"),
        ("teams", "bob", "prefs"),
    ]
    assert listed(suffix=("v1",)) == [("teams", "bob", "v1")]
    assert listed(prefix=("teams",), suffix=("prefs",)) == [
        ("teams", "alice", "prefs"),
        ("teams", "bob", "prefs"),
    ]
    assert listed(max_depth=1) == [("docs",), ("teams",)]
    assert listed(max_depth=2) == [("docs",), ("teams", "alice"), ("teams", "bob")]
    assert listed(limit=2, offset=1) == [("teams", "alice"), ("teams", "alice", "prefs")]
    assert listed(prefix=("nobody",)) == []


def test_labels_and_keys_are_escaped_reversibly(hub):
    store = MemoryHubStore(client=hub)
    odd = [
        (("a/b", "100%", " padded "), "x/y"),
        (("tabs\there",), ".."),
        (("back\\slash",), "ends with a dot."),
        (("dots",), "a..b.c"),
        (("aliases",), "aliases"),
        (("memory",), "HISTORY.md"),
        (("ünï", "日本"), "ключ"),
        (("q",), "what? #1 & more"),
    ]
    for namespace, key in odd:
        store.put(namespace, key, {"ns": list(namespace), "key": key})

    for namespace, key in odd:
        item = store.get(namespace, key)
        assert (item.namespace, item.key, item.value) == (
            namespace,
            key,
            {"ns": list(namespace), "key": key},
        )
    assert _names(hub) == sorted(
        [
            "a%2Fb/100%25/%20padded%20/x%2Fy.json",
            "tabs%09here/%2E%2E.json",
            "back%5Cslash/ends with a dot%2E.json",
            "dots/a%2E.b.c.json",
            "aliases/aliases.json",
            "memory/HISTORY.md.json",
            "ünï/日本/ключ.json",
            "q/what? #1 & more.json",
        ]
    )
    assert sorted(store.list_namespaces()) == sorted(ns for ns, _ in odd)
    for namespace, key in odd:
        assert parse_name(entry_name(namespace, key)) == (namespace, key)


def test_entries_that_are_not_items_are_never_items(hub):
    hub.entries.add("MEMORY.md", "# Memory")
    hub.entries.add("teams/notes.md", "ramen notes")
    hub.entries.add("teams/broken.json", "not json at all")
    hub.entries.add("teams/list.json", "[1, 2]")
    store = MemoryHubStore(client=hub)

    assert store.list_namespaces() == [("teams",)]  # the folder of the .json entries
    assert store.search(("teams",)) == []
    assert store.search(("teams",), query="ramen") == []
    assert store.get(("teams",), "broken") is None
    assert store.get(("teams",), "list") is None


def test_a_prefix_keeps_the_store_apart_from_the_agents_entries(hub):
    store = MemoryHubStore(client=hub, prefix="langgraph")
    store.put(("teams", "alice"), "food", {"likes": "ramen"})
    hub.entries.add("teams/alice/food.json", '{"likes": "not mine"}')

    assert _names(hub) == ["langgraph/teams/alice/food.json", "teams/alice/food.json"]
    assert store.get(("teams", "alice"), "food").value == {"likes": "ramen"}
    assert store.list_namespaces() == [("teams", "alice")]
    assert _view(store.search(("teams",), query="ramen")) == [
        (("teams", "alice"), "food", {"likes": "ramen"})
    ]
    with pytest.raises(ValueError, match="prefix"):
        MemoryHubStore(client=hub, prefix="a/../b")


def test_what_does_not_map_is_refused_clearly(hub):
    store = MemoryHubStore(client=hub)
    with pytest.raises(NotImplementedError):
        store.put(("a",), "k", {"v": 1}, ttl=5)
    with pytest.raises(ValueError, match="empty"):
        store.put(("a",), "", {"v": 1})
    with pytest.raises(InvalidInput) as too_long:
        store.put(("a",), "k" * 300, {"v": 1})
    assert too_long.value.status == 422
    assert _names(hub) == []


def test_the_async_ops_use_the_async_client(env, hub):
    store = MemoryHubStore()  # URL and key from the environment

    async def scenario():
        await store.aput(("teams", "alice"), "food", {"likes": "ramen"})
        await store.aput(("teams", "alice"), "tea", {"likes": "sencha"}, index=False)
        got = await store.aget(("teams", "alice"), "food")
        found = await store.asearch(("teams",), query="ramen")
        listed = await store.asearch(("teams",), filter={"likes": "sencha"})
        spaces = await store.alist_namespaces(prefix=("teams",))
        batch = await store.abatch(
            [GetOp(("teams", "alice"), "tea"), PutOp(("teams", "alice"), "food", None)]
        )
        return got, found, listed, spaces, batch

    got, found, listed, spaces, batch = asyncio.run(scenario())
    assert _view([got]) == [(("teams", "alice"), "food", {"likes": "ramen"})]
    assert _view(found) == [(("teams", "alice"), "food", {"likes": "ramen"})]
    assert _view(listed) == [(("teams", "alice"), "tea", {"likes": "sencha"})]
    assert spaces == [("teams", "alice")]
    assert _view([batch[0]]) == [(("teams", "alice"), "tea", {"likes": "sencha"})]
    assert batch[1] is None
    # A second event loop on the same store.
    assert asyncio.run(store.aget(("teams", "alice"), "food")) is None
    assert hub.entries.get("teams/alice/tea.json").index is False


def test_an_async_client_given_serves_the_async_ops(live_url, key):
    async def scenario():
        async with AsyncMemoryHub(live_url, key) as client:
            store = MemoryHubStore(client=client)
            await store.aput(("n",), "k", {"v": 1})
            return await store.aget(("n",), "k")

    assert asyncio.run(scenario()).value == {"v": 1}
