"""LangMem (on PyPI) on MemoryHubStore: its create_manage_memory_tool and
create_search_memory_tool in a LangGraph agent driven by a scripted chat model, with the
namespace ("memories", "{langgraph_user_id}"). Each user's memories are stored as that
user's entries and found by that user alone, by keyword search (no index), by semantic
search with the caller's embedder (index= with `embed`), and by the server's hybrid search of
the vectors it made (index={"dims": 384})."""

import json
import warnings
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langmem import create_manage_memory_tool, create_search_memory_tool
from memoryhub_client.langgraph import MemoryHubStore

from tests.upstream.langgraph.checkpoint.embed_test_utils import CharacterEmbeddings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # create_react_agent moved to langchain.agents in 1.x
    from langgraph.prebuilt import create_react_agent

NAMESPACE = ("memories", "{langgraph_user_id}")


class ScriptedChatModel(GenericFakeChatModel):
    """The scripted model: answers with the given messages in turn; tools bind to it as is."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChatModel":  # Any: LangChain's
        return self


def _call(tool: str, args: dict, call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": tool, "args": args, "id": call_id}])


def _run(store: MemoryHubStore, user: str, *script: AIMessage) -> list[Any]:
    """One agent turn for `user`: the model's scripted messages, the tools' answers."""
    model = ScriptedChatModel(messages=iter([*script, AIMessage(content="done")]))
    tools = [
        create_manage_memory_tool(namespace=NAMESPACE),
        create_search_memory_tool(namespace=NAMESPACE),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(model, tools=tools, store=store)
    config = {"configurable": {"langgraph_user_id": user}}
    return agent.invoke({"messages": [("user", "hi")]}, config=config)["messages"]


def _tool_answers(messages: list[Any]) -> list[str]:
    return [m.content for m in messages if isinstance(m, ToolMessage)]


@pytest.mark.parametrize(
    "index",
    [None, {"dims": 64, "embed": CharacterEmbeddings(dims=64)}, {"dims": 384}],
    ids=["keyword", "caller-embeds", "server-embeds"],
)
def test_langmem_stores_and_finds_memories_per_user(hub, index):
    store = MemoryHubStore(client=hub, user_from_namespace=("memories", "{user}"), index=index)
    remember = _call("manage_memory", {"content": "ana drinks green tea", "action": "create"}, "1")
    answers = _tool_answers(_run(store, "ana", remember))
    assert answers[0].startswith("created memory ")
    ana_key = answers[0].removeprefix("created memory ")
    remember = _call(
        "manage_memory", {"content": "bob drinks black coffee", "action": "create"}, "2"
    )
    bob_key = _tool_answers(_run(store, "bob", remember))[0].removeprefix("created memory ")

    # Each memory is its user's entry: no other user's read finds it.
    ana_entry = hub.entries.get(f"memories/ana/{ana_key}.json", user="ana")
    assert ana_entry.user == "ana"
    assert json.loads(ana_entry.content) == {"content": "ana drinks green tea"}
    bob_entry = hub.entries.get(f"memories/bob/{bob_key}.json", user="bob")
    assert bob_entry.user == "bob"
    assert json.loads(bob_entry.content) == {"content": "bob drinks black coffee"}

    search = _call("search_memory", {"query": "what does the user drink? tea coffee"}, "3")
    for user, key, content in [
        ("ana", ana_key, "ana drinks green tea"),
        ("bob", bob_key, "bob drinks black coffee"),
    ]:
        found = json.loads(_tool_answers(_run(store, user, search))[0])
        assert [(m["namespace"], m["key"], m["value"]) for m in found] == [
            (["memories", user], key, {"content": content})
        ]
        assert found[0]["score"] is not None

    # An update through the tool replaces the user's memory.
    update = _call(
        "manage_memory",
        {"content": "ana drinks jasmine tea now", "action": "update", "id": ana_key},
        "4",
    )
    assert _tool_answers(_run(store, "ana", update)) == [f"updated memory {ana_key}"]
    updated = store.get(("memories", "ana"), ana_key)
    assert updated.value == {"content": "ana drinks jasmine tea now"}
