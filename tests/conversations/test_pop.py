"""POST /sessions/{id}/messages/pop: the session's newest message removed and returned (the
OpenAI Agents SDK's Session.pop_item), on both backends: in order, 404 once empty, 409 once
the lifecycle used the message, another agent's key 404, gone from search, audited."""

import json

import pytest
from django.db import connection

from apps.agents.models import AuditEvent
from apps.conversations.models import Message, Session, SessionMeta
from apps.conversations.services import message_pop
from apps.lifecycle.models import HistoryEntry, Run
from apps.search.backends.base import vec_table
from apps.search.corpora import get_corpus
from tests.lifecycle.helpers import add, use_llm
from tests.people.erasure_probe import side_tables
from tests.support.llm_server import Completion, Reply

pytestmark = pytest.mark.django_db


def pop(api, session, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return api.post(f"/sessions/{session.id}/messages/pop" + (f"?{query}" if query else ""))


def append(api, session, *messages):
    response = api.post(f"/sessions/{session.id}/messages", {"messages": list(messages)})
    assert response.status_code == 201
    return response.json()["messages"]


CALL = {"id": "c1", "type": "function", "function": {"name": "book", "arguments": "{}"}}


def test_pops_return_the_newest_message_first_until_none_is_left(api, session):
    stored = append(
        api,
        session,
        {"role": "user", "content": "Book it.", "name": "alice", "metadata": {"k": 1}},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "content": "booked", "tool_call_id": "c1", "tool_name": "book"},
    )

    popped = [pop(api, session) for _ in range(3)]

    assert [r.status_code for r in popped] == [200, 200, 200]
    assert [r.json() for r in popped] == stored[::-1]  # as stored: every field
    assert popped[1].json()["tool_calls"] == [CALL]
    assert Message.objects.filter(session=session).count() == 0
    assert SessionMeta.objects.get(session=session).hot_bytes == 0
    empty = pop(api, session)
    assert (empty.status_code, empty.json()) == (404, {"detail": "the session has no message"})
    assert api.get(f"/sessions/{session.id}/window").json()["messages"] == []


def test_the_window_and_hot_bytes_follow_a_pop(api, session, django_capture_on_commit_callbacks):
    first, second = append(
        api, session, {"role": "user", "content": "one"}, {"role": "user", "content": "two"}
    )
    assert [m["id"] for m in api.get(f"/sessions/{session.id}/window").json()["messages"]] == [
        first["id"],
        second["id"],
    ]  # now in working memory

    with django_capture_on_commit_callbacks(execute=True):  # the pop commits
        assert pop(api, session).json()["id"] == second["id"]

    window = api.get(f"/sessions/{session.id}/window").json()  # working memory refreshed
    assert [m["id"] for m in window["messages"]] == [first["id"]]
    assert SessionMeta.objects.get(session=session).hot_bytes == len(b"one")


def test_another_agents_key_gets_404_and_nothing_changes(api, other_api, session):
    [stored] = append(api, session, {"role": "user", "content": "mine"})

    response = pop(other_api, session)

    assert (response.status_code, response.json()) == (404, {"detail": "session not found"})
    assert [str(pk) for pk in Message.objects.values_list("id", flat=True)] == [stored["id"]]
    assert AuditEvent.objects.count() == 0


def test_a_user_other_than_the_sessions_is_422(api):
    created = api.post("/sessions", {"key": "t-42", "user": "telegram:42"}).json()
    session = Session.objects.get(pk=created["id"])
    append(api, session, {"role": "user", "content": "hi"})

    other = pop(api, session, user="telegram:7")

    assert other.status_code == 422
    assert other.json()["detail"] == [
        {"loc": ["query", "user"], "msg": "user differs from the session's user",
         "type": "value_error"}
    ]  # fmt: skip
    assert Message.objects.count() == 1
    mine = pop(api, session, user="telegram:42")
    assert (mine.status_code, mine.json()["content"]) == (200, "hi")


def test_a_pop_is_audited_without_the_content(api, agent, session):
    [stored] = append(api, session, {"role": "user", "content": "a secret plan"})

    pop(api, session)

    event = AuditEvent.objects.get()
    assert (event.agent_id, event.source, event.action, event.username) == (
        agent.pk,
        "api",
        "message.pop",
        "agent",
    )
    assert (event.object_type, event.object_id) == ("message", stored["id"])
    assert event.before == {
        "session": str(session.id),
        "user": "",
        "role": "user",
        "created_at": stored["created_at"].replace("Z", "+00:00"),
        "token_count": stored["token_count"],
    }
    assert "secret" not in str(event.before)


def _rowid(pk) -> int | None:
    if connection.vendor != "sqlite":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SELECT rowid FROM conversations_message WHERE id = %s", [pk.hex])
        return cursor.fetchone()[0]


def _vectors(rowid: int | None) -> int:
    """SQLite keeps vectors in a vec0 side table; PostgreSQL in the row itself."""
    if rowid is None:
        return 0
    table = vec_table(get_corpus("messages").table)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {table} WHERE rowid = %s", [rowid])
        return cursor.fetchone()[0]


def _indexed(word: str, pk) -> dict[str, int]:
    """The side-table rows naming the message or matching the word; not the SQLite FTS5
    pages or PostgreSQL's per-term counts, which keep a deleted token until they merge."""
    found = side_tables(word, {Message: [pk]})
    return {k: n for k, n in found.items() if not k.endswith(("_data", "_bm25term"))}


def test_a_popped_message_leaves_search_and_its_side_tables(
    api, session, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):  # embedded
        append(api, session, {"role": "user", "content": "the quokka is in the garden"})
        [stored] = append(api, session, {"role": "user", "content": "zanzibar ferry at noon"})
    message = Message.objects.get(pk=stored["id"])
    rowid = _rowid(message.pk)
    assert message.embedding_model
    before = api.post("/search", {"query": "zanzibar", "mode": "keyword"}).json()["hits"]
    assert [h["id"] for h in before] == [stored["id"]]
    assert _indexed("zanzibar", message.pk) != {}
    assert _vectors(rowid) == (1 if rowid is not None else 0)

    assert pop(api, session).status_code == 200

    for mode in ("keyword", "contains", "semantic", "hybrid"):
        hits = api.post("/search", {"query": "zanzibar ferry at noon", "mode": mode}).json()
        assert stored["id"] not in [h["id"] for h in hits["hits"]], mode
    assert _indexed("zanzibar", message.pk) == {}
    assert _vectors(rowid) == 0
    still = api.post("/search", {"query": "quokka", "mode": "keyword"}).json()["hits"]
    assert [h["content"] for h in still] == ["the quokka is in the garden"]


CHAT = ["Hi.", "Hello!", "I moved to Berlin.", "Nice city.", "ok", "Anything else?"]


def _conflict(api, session, why):
    response = pop(api, session)
    assert (response.status_code, response.json()) == (
        409,
        {
            "detail": f"the newest message {why}: removing it would change what the lifecycle "
            "already made of it, so it stays",
            "loc": ["path", "session_id"],
        },
    )


def _settings(api, **values):
    assert api.patch("/agent/settings", {"settings": values}).status_code == 200


def test_a_message_the_rolling_summary_covers_is_409(api, session):
    _settings(api, max_history_messages=2)
    rows = add(session, *CHAT, role=None)
    assert api.post(f"/sessions/{session.id}/summarize").status_code == 200

    assert [pop(api, session).json()["id"] for _ in range(2)] == [str(rows[5].pk), str(rows[4].pk)]
    _conflict(api, session, "is covered by the rolling summary")
    assert Message.objects.filter(session=session).count() == 4


def test_a_consolidated_message_is_409(api, session):
    add(session, *CHAT, role=None)
    assert api.post(f"/sessions/{session.id}/consolidate").status_code == 200

    _conflict(api, session, "is consolidated into the agent's history")
    assert Message.objects.filter(session=session).count() == 6


def test_a_flushed_message_is_409(api, session):
    _settings(api, compact_keep_last=2)
    rows = add(session, *CHAT, role=None)
    assert api.post(f"/sessions/{session.id}/flush").status_code == 200

    assert [pop(api, session).json()["id"] for _ in range(2)] == [str(rows[5].pk), str(rows[4].pk)]
    _conflict(api, session, "had its facts flushed into memory")


def test_a_message_behind_a_compact_marker_is_409(api, session):
    _settings(api, max_history_bytes=40)
    rows = add(session, *CHAT, role=None)
    body = api.post(f"/sessions/{session.id}/compact").json()
    start_at = SessionMeta.objects.get(session=session).start_at
    hot = [r for r in rows if r.created_at >= start_at]
    assert (len(body["markers"]), len(hot)) == (1, 2)  # the last pair stays hot

    assert [pop(api, session).json()["id"] for _ in hot] == [str(r.pk) for r in hot[::-1]]
    _conflict(api, session, "is archived behind a compact marker")


@pytest.mark.django_db(transaction=True)
def test_a_consolidation_that_read_a_message_popped_during_its_call_writes_nothing(
    api, session, settings, llm_server
):
    """The run read every message, the newest included; the agent popped that one while the
    model answered: the run is superseded, and the next one covers what is left."""
    use_llm(settings, llm_server)
    rows = add(session, *CHAT, role=None)

    def pop_meanwhile(body):
        from django.db import connection

        popped = message_pop(session=Session.objects.get(pk=session.pk), username="agent")
        assert popped.pk == rows[-1].pk
        connection.close()  # the server thread's own connection
        return Completion(
            json.dumps({"history_entry": "[2026-01-05 09:00] Six.", "memory_update": ""})
        )

    llm_server.script(Reply(pop_meanwhile))

    response = api.post(f"/sessions/{session.id}/consolidate")

    assert response.status_code == 200
    assert HistoryEntry.objects.count() == 0
    assert not Message.objects.filter(consolidated_at__isnull=False).exists()
    assert not Run.objects.filter(status__in=["ok", "fallback"]).exists()
    llm_server.script(
        Completion(json.dumps({"history_entry": "[2026-01-05 09:00] Five.", "memory_update": ""}))
    )

    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert (run["status"], run["message_count"]) == ("ok", 5)
    assert HistoryEntry.objects.get().content == "[2026-01-05 09:00] Five."
