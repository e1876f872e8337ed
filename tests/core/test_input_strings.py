"""NUL and lone UTF-16 surrogates: refused wherever they appear, on both backends.

PostgreSQL text cannot hold NUL and no database can encode a lone surrogate, so each used
to be a 500 somewhere; now a body answers 422 naming the field, a parameter 400.
"""

import json

import pytest

from apps.conversations.models import Message, Session
from apps.entries.models import Entry
from apps.facts.models import Fact
from apps.learnings.models import ErrorRecord

pytestmark = pytest.mark.django_db

NUL = "\x00"
SURROGATE = "\ud800"
BAD = {NUL: "must not contain NUL characters", SURROGATE: "must not contain lone UTF-16 surrogates"}


def _raw(body: dict) -> str:
    # json.dumps escapes both as \u0000 / \ud800, exactly what a client would send.
    return json.dumps(body)


def _messages(bad):
    return {"messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": bad}]}


# (method, path, body holding `bad`, the loc the answer must name after "body")
SWEEP = [
    ("post", "/sessions/{sid}/messages", _messages, ["messages", 1, "content"]),
    (
        "post",
        "/sessions/{sid}/messages",
        lambda bad: {"messages": [{"role": "user", "content": "x", "name": bad}]},
        ["messages", 0, "name"],
    ),
    (
        "post",
        "/sessions/{sid}/messages",
        lambda bad: {"messages": [{"role": "user", "content": "x", "metadata": {"k": bad}}]},
        ["messages", 0, "metadata", "k"],
    ),
    (
        "post",
        "/sessions/{sid}/messages",
        lambda bad: {
            "messages": [
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "function": {"arguments": {"q": [1, bad]}}}],
                }
            ]
        },
        ["messages", 0, "tool_calls", 0, "function", "arguments", "q", 1],
    ),
    ("post", "/facts", lambda bad: {"value": f"a{bad}b"}, ["value"]),
    ("post", "/facts", lambda bad: {"value": "v", "key": bad}, ["key"]),
    ("post", "/memory/save", lambda bad: {"content": f"a{bad}b"}, ["content"]),
    ("post", "/memory/recall", lambda bad: {"query": bad}, ["query"]),
    ("post", "/memory/search", lambda bad: {"query": bad}, ["query"]),
    ("post", "/search", lambda bad: {"query": bad, "mode": "keyword"}, ["query"]),
    ("post", "/search", lambda bad: {"query": "q", "metadata": {"k": bad}}, ["metadata", "k"]),
    ("post", "/search", lambda bad: {"query": "q", "session_id": bad}, ["session_id"]),
    ("post", "/entries", lambda bad: {"name": "a.md", "content": f"x{bad}"}, ["content"]),
    ("post", "/entries", lambda bad: {"name": f"a{bad}.md"}, ["name"]),
    ("post", "/sessions", lambda bad: {"title": bad}, ["title"]),
    ("post", "/sessions", lambda bad: {"metadata": {"a": {"b": [bad]}}}, ["metadata", "a", "b", 0]),
    ("patch", "/sessions/{sid}", lambda bad: {"title": bad}, ["title"]),
    ("post", "/errors", lambda bad: {"tool_name": "t", "error": bad}, ["error"]),
    (
        "post",
        "/errors",
        lambda bad: {"tool_name": "t", "error": "e", "arguments": {"path": bad}},
        ["arguments", "path"],
    ),
    ("post", "/context", lambda bad: {"session_id": "chat-1", "query": bad}, ["query"]),
    (
        "patch",
        "/agent/settings",
        lambda bad: {"settings": {"recall_k": bad}},
        ["settings", "recall_k"],
    ),
]


def _send(api, method, path, raw):
    if method == "post":
        return api.post(path, raw=raw)
    return api.client.patch(
        f"/api/v1{path}", raw, content_type="application/json", headers=api._headers()
    )


def _counts():
    return (
        Message.objects.count(),
        Fact.objects.count(),
        Entry.objects.count(),
        Session.objects.count(),
        ErrorRecord.objects.count(),
    )


@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "surrogate"])
@pytest.mark.parametrize(("method", "path", "body", "loc"), SWEEP)
def test_bad_characters_in_any_body_string_are_422_naming_it(
    api, session, bad, method, path, body, loc
):
    before = _counts()
    response = _send(api, method, path.format(sid=session.id), _raw(body(bad)))

    assert response.status_code == 422, response.content
    field = next(p for p in reversed(loc) if isinstance(p, str))
    assert response.json() == {
        "detail": [{"loc": ["body", *loc], "msg": f"{field} {BAD[bad]}", "type": "value_error"}]
    }
    assert _counts() == before


@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "surrogate"])
def test_bad_characters_in_an_object_key_are_422_naming_the_key(api, session, bad):
    raw = _raw({"messages": [{"role": "user", "content": "x", "metadata": {f"k{bad}": 1}}]})
    response = api.post(f"/sessions/{session.id}/messages", raw=raw)

    shown = f"k\\u{ord(bad):04x}"
    assert response.status_code == 422
    assert response.json() == {
        "detail": [
            {
                "loc": ["body", "messages", 0, "metadata", shown],
                "msg": f"key {BAD[bad]}",
                "type": "value_error",
            }
        ]
    }
    assert Message.objects.count() == 0


def test_a_surrogate_pair_is_one_character_and_is_stored(api, session):
    raw = '{"messages": [{"role": "user", "content": "smile \\ud83d\\ude00", "metadata": {"\\ud83d\\ude00": "\\u00e9"}}]}'  # noqa: E501
    response = api.post(f"/sessions/{session.id}/messages", raw=raw)

    assert response.status_code == 201
    stored = Message.objects.get()
    assert stored.content == "smile \U0001f600"
    assert stored.metadata == {"\U0001f600": "é"}
    assert response.json()["messages"][0]["content"] == "smile \U0001f600"


def test_an_escaped_backslash_before_u0000_is_plain_text(api, session):
    # The text \u0000 (backslash, u, zeros) is legal; only the escape makes a NUL.
    raw = '{"messages": [{"role": "user", "content": "C:\\\\u0000 path"}]}'
    response = api.post(f"/sessions/{session.id}/messages", raw=raw)

    assert response.status_code == 201
    assert Message.objects.get().content == "C:\\u0000 path"


def test_a_body_that_is_not_utf8_is_400(api, session):
    raw = b'{"messages": [{"role": "user", "content": "caf\xe9"}]}'
    response = api.post(f"/sessions/{session.id}/messages", raw=raw)

    assert response.status_code == 400
    assert response.json() == {"detail": "Cannot parse request body"}
    assert Message.objects.count() == 0


def test_utf8_encoded_surrogates_are_not_utf8_and_are_400(api, session):
    raw = b'{"messages": [{"role": "user", "content": "\xed\xa0\x80"}]}'
    response = api.post(f"/sessions/{session.id}/messages", raw=raw)

    assert response.status_code == 400
    assert Message.objects.count() == 0


# (path, query) with a NUL in one parameter; the answer names it.
QUERY_SWEEP = [
    ("/memory/history", {"q": "a\x00b"}, "q"),
    ("/entries/search", {"q": "a\x00b"}, "q"),
    ("/entries", {"kind": "note\x00"}, "kind"),
    ("/facts", {"category": "x\x00"}, "category"),
    ("/sessions", {"cursor": "\x00"}, "cursor"),
    ("/sessions/{sid}/messages", {"role": "user\x00"}, "role"),
    ("/errors", {"tool_name": "t\x00"}, "tool_name"),
    ("/learnings", {"q\x00": "x"}, "q\\u0000"),
]


@pytest.mark.parametrize(("path", "query", "name"), QUERY_SWEEP)
def test_nul_in_a_query_parameter_is_400_naming_it(api, session, path, query, name):
    response = api.get(path.format(sid=session.id), query)

    assert response.status_code == 400
    assert response.json() == {
        "detail": [
            {
                "loc": ["query", name],
                "msg": f"{name} must not contain NUL characters",
                "type": "value_error",
            }
        ]
    }


@pytest.mark.parametrize(
    ("method", "path", "name"),
    [
        ("get", "/entries/a%00b.md", "name"),
        ("delete", "/entries/a%00b.md", "name"),
        ("get", "/sessions/chat%00/window", "session_id"),
        ("get", "/sessions/chat%00", "session_id"),
        ("get", "/runs/r%00", "run_id"),
        ("get", "/errors/e%00", "error_id"),
    ],
)
def test_nul_in_a_path_parameter_is_400_naming_it(api, method, path, name):
    response = getattr(api.client, method)(f"/api/v1{path}", headers=api._headers())

    assert response.status_code == 400
    assert response.json()["detail"][0]["loc"] == ["path", name]
