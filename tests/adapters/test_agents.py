"""memoryhub_client.agents.MemoryHubSession, the OpenAI Agents SDK's Session, against the live
server: a Runner with the SDK's own scripted model (agents.testing) run twice on one session,
the items round-tripping exactly, memoryhub's own shape of them, and get_items(limit),
pop_item and clear_session driven directly."""

import asyncio

import pytest
from agents import Agent, RunConfig, Runner, function_tool
from agents.memory import Session, SessionSettings
from agents.testing import ScriptedModel, assistant_message, function_call
from memoryhub_client import AsyncMemoryHub, Conflict, InvalidInput, NotFound
from memoryhub_client.agents import MemoryHubSession

NO_TRACING = RunConfig(tracing_disabled=True)


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


def _weather_agent(model: ScriptedModel) -> Agent:
    return Agent(name="travel", instructions="Be brief.", model=model, tools=[get_weather])


FIRST_RUN_ITEMS = [
    {"role": "user", "content": "Weather in Paris?"},
    {
        "type": "function_call",
        "id": "call_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": '{"city":"Paris"}',
    },
    {"type": "function_call_output", "call_id": "call_1", "output": "sunny in Paris"},
    {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": "It is sunny in Paris.",
                "annotations": [],
                "logprobs": [],
            }
        ],
    },
]


def test_a_runner_run_twice_on_one_session_sees_the_first_runs_items(env, hub):
    model = ScriptedModel(
        [
            [function_call("get_weather", {"city": "Paris"}, call_id="call_1")],
            [assistant_message("It is sunny in Paris.", item_id="msg_1")],
            [assistant_message("You asked about Paris.", item_id="msg_2")],
        ]
    )
    agent = _weather_agent(model)
    session = MemoryHubSession(session_id="ag-trip")  # URL and key from the environment
    assert isinstance(session, Session)

    first = asyncio.run(
        Runner.run(agent, "Weather in Paris?", session=session, run_config=NO_TRACING)
    )
    assert first.final_output == "It is sunny in Paris."
    assert asyncio.run(session.get_items()) == FIRST_RUN_ITEMS

    # A second run (a new event loop, a new session object: another process) on the same
    # memoryhub session: the model is given the first run's items, then the new question.
    again = MemoryHubSession(session_id="ag-trip")
    second = asyncio.run(Runner.run(agent, "What did I ask?", session=again, run_config=NO_TRACING))
    assert second.final_output == "You asked about Paris."
    assert model.last_call.input == [
        *FIRST_RUN_ITEMS,
        {"role": "user", "content": "What did I ask?"},
    ]
    model.assert_complete()

    # memoryhub holds the run in its own shape: roles, the call, the answer to it.
    stored = list(hub.messages.list("ag-trip"))
    assert [(m.role, m.content, m.tool_call_id, m.tool_name) for m in stored] == [
        ("user", "Weather in Paris?", None, None),
        ("assistant", "", None, None),
        ("tool", "sunny in Paris", "call_1", "get_weather"),
        ("assistant", "It is sunny in Paris.", None, None),
        ("user", "What did I ask?", None, None),
        ("assistant", "You asked about Paris.", None, None),
    ]
    assert stored[1].tool_calls == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'},
        }
    ]
    # Only what the fields do not hold is in metadata: item ids and status, the text part's
    # other keys (its text is the content, not kept twice).
    assert [m.metadata for m in stored[:4]] == [
        {},
        {"openai_agents": {"items": [{"type": "function_call", "id": "call_1"}]}},
        {},
        {
            "openai_agents": {
                "items": [
                    {
                        "type": "message",
                        "id": "msg_1",
                        "status": "completed",
                        "content": [{"type": "output_text", "annotations": [], "logprobs": []}],
                    }
                ]
            }
        },
    ]


MIXED_ITEMS = [
    {"role": "developer", "content": "Answer in French."},
    {
        "type": "message",
        "role": "user",
        "content": [
            {"type": "input_text", "text": "What is this?"},
            {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "auto"},
        ],
    },
    {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [{"type": "summary_text", "text": "An image of a cat."}],
    },
    {"type": "function_call", "call_id": "c_a", "name": "zoom", "arguments": '{"x":1}'},
    {"type": "function_call", "call_id": "c_b", "name": "label", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c_a", "output": "zoomed"},
    {
        "type": "function_call_output",
        "call_id": "c_b",
        "output": [{"type": "input_text", "text": "a cat"}],
    },
    {"role": "assistant", "content": "Un chat."},
]


def test_every_item_shape_round_trips_and_parallel_calls_share_one_message(hub):
    session = MemoryHubSession(session_id="ag-mixed", client=hub)

    asyncio.run(session.add_items(MIXED_ITEMS))

    assert asyncio.run(session.get_items()) == MIXED_ITEMS
    stored = list(hub.messages.list("ag-mixed"))
    assert [(m.role, m.content) for m in stored] == [
        ("system", "Answer in French."),
        ("user", "What is this?"),
        ("assistant", ""),  # reasoning: no memoryhub counterpart, kept whole in metadata
        ("assistant", ""),  # both calls, as one assistant turn
        ("tool", "zoomed"),
        ("tool", "a cat"),
        ("assistant", "Un chat."),
    ]
    assert [c["id"] for c in stored[3].tool_calls] == ["c_a", "c_b"]
    assert [(m.tool_call_id, m.tool_name) for m in stored[4:6]] == [
        ("c_a", "zoom"),
        ("c_b", "label"),
    ]
    assert stored[2].metadata == {"openai_agents": {"items": [{"*": MIXED_ITEMS[2]}]}}


def test_get_items_with_a_limit_gives_the_latest_items(hub):
    session = MemoryHubSession(session_id="ag-limit", client=hub)
    asyncio.run(session.add_items(MIXED_ITEMS))

    async def latest(limit):
        return await session.get_items(limit)

    assert asyncio.run(latest(1)) == MIXED_ITEMS[-1:]
    assert asyncio.run(latest(3)) == MIXED_ITEMS[-3:]
    # 4 items end inside the message holding both calls: only its second call is given.
    assert asyncio.run(latest(4)) == MIXED_ITEMS[-4:]
    assert asyncio.run(latest(100)) == MIXED_ITEMS
    assert asyncio.run(latest(0)) == []
    # The session's settings give the default limit.
    limited = MemoryHubSession(
        session_id="ag-limit", client=hub, session_settings=SessionSettings(limit=2)
    )
    assert asyncio.run(limited.get_items()) == MIXED_ITEMS[-2:]


def test_session_settings_given_as_a_dict_are_coerced_and_unknown_keys_refused(hub):
    # As the SDK's own sessions do: Runner.run resolves them with SessionSettings.resolve.
    session = MemoryHubSession(session_id="ag-dict", client=hub, session_settings={"limit": 2})
    assert session.session_settings == SessionSettings(limit=2)
    assert session.session_settings.resolve({"limit": 5}) == SessionSettings(limit=5)
    with pytest.raises(TypeError, match="limitt"):
        MemoryHubSession(session_id="ag-dict", client=hub, session_settings={"limitt": 2})


def test_pop_item_removes_and_returns_the_latest_item(hub):
    session = MemoryHubSession(session_id="ag-pop", client=hub)
    items = MIXED_ITEMS[:5]  # ends with the two parallel calls: one message
    asyncio.run(session.add_items(items))

    assert asyncio.run(session.pop_item()) == items[4]
    # The other call of that message is back, in its place.
    assert asyncio.run(session.get_items()) == items[:4]
    assert [m.role for m in hub.messages.list("ag-pop")] == [
        "system",
        "user",
        "assistant",
        "assistant",
    ]

    popped = [asyncio.run(session.pop_item()) for _ in range(4)]
    assert popped == list(reversed(items[:4]))
    assert asyncio.run(session.pop_item()) is None
    assert asyncio.run(session.get_items()) == []


def test_clear_session_is_a_session_reset(hub):
    session = MemoryHubSession(session_id="ag-clear", client=hub)
    asyncio.run(session.add_items(FIRST_RUN_ITEMS))

    asyncio.run(session.clear_session())

    assert asyncio.run(session.get_items()) == []
    assert hub.sessions.get("ag-clear").key == "ag-clear"  # the session stays
    archives = [e for e in hub.entries.list() if e.kind == "archive"]
    assert len(archives) == 1
    assert "It is sunny in Paris." in hub.entries.get(archives[0].name).content


def test_a_session_that_does_not_exist_reads_empty_and_is_not_created(hub):
    session = MemoryHubSession(session_id="ag-none", client=hub)
    assert asyncio.run(session.get_items()) == []
    assert asyncio.run(session.get_items(3)) == []
    assert asyncio.run(session.pop_item()) is None
    asyncio.run(session.clear_session())
    assert [s.key for s in hub.sessions.list()] == []


def test_an_async_client_given_is_used(live_url, key, hub):
    async def scenario():
        async with AsyncMemoryHub(live_url, key) as client:
            session = MemoryHubSession(session_id="ag-async", client=client, user="alice")
            await session.add_items(FIRST_RUN_ITEMS)
            return await session.get_items(), await session.pop_item()

    items, popped = asyncio.run(scenario())
    assert items == FIRST_RUN_ITEMS
    assert popped == FIRST_RUN_ITEMS[-1]
    assert hub.sessions.get("ag-async").user == "alice"


def test_a_session_id_memoryhub_cannot_take_as_a_key_is_refused_clearly(hub):
    session = MemoryHubSession(session_id="has spaces", client=hub)
    with pytest.raises(InvalidInput) as refused:
        asyncio.run(session.add_items(FIRST_RUN_ITEMS))
    assert refused.value.loc[-1] == "key"


def test_pop_item_of_a_message_the_lifecycle_folded_is_refused_and_changes_nothing(hub):
    session = MemoryHubSession(session_id="ag-folded", client=hub)
    asyncio.run(session.add_items(FIRST_RUN_ITEMS))
    hub.sessions.consolidate("ag-folded")

    with pytest.raises(Conflict) as refused:
        asyncio.run(session.pop_item())

    assert "consolidated" in refused.value.message
    assert asyncio.run(session.get_items()) == FIRST_RUN_ITEMS


def test_a_session_for_a_user_is_theirs_and_is_erased_with_them(hub):
    ana = MemoryHubSession(session_id="ag-ana", client=hub, user="ana")
    ben = MemoryHubSession(session_id="ag-ben", client=hub, user="ben")
    asyncio.run(ana.add_items(FIRST_RUN_ITEMS))
    asyncio.run(ben.add_items([{"role": "user", "content": "Hello from Ben"}]))

    assert (hub.sessions.get("ag-ana").user, hub.sessions.get("ag-ben").user) == ("ana", "ben")
    assert [s.key for s in hub.sessions.list(user="ana")] == ["ag-ana"]
    assert hub.search("Paris", mode="contains", user="ben").hits == []
    intruder = MemoryHubSession(session_id="ag-ana", client=hub, user="ben")
    with pytest.raises(Conflict):
        asyncio.run(intruder.add_items([{"role": "user", "content": "not yours"}]))
    assert asyncio.run(ana.get_items()) == FIRST_RUN_ITEMS

    erased = hub.users.erase("ana")

    assert (erased.deleted.sessions, erased.deleted.messages) == (1, 4)
    with pytest.raises(NotFound):
        hub.sessions.get("ag-ana")
    assert asyncio.run(ana.get_items()) == []
    assert asyncio.run(ben.get_items()) == [{"role": "user", "content": "Hello from Ben"}]
