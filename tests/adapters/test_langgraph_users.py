"""MemoryHubStore's end users (issue 39) against the live server: a StateGraph run for two
users keeps each one's items theirs (memoryhub rows of that user, which no other user's read
finds), erasing a user removes their items, the namespace rule (default, pattern, function,
off), a store bound to one user, and 1.x items adopted by their user."""

import asyncio
from typing import TypedDict

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, GetOp, PutOp
from memoryhub_client import Forbidden, MemoryHub, NotFound
from memoryhub_client.langgraph import DEFAULT_RULE, MemoryHubStore

from apps.agents.services import api_key_issue


def _rows(hub, **read) -> list[tuple[str | None, str]]:
    """(owner, name) of the agent's entries a read with `read` sees, sorted."""
    found = [(e.user, e.name) for e in hub.entries.list(**read)]
    return sorted(found, key=lambda row: (row[0] or "", row[1]))


def _view(items) -> list[tuple]:
    return [(i.namespace, i.key, i.value) for i in items]


class Chat(TypedDict):
    said: str
    recalled: list[str]


def _memories(config: RunnableConfig) -> tuple[str, ...]:
    return ("users", config["configurable"]["user_id"], "memories")


def _remember(state: Chat, config: RunnableConfig, *, store: BaseStore) -> dict:
    """Writes what the user said as a memory of theirs."""
    memories = _memories(config)
    store.put(memories, f"m{len(store.search(memories, limit=100))}", {"text": state["said"]})
    return {}


def _recall(state: Chat, config: RunnableConfig, *, store: BaseStore) -> dict:
    """Searches the user's memories for what they like."""
    found = store.search(_memories(config), query="likes")
    return {"recalled": sorted(item.value["text"] for item in found)}


def _graph(store: BaseStore):
    builder = StateGraph(Chat)
    builder.add_node("remember", _remember)
    builder.add_node("recall", _recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    return builder.compile(store=store)


def _turn(graph, user: str, said: str) -> list[str]:
    state = {"said": said, "recalled": []}
    return graph.invoke(state, {"configurable": {"user_id": user}})["recalled"]


ANA = [
    ("ana", "users/ana/memories/m0.json"),
    ("ana", "users/ana/memories/m1.json"),
    ("ana", "users/ana/memories/m2.json"),
]
BEN = [("ben", "users/ben/memories/m0.json")]


def _two_users(graph) -> None:
    assert _turn(graph, "ana", "ana likes ramen") == ["ana likes ramen"]
    assert _turn(graph, "ana", "ana likes green tea") == ["ana likes green tea", "ana likes ramen"]
    assert _turn(graph, "ana", "the weather is nice") == ["ana likes green tea", "ana likes ramen"]
    assert _turn(graph, "ben", "ben likes pho") == ["ben likes pho"]


def test_a_graph_run_for_two_users_stores_each_ones_items_as_theirs(env, hub):
    store = MemoryHubStore()  # URL and key from the environment; the default rule
    _two_users(_graph(store))

    # Each item is a row of its user, not the agent's.
    assert _rows(hub, all_users=True) == ANA + BEN
    assert _rows(hub, user="ben") == BEN
    assert _rows(hub, user="ana") == ANA
    assert [
        (h.entry.user, h.entry.name) for h in hub.entries.search("likes", user="ben").items
    ] == [("ben", "users/ben/memories/m0.json")]
    # Neither user's namespace shows the other's items.
    assert store.get(("users", "ben", "memories"), "m1") is None
    assert store.search(("users", "ben"), query="ramen") == []
    assert _view(store.search(("users", "ben"))) == [
        (("users", "ben", "memories"), "m0", {"text": "ben likes pho"})
    ]
    assert store.get(("users", "ana", "memories"), "m0").value == {"text": "ana likes ramen"}
    # A read naming no user sees the agent's items alone: here none.
    assert store.search(("users",)) == []
    assert store.search((), query="likes") == []
    assert store.list_namespaces() == []
    assert store.list_namespaces(prefix=("users", "ana")) == [("users", "ana", "memories")]
    assert store.list_namespaces(prefix=("users", "ben")) == [("users", "ben", "memories")]


def test_erasing_a_user_removes_their_items_and_leaves_the_others(env, hub):
    store = MemoryHubStore()
    _two_users(_graph(store))

    erased = hub.users.erase("ana")

    assert erased.deleted.entries == 3
    assert store.search(("users", "ana")) == []
    assert store.search(("users", "ana"), query="likes") == []
    assert store.get(("users", "ana", "memories"), "m0") is None
    assert _view(store.search(("users", "ben"))) == [
        (("users", "ben", "memories"), "m0", {"text": "ben likes pho"})
    ]
    assert _rows(hub, all_users=True) == BEN
    # Ana starts afresh: her first item is m0 again, hers.
    assert _turn(_graph(store), "ana", "ana likes soup") == ["ana likes soup"]
    assert _rows(hub, all_users=True) == [("ana", "users/ana/memories/m0.json"), *BEN]


def _aremember(state: Chat, config: RunnableConfig) -> dict:
    store = get_store()  # the store the graph was compiled with, from the run's context
    memories = _memories(config)
    store.put(memories, f"m{len(store.search(memories, limit=100))}", {"text": state["said"]})
    return {"recalled": sorted(i.value["text"] for i in store.search(memories, query="likes"))}


def test_an_async_graph_reaching_the_store_by_get_store_keeps_users_apart(env, hub):
    builder = StateGraph(Chat)
    builder.add_node("remember", _aremember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    graph = builder.compile(store=MemoryHubStore())

    async def turn(user: str, said: str) -> list[str]:
        state = {"said": said, "recalled": []}
        result = await graph.ainvoke(state, {"configurable": {"user_id": user}})
        return result["recalled"]

    async def run() -> list[list[str]]:
        return [
            await turn("ana", "ana likes tacos"),
            await turn("ben", "ben likes soup"),
            await turn("ana", "ana likes figs"),
        ]

    assert asyncio.run(run()) == [
        ["ana likes tacos"],
        ["ben likes soup"],
        ["ana likes figs", "ana likes tacos"],
    ]
    assert _rows(hub, all_users=True) == [
        ("ana", "users/ana/memories/m0.json"),
        ("ana", "users/ana/memories/m1.json"),
        ("ben", "users/ben/memories/m0.json"),
    ]


def test_the_async_ops_act_for_the_namespaces_user(env, hub):
    store = MemoryHubStore()

    async def scenario():
        await store.aput(("users", "ana"), "food", {"likes": "ramen"})
        await store.aput(("docs",), "guide", {"likes": "ramen"})
        return (
            await store.aget(("users", "ben"), "food"),
            await store.asearch(("users", "ben"), query="ramen"),
            await store.asearch((), query="ramen"),
            await store.asearch(("users", "ana")),
            await store.alist_namespaces(),
            await store.abatch(
                [GetOp(("users", "ana"), "food"), PutOp(("users", "ana"), "food", None)]
            ),
        )

    ben_get, ben_hits, agent_hits, ana_listed, spaces, batch = asyncio.run(scenario())
    assert ben_get is None
    assert ben_hits == []
    assert _view(agent_hits) == [(("docs",), "guide", {"likes": "ramen"})]
    assert _view(ana_listed) == [(("users", "ana"), "food", {"likes": "ramen"})]
    assert spaces == [("docs",)]
    assert _view([batch[0]]) == [(("users", "ana"), "food", {"likes": "ramen"})]
    assert _rows(hub, all_users=True) == [(None, "docs/guide.json")]


def test_a_pattern_a_function_or_no_rule_names_the_user(hub):
    assert DEFAULT_RULE == ("users", "{user}")
    default = MemoryHubStore(client=hub)
    memories_first = MemoryHubStore(client=hub, user_from_namespace=("memories", "{user}"))
    nested = MemoryHubStore(client=hub, user_from_namespace=("org", "*", "{user}"))
    by_function = MemoryHubStore(
        client=hub,
        user_from_namespace=lambda ns: ns[0].removeprefix("u:") if ns[0].startswith("u:") else None,
    )
    off = MemoryHubStore(client=hub, user_from_namespace=None)

    assert [
        default.user_of(ns) for ns in [("users", "ana", "x"), ("users",), ("memories", "ana")]
    ] == [
        "ana",
        None,
        None,
    ]
    assert memories_first.user_of(("memories", "ana")) == "ana"
    assert memories_first.user_of(("users", "ana")) is None
    assert [
        nested.user_of(ns) for ns in [("org", "acme", "ana"), ("org", "acme"), ("team", "a", "b")]
    ] == [
        "ana",
        None,
        None,
    ]
    assert by_function.user_of(("u:ana", "notes")) == "ana"
    assert off.user_of(("users", "ana")) is None

    memories_first.put(("memories", "ana"), "k", {"v": 1})
    nested.put(("org", "acme", "ben"), "k", {"v": 2})
    by_function.put(("u:carl", "notes"), "k", {"v": 3})
    off.put(("users", "dora"), "k", {"v": 4})  # the rule is off: the agent's

    assert _rows(hub, all_users=True) == [
        (None, "users/dora/k.json"),
        ("ana", "memories/ana/k.json"),
        ("ben", "org/acme/ben/k.json"),
        ("carl", "u:carl/notes/k.json"),
    ]
    assert memories_first.get(("memories", "ana"), "k").value == {"v": 1}
    assert memories_first.get(("memories", "ben"), "k") is None


@pytest.mark.parametrize(
    "rule",
    [("users",), ("users", "{user}", "{user}"), ("users", ""), ("users", 1)],
)
def test_a_pattern_without_exactly_one_user_label_is_refused(hub, rule):
    with pytest.raises(ValueError, match="namespace rule"):
        MemoryHubStore(client=hub, user_from_namespace=rule)


def test_a_store_bound_to_a_user_writes_and_reads_as_them_and_refuses_another_users_namespace(hub):
    ana = MemoryHubStore(client=hub, user="ana")
    agent = MemoryHubStore(client=hub)
    agent.put(("docs",), "guide", {"text": "the agent's guide"})

    ana.put(("prefs",), "food", {"likes": "ramen"})
    ana.put(("users", "ana"), "tea", {"likes": "sencha"})

    assert _rows(hub, all_users=True) == [
        (None, "docs/guide.json"),
        ("ana", "prefs/food.json"),
        ("ana", "users/ana/tea.json"),
    ]
    # Ana's reads see her items and the agent's; the agent's reads see its own alone.
    assert sorted(ns for ns in ana.list_namespaces()) == [("docs",), ("prefs",), ("users", "ana")]
    assert ana.get(("docs",), "guide").value == {"text": "the agent's guide"}
    assert agent.get(("prefs",), "food") is None
    assert agent.list_namespaces() == [("docs",)]
    with pytest.raises(ValueError, match="'ben'"):
        ana.search(("users", "ben"))
    with pytest.raises(ValueError, match="'ben'"):
        ana.batch([PutOp(("prefs",), "drink", {"v": 1}), PutOp(("users", "ben"), "k", {"v": 2})])
    assert ana.get(("prefs",), "drink") is None  # the batch wrote nothing
    with pytest.raises(ValueError, match="user"):
        MemoryHubStore(client=hub, user=" ")


def test_a_users_own_item_comes_before_the_agents_of_one_name_and_1x_items_are_adopted(hub):
    # What a 1.x store left: ana's items as the agent's entries.
    hub.entries.add("users/ana/memories/m0.json", '{"text": "ana likes ramen"}')
    hub.entries.add("users/ana/memories/m1.json", '{"text": "ana likes tea"}')
    hub.entries.add("users/ben/memories/m0.json", '{"text": "ben likes pho"}', index=False)
    hub.entries.add("docs/guide.json", '{"text": "the agent\'s guide"}')
    store = MemoryHubStore(client=hub)
    store.put(("users", "ana", "memories"), "m1", {"text": "ana likes green tea"})

    # Read in ana's namespace: her own m1, the agent's m0.
    assert sorted(_view(store.search(("users", "ana")))) == [
        (("users", "ana", "memories"), "m0", {"text": "ana likes ramen"}),
        (("users", "ana", "memories"), "m1", {"text": "ana likes green tea"}),
    ]
    assert _view(store.search(("users", "ana"), query="tea")) == [
        (("users", "ana", "memories"), "m1", {"text": "ana likes green tea"})
    ]

    moved = store.adopt_user_items()

    assert moved == [
        "users/ana/memories/m0.json",
        "users/ana/memories/m1.json",
        "users/ben/memories/m0.json",
    ]
    assert _rows(hub, all_users=True) == [
        (None, "docs/guide.json"),
        ("ana", "users/ana/memories/m0.json"),
        ("ana", "users/ana/memories/m1.json"),
        ("ben", "users/ben/memories/m0.json"),
    ]
    # Ana's own m1 stayed; ben's keeps index=False.
    assert store.get(("users", "ana", "memories"), "m1").value == {"text": "ana likes green tea"}
    assert hub.entries.get("users/ben/memories/m0.json", user="ben").index is False
    assert store.adopt_user_items() == []
    hub.users.erase("ana")
    assert store.search(("users", "ana")) == []
    with pytest.raises(NotFound):
        hub.entries.get("users/ana/memories/m0.json", user="ana")


def test_with_a_key_bound_to_a_user_the_store_is_given_that_user(live_url, agent):
    bound_key = api_key_issue(agent=agent, name="ana's app", user="ana").raw
    with MemoryHub(live_url, bound_key) as mine:
        unbound = MemoryHubStore(client=mine)
        with pytest.raises(ValueError, match=r"as user 'ana'.s, not as the agent's"):
            unbound.put(("docs",), "k", {"v": 1})  # the key wrote it as ana's
        ana = MemoryHubStore(client=mine, user="ana")
        ana.put(("docs",), "k", {"v": 2})
        assert ana.get(("docs",), "k").value == {"v": 2}
        assert _view(ana.search(("users", "ana"))) == []
        with pytest.raises(Forbidden):
            unbound.put(("users", "ben"), "k", {"v": 3})
        assert [(e.user, e.name) for e in mine.entries.list()] == [("ana", "docs/k.json")]
