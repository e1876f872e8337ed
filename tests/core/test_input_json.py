"""Free-form JSON (metadata, tool_calls, error arguments/context) is bounded: 64 KiB
serialised (413) and 20 levels deep (422), naming the field; no depth is a RecursionError."""

import json

import pytest

from apps.conversations.models import Message, Session
from apps.core.validation import MAX_BODY_DEPTH, MAX_JSON_BYTES, MAX_JSON_DEPTH
from apps.learnings.models import ErrorRecord

pytestmark = pytest.mark.django_db


def nested(depth: int) -> dict:
    """`depth` levels of objects: {"a": {"a": ... {}}}."""
    value: dict = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def sized(n_bytes: int) -> dict:
    """An object exactly `n_bytes` long serialised compactly."""
    value = {"k": ""}
    value["k"] = "x" * (n_bytes - len(json.dumps(value, separators=(",", ":"))))
    return value


def as_call(value: dict) -> dict:
    """`value` made a tool call (an id and a function, issue 41) of the same serialised size
    and depth: the call's keys take their room from `value`'s padding, when it has some."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    merged = call | value
    if "k" in value:
        extra = len(json.dumps(merged, separators=(",", ":"))) - len(
            json.dumps(value, separators=(",", ":"))
        )
        merged["k"] = value["k"][extra:]
    return merged


def _message(**fields):
    return {"messages": [{"role": "user", "content": "x", **fields}]}


# (path, body builder taking the free-form value, loc after "body", payload-wrapped loc)
FIELDS = [
    ("/sessions/{sid}/messages", lambda v: _message(metadata=v), ["messages", 0, "metadata"]),
    (
        "/sessions/{sid}/messages",
        lambda v: {
            "messages": [{"role": "assistant", "content": None, "tool_calls": [as_call(v)]}]
        },
        ["messages", 0, "tool_calls"],
    ),
    ("/sessions", lambda v: {"metadata": v}, ["metadata"]),
    ("/errors", lambda v: {"tool_name": "t", "error": "e", "arguments": v}, ["arguments"]),
    ("/errors", lambda v: {"tool_name": "t", "error": "e", "context": v}, ["context"]),
    ("/search", lambda v: {"query": "q", "metadata": {"k": json.dumps(v)}}, None),
]


def _counts():
    return Message.objects.count(), Session.objects.count(), ErrorRecord.objects.count()


@pytest.mark.parametrize(("path", "body", "loc"), [f for f in FIELDS if f[2]])
def test_exactly_64_kib_and_20_levels_are_accepted(api, session, path, body, loc):
    # tool_calls is a list: [obj] is 2 bytes and one level more than obj
    size = MAX_JSON_BYTES - 2 if "tool_calls" in loc else MAX_JSON_BYTES
    small_enough = api.post(path.format(sid=session.id), body(sized(size)))
    depth = MAX_JSON_DEPTH - 1 if "tool_calls" in loc else MAX_JSON_DEPTH
    shallow_enough = api.post(path.format(sid=session.id), body(nested(depth)))

    assert small_enough.status_code in (200, 201), small_enough.content
    assert shallow_enough.status_code in (200, 201), shallow_enough.content


@pytest.mark.parametrize(("path", "body", "loc"), [f for f in FIELDS if f[2]])
def test_one_byte_over_64_kib_is_413_naming_the_field(api, session, path, body, loc):
    before = _counts()
    # tool_calls is a list: [obj] is 2 bytes longer than obj
    size = MAX_JSON_BYTES - 1 if "tool_calls" in loc else MAX_JSON_BYTES + 1
    response = api.post(path.format(sid=session.id), body(sized(size)))

    assert response.status_code == 413
    assert response.json() == {
        "detail": f"JSON is {MAX_JSON_BYTES + 1} bytes serialised; the limit is {MAX_JSON_BYTES}",
        "loc": ["body", "payload", *loc],
    }
    assert _counts() == before


@pytest.mark.parametrize(("path", "body", "loc"), [f for f in FIELDS if f[2]])
def test_one_level_over_20_is_422_naming_the_field(api, session, path, body, loc):
    before = _counts()
    depth = MAX_JSON_DEPTH if "tool_calls" in loc else MAX_JSON_DEPTH + 1
    response = api.post(path.format(sid=session.id), body(nested(depth)))

    assert response.status_code == 422
    assert response.json() == {
        "detail": [
            {
                "loc": ["body", "payload", *loc],
                "msg": f"JSON is nested {MAX_JSON_DEPTH + 1} levels deep; "
                f"the limit is {MAX_JSON_DEPTH}",
                "type": "json_too_deep",
            }
        ]
    }
    assert _counts() == before


def test_non_ascii_counts_in_utf8_bytes(api, session):
    # 'é' is two bytes: a value of 64 KiB of characters is well over 64 KiB of bytes.
    value = {"k": "é" * (MAX_JSON_BYTES // 2)}
    response = api.post(f"/sessions/{session.id}/messages", _message(metadata=value))

    assert response.status_code == 413
    assert response.json()["loc"] == ["body", "payload", "messages", 0, "metadata"]


@pytest.mark.parametrize("depth", [MAX_BODY_DEPTH + 1, 5_000, 200_000])
@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_any_nesting_depth_is_a_clean_422_not_a_recursion_error(api, session, depth, opener):
    closer = "]" if opener == "[" else "}"
    raw = '{"messages": [{"role": "user", "content": "x", "metadata": {"m": '
    raw += opener * depth + "1" + closer * depth + "}}]}"
    response = api.post(f"/sessions/{session.id}/messages", raw=raw)

    assert response.status_code == 422
    assert response.json() == {
        "detail": [
            {
                "loc": ["body"],
                "msg": f"JSON is nested deeper than {MAX_BODY_DEPTH} levels",
                "type": "value_error",
            }
        ]
    }
    assert Message.objects.count() == 0


def test_brackets_inside_strings_do_not_count_as_nesting(api, session):
    content = "[" * 1000 + '{"' * 1000
    response = api.post(f"/sessions/{session.id}/messages", _message(content=content))

    assert response.status_code == 201
    assert Message.objects.get().content == content
