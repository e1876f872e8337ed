"""/context's messages replay as a valid OpenAI chat, whatever the budget cuts: a tool
result never without its call, a call never without its results, tool calls never cut, and
every replay field as it was appended."""

import pytest
from memoryhub_client.chat import to_openai_messages

from tests.replay.conversation import (
    CONVERSATION,
    REPLAYED,
    append,
    replay_fields,
    stored_fields,
)
from tests.support.openai_chat import validate

pytestmark = pytest.mark.django_db


def context(api, session, **extra) -> dict:
    response = api.post("/context", {"session_id": str(session.id), **extra})
    assert response.status_code == 200, response.content
    return response.json()


def test_every_message_comes_with_its_replay_fields_and_replays_exactly(api, session):
    ids = append(api, session)

    body = context(api, session)

    # The recency leg is the newest 10 (5-14); the salience leg's failed hotel result (3)
    # comes with its turn: the call (1) and the call's other results (2, 4).
    assert [ids.index(m["id"]) for m in body["messages"]] == list(range(1, 15))
    assert [replay_fields(m) for m in body["messages"]] == [
        stored_fields(sent) for sent in CONVERSATION[1:]
    ]
    assert [m["legs"] for m in body["messages"][:7]] == [
        ["turn"],
        ["turn"],
        ["salience"],
        ["turn"],
        ["recency"],
        ["recency"],
        ["recency", "salience"],
    ]
    replayed = to_openai_messages(body)
    assert replayed[0]["role"] == "system"  # the error learnings, under their name
    assert replayed[1:] == REPLAYED[1:]
    validate(replayed)


@pytest.mark.parametrize(
    ("recency_limit", "kept"),
    [
        # the newest message is a result: the recency leg reaches back to its call (12);
        # salience found a result (3) and a call (7): their turns come whole, leg "turn"
        (1, [1, 2, 3, 4, 7, 8, 12, 13, 14]),
        (4, [1, 2, 3, 4, 7, 8, 11, 12, 13, 14]),
        # the newest 11 open on a result (4): back to its call (1)
        (11, list(range(1, 15))),
    ],
)
def test_every_budget_cut_replays_as_a_valid_chat(api, session, recency_limit, kept):
    ids = append(api, session)
    settings = {"recency_limit": recency_limit}
    assert api.patch("/agent/settings", {"settings": settings}).status_code == 200
    whole = context(api, session)
    assert [ids.index(m["id"]) for m in whole["messages"]] == kept
    legs = {ids.index(m["id"]): m["legs"] for m in whole["messages"]}
    if recency_limit == 1:
        assert (legs[1], legs[2], legs[8], legs[12]) == (["turn"], ["turn"], ["turn"], ["recency"])

    seen = set()
    for budget in range(1, whole["usage"]["required_tokens"] + 2):
        body = context(api, session, max_tokens=budget)
        replayed = to_openai_messages(body)
        validate(replayed)
        positions = [ids.index(m["id"]) for m in body["messages"]]
        seen.add(tuple(positions))
        assert body["usage"]["used_tokens"] <= budget
        assert positions[-1] == 14  # the newest message's turn always stays
        assert {12, 13, 14} <= set(positions)
        for m in body["messages"]:
            assert replay_fields(m) == stored_fields(CONVERSATION[ids.index(m["id"])])
            if not m["truncated"]:
                assert m["content"] == (CONVERSATION[ids.index(m["id"])]["content"] or "")
        dropped = {d["name"] for d in body["dropped"] if d["kind"] == "message"}
        assert dropped.isdisjoint(m["id"] for m in body["messages"])
    # The walk went from the newest turn alone to everything, through partial cuts.
    assert (12, 13, 14) in seen
    assert tuple(kept) in seen
    assert len(seen) > 2


def test_a_budget_under_the_newest_turn_cuts_its_contents_never_its_calls(api, session):
    ids = append(api, session)

    body = context(api, session, max_tokens=4)

    assert [ids.index(m["id"]) for m in body["messages"]] == [12, 13, 14]
    assert [m["truncated"] for m in body["messages"]] == [True, True, True]
    assert sum(m["tokens"] for m in body["messages"]) <= 4
    assert [m["tool_calls"] for m in body["messages"]] == [
        CONVERSATION[12]["tool_calls"],
        None,
        None,
    ]
    assert [m["tool_call_id"] for m in body["messages"]] == [None, "call_email", "call_calendar"]
    validate(to_openai_messages(body))
