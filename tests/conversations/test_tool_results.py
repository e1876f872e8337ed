"""Issue 41: on append, a tool message answers an unanswered tool call of its own session
(422 naming the rule otherwise, and nothing of the batch is stored); a failing tool without
a call gets the call recorded for it. Every history the API accepts replays as a chat the
strict OpenAI validator accepts."""

import pytest
from memoryhub_client.chat import to_openai_messages

from apps.conversations.models import Message
from apps.conversations.services.message_append import RECORDED
from tests.support.openai_chat import tool_call, validate

pytestmark = pytest.mark.django_db

RULE = "a tool message answers a tool call of its own session"
LOOKUP = tool_call("c1", "lookup", '{"q": "paris"}')


def _append(api, session, *messages):
    return api.post(f"/sessions/{session.id}/messages", {"messages": list(messages)})


def _call(*calls):
    return {"role": "assistant", "content": None, "tool_calls": list(calls)}


def _result(call_id, content="ok", **fields):
    return {"role": "tool", "content": content, "tool_call_id": call_id, **fields}


def _refused(response, loc, msg):
    assert response.status_code == 422
    assert response.json() == {"detail": [{"loc": loc, "msg": msg, "type": "value_error"}]}


def _history(api, session):
    return api.get(f"/sessions/{session.id}/messages").json()["items"]


def test_a_tool_message_without_a_call_id_is_refused_and_nothing_is_stored(api, session):
    response = _append(
        api, session, {"role": "user", "content": "hi"}, {"role": "tool", "content": "42"}
    )

    _refused(
        response,
        ["body", "messages", 1, "tool_call_id"],
        f"{RULE}: tool_call_id is required (a failing tool without a call: send "
        '"is_error": true and tool_name, and its call is recorded)',
    )
    assert Message.objects.filter(session=session).count() == 0


@pytest.mark.parametrize(
    "before",
    [
        [],  # no call at all
        [_call(tool_call("c2", "lookup", "{}")), _result("c2")],  # another call's id
        [_call(LOOKUP), _result("c1")],  # answered already
    ],
    ids=["no-call", "other-call", "answered"],
)
def test_a_result_naming_no_unanswered_call_is_refused(api, session, before):
    response = _append(api, session, *before, {"role": "user", "content": "hi"}, _result("c1"))

    _refused(
        response,
        ["body", "messages", len(before) + 1, "tool_call_id"],
        f"{RULE}: no unanswered tool call 'c1' in the session or before it in the request",
    )
    assert Message.objects.filter(session=session).count() == 0


def test_a_call_of_another_session_is_not_answered_here(api, agent, session):
    other = api.post("/sessions", {"key": "other"}).json()
    assert (
        api.post(f"/sessions/{other['id']}/messages", {"messages": [_call(LOOKUP)]}).status_code
        == 201
    )

    _refused(
        _append(api, session, _result("c1")),
        ["body", "messages", 0, "tool_call_id"],
        f"{RULE}: no unanswered tool call 'c1' in the session or before it in the request",
    )


def test_results_answer_calls_of_earlier_appends_and_reused_ids(api, session):
    assert _append(api, session, _call(LOOKUP, tool_call("c2", "lookup", "{}"))).status_code == 201
    assert _append(api, session, _result("c2"), _result("c1")).status_code == 201
    # a model server numbering calls per turn reuses c1: the new call is open again
    assert _append(api, session, _call(LOOKUP)).status_code == 201
    response = _append(api, session, _result("c1", "again"))

    assert response.status_code == 201
    assert [m["tool_call_id"] for m in _history(api, session)] == [None, "c2", "c1", None, "c1"]
    validate(to_openai_messages(_history(api, session)))


def test_a_retried_result_is_deduplicated_not_refused(api, session):
    assert _append(api, session, _call(LOOKUP)).status_code == 201
    first = _append(api, session, _result("c1", idempotency_key="r1"))
    again = _append(api, session, _result("c1", idempotency_key="r1"))

    assert (first.status_code, again.status_code) == (201, 201)
    assert (again.json()["created"], again.json()["deduplicated"]) == (0, 1)
    assert again.json()["messages"][0]["id"] == first.json()["messages"][0]["id"]


@pytest.mark.parametrize(
    ("message", "loc", "msg"),
    [
        (
            {"role": "user", "content": "x", "tool_calls": [LOOKUP]},
            ["body", "messages", 0, "tool_calls"],
            "tool_calls are an assistant's",
        ),
        (
            _call({"type": "function", "function": {"name": "lookup", "arguments": "{}"}}),
            ["body", "messages", 0, "tool_calls", 0, "id"],
            "a tool call needs a string id",
        ),
        (
            _call({"id": "c1", "type": "function", "function": {"arguments": "{}"}}),
            ["body", "messages", 0, "tool_calls", 0, "function"],
            "a tool call needs a function name",
        ),
        (
            _call(LOOKUP, tool_call("c1", "other", "{}")),
            ["body", "messages", 0, "tool_calls", 1, "id"],
            "tool call id 'c1' is repeated in the message",
        ),
    ],
    ids=["not-assistant", "no-id", "no-name", "repeated-id"],
)
def test_tool_calls_need_an_assistant_ids_and_names(api, session, message, loc, msg):
    _refused(_append(api, session, message), loc, msg)


def test_a_failure_without_a_call_answers_the_call_recorded_for_it(api, session):
    failure = {
        "role": "tool",
        "tool_name": "git_push",
        "content": "rejected: non-fast-forward",
        "is_error": True,
        "idempotency_key": "push-1",
    }
    first = _append(api, session, {"role": "user", "content": "push it"}, failure)
    again = _append(api, session, failure)

    body = first.json()
    assert (first.status_code, body["created"], body["deduplicated"]) == (201, 2, 0)
    assert [m["role"] for m in body["messages"]] == ["user", "tool"]
    call_id = body["messages"][1]["tool_call_id"]
    stored = list(Message.objects.filter(session=session))
    assert [(m.role, m.tool_calls_json, m.tool_call_id, m.metadata) for m in stored] == [
        ("user", None, None, {}),
        ("assistant", [tool_call(call_id, "git_push", "{}")], None, RECORDED),
        ("tool", None, call_id, {}),
    ]
    assert stored[1].idempotency_key == "push-1/call"
    # a retry stores neither the failure nor its call again
    assert (again.json()["created"], again.json()["deduplicated"]) == (0, 1)
    assert Message.objects.filter(session=session).count() == 3
    validate(to_openai_messages(_history(api, session)))


def test_a_failure_with_neither_a_call_nor_a_tool_is_refused(api, session):
    response = _append(api, session, {"role": "tool", "content": "boom", "is_error": True})

    _refused(
        response,
        ["body", "messages", 0, "tool_name"],
        "a failing tool message needs tool_name, or the tool_call_id of a known call",
    )


def test_every_accepted_history_replays_as_a_valid_chat(api, session):
    """Calls answered across appends, late, in another order, and left unanswered; a
    failure recorded without a call; a message between a call and its result."""
    appends = [
        [{"role": "user", "content": "Plan Paris."}, _call(LOOKUP, tool_call("c2", "f", "{}"))],
        [_result("c2", "second first")],
        [{"role": "user", "content": "still there?"}],
        [_result("c1", "late")],
        [_call(tool_call("c3", "never_answered", "{}"))],
        [{"role": "tool", "tool_name": "deploy", "content": "timeout", "is_error": True}],
        [{"role": "assistant", "content": "Done."}],
    ]
    for batch in appends:
        assert _append(api, session, *batch).status_code == 201

    replayed = to_openai_messages(_history(api, session))

    validate(replayed)
    assert [(m["role"], m.get("tool_call_id")) for m in replayed] == [
        ("user", None),
        ("assistant", None),
        ("tool", "c1"),
        ("tool", "c2"),
        ("user", None),
        ("assistant", None),
        ("tool", "c3"),
        ("assistant", None),
        ("tool", replayed[7]["tool_calls"][0]["id"]),
        ("assistant", None),
    ]
    assert [replayed[i]["content"] for i in (2, 3, 6, 8)] == [
        "late",
        "second first",
        "No result was recorded for this tool call.",
        "timeout",
    ]
    validate(to_openai_messages(api.get(f"/sessions/{session.id}/window").json()))
