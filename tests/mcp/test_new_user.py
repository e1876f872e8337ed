"""The new-user path through MCP (issue 12's acceptance): a fact saved in one session
survives that session's reset and is recalled in another session, over a new connection."""

import pytest

from tests.memory.helpers import MINILM, use_embedder

pytestmark = pytest.mark.django_db(transaction=True)

CAT = "The user's cat is called Whiskerino"
DISTRACTORS = [
    "The user prefers green tea",
    "The quarterly budget review is on Monday",
    "The user's dog is called Rex",
]


def _first_session(mcp) -> None:
    mcp.result(
        "append_messages",
        {
            "session_id": "session-1",
            "messages": [
                {"role": "user", "content": "My cat is called Whiskerino."},
                {"role": "assistant", "content": "Lovely name! I will remember that."},
            ],
        },
    )
    saved = mcp.result("memory_save", {"content": CAT, "session_id": "session-1"})
    assert (saved["action"], saved["fact"]["value"]) == ("created", CAT)
    for text in DISTRACTORS:
        mcp.result("memory_save", {"content": text})
    reset = mcp.result("reset_session", {"session_id": "session-1"})
    assert reset["deleted_messages"] == 2


def test_a_new_user_saves_resets_and_recalls_the_cats_name(connect, key, api):
    _first_session(connect(key))
    assert api.get("/sessions/session-1/messages").json()["items"] == []

    later = connect(key)  # another connection, another session
    later.result(
        "append_messages",
        {"session_id": "session-2", "messages": [{"role": "user", "content": "Hi again!"}]},
    )
    recalled = later.result("memory_recall", {"query": "What is the user's cat called?"})

    # The hashing embedder ranks by shared words; the cat's fact shares the most.
    assert [(i["fact"]["value"], round(i["similarity"], 3)) for i in recalled["items"]] == [
        (CAT, 0.834),
        ("The user's dog is called Rex", 0.685),
        ("The user prefers green tea", 0.252),
        ("The quarterly budget review is on Monday", 0.218),
    ]


@pytest.mark.slow
def test_a_new_user_recalls_the_cats_name_by_meaning_with_minilm(connect_http, key, settings):
    # The live server runs in this process, so the settings fixture reaches it.
    use_embedder(settings, MINILM)
    _first_session(connect_http(key))

    recalled = connect_http(key).result("memory_recall", {"query": "What is my cat's name?"})

    assert [(i["fact"]["value"], round(i["similarity"], 3)) for i in recalled["items"]] == [
        (CAT, 0.501),
        ("The user's dog is called Rex", 0.365),
        ("The user prefers green tea", 0.027),
        ("The quarterly budget review is on Monday", -0.017),
    ]
