"""Seed 000's rolling summary: incremental from the cursor, one call per chunk, the old
summary in the prompt, cursor and summary untouched on failure."""

import pytest

from apps.conversations.models import SessionMeta, Summary
from apps.lifecycle.models import Run
from apps.providers.token_counts import count_tokens
from tests.lifecycle.helpers import add, use_llm
from tests.support.llm_server import Completion, Delay, Status

pytestmark = pytest.mark.django_db


def _twenty(session):
    return add(session, *[f"message {i}" for i in range(20)], role=None)


def _summary(session):
    found = Summary.objects.filter(session=session).first()
    return found.content if found else None


def _cursor(session):
    meta = SessionMeta.objects.get(session=session)
    return meta.summary_cursor, meta.summary_cursor_id


def test_what_left_the_window_is_summarised_and_the_cursor_moves(
    api, session, settings, llm_server
):
    use_llm(settings, llm_server)
    rows = _twenty(session)  # the window holds the last 16: messages 0-3 have left it
    llm_server.script(
        Completion("They counted from 0 to 3.", prompt_tokens=90, completion_tokens=8)
    )

    body = api.post(f"/sessions/{session.id}/summarize").json()

    assert body["summary"] == "They counted from 0 to 3."
    [run] = body["runs"]
    assert (run["kind"], run["trigger"], run["status"], run["parse_tier"]) == (
        "summary",
        "api",
        "ok",
        None,
    )
    assert (run["message_count"], run["first_message_id"], run["last_message_id"]) == (
        4,
        str(rows[0].id),
        str(rows[3].id),
    )
    assert (run["input_tokens"], run["output_tokens"]) == (90, 8)
    assert _cursor(session) == (rows[3].created_at, rows[3].id)
    text = llm_server.chats[0].body["messages"][-1]["content"]
    assert text.startswith(
        "## Current summary\n(empty)\n\n## New messages\n[2026-01-05 09:00] user: message 0\n"
    )
    assert "message 3" in text
    assert "message 4" not in text
    assert api.get(f"/sessions/{session.id}/window").json()["summary"] == body["summary"]


def test_the_next_run_merges_into_the_old_summary_in_one_pass(api, session, settings, llm_server):
    use_llm(settings, llm_server)
    _twenty(session)
    llm_server.script("First summary.")
    api.post(f"/sessions/{session.id}/summarize")
    add(session, "later 1", "later 2", start=session.messages.last().created_at.replace(hour=10))
    llm_server.script("Merged summary.")

    body = api.post(f"/sessions/{session.id}/summarize").json()

    assert body["summary"] == "Merged summary."
    assert len(llm_server.chats) == 2
    text = llm_server.chats[1].body["messages"][-1]["content"]
    assert text.startswith("## Current summary\nFirst summary.\n\n## New messages\n")
    assert "message 5" in text
    assert "message 4" in text
    assert "message 3" not in text


def test_chunks_under_the_token_budget_make_one_call_each(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    agent.settings = {"max_history_messages": 2, "summary_chunk_tokens": 6}
    agent.save()
    add(session, *["alpha beta gamma"] * 6, role=None)  # 3 tokens each: 4 left the window
    llm_server.script("S1", "S2")

    runs = api.post(f"/sessions/{session.id}/summarize").json()["runs"]

    assert [(r["status"], r["message_count"]) for r in runs] == [("ok", 2), ("ok", 2)]
    assert _summary(session) == "S2"
    assert "## Current summary\nS1\n" in llm_server.chats[1].body["messages"][-1]["content"]


@pytest.mark.parametrize(
    ("item", "status", "reason"),
    [
        (Status(500, "down"), "failed", "failed"),
        (Delay(3, "late"), "timeout", "timeout"),
    ],
)
def test_a_failed_chunk_leaves_summary_and_cursor_and_bills_no_later_chunk(
    api, agent, session, settings, llm_server, item, status, reason
):
    use_llm(settings, llm_server)
    agent.settings = {
        "max_history_messages": 2,
        "summary_chunk_tokens": 6,
        "consolidation_timeout_seconds": 1,
    }
    agent.save()
    add(session, *["alpha beta gamma"] * 6, role=None)
    Summary.objects.create(session=session, content="Old summary.")
    before = SessionMeta.objects.get(session=session).summary_cursor
    llm_server.script(item, "never asked")

    runs = api.post(f"/sessions/{session.id}/summarize").json()["runs"]

    assert [(r["status"], r["reason"]) for r in runs] == [(status, reason)]
    assert _summary(session) == "Old summary."
    assert SessionMeta.objects.get(session=session).summary_cursor == before is None
    assert len(llm_server.chats) == 1
    assert Run.objects.get().idempotency_key == ""  # a failure holds no key: a retry may write


def test_without_an_llm_the_summary_is_extractive(api, agent, session):
    agent.settings = {"max_history_messages": 2}
    agent.save()
    add(session, "My cat is called Whiskerino. She is three.", "Lovely name!", "Thanks.", role=None)

    body = api.post(f"/sessions/{session.id}/summarize").json()

    assert body["summary"] == ("- [2026-01-05 09:00] user: My cat is called Whiskerino.")
    [run] = body["runs"]
    assert (run["status"], run["reason"], run["error"]) == (
        "fallback",
        "not_configured",
        "no LLM is configured",
    )


def test_the_extractive_summary_stays_under_summary_max_tokens(api, agent, session):
    agent.settings = {"max_history_messages": 1, "summary_max_tokens": 30}
    agent.save()
    add(session, *[f"sentence number {i} here" for i in range(40)], role="user")

    summary = api.post(f"/sessions/{session.id}/summarize").json()["summary"]

    # Lines of 18 tokens each: one fits in 30. The salient one: the shared words with the
    # least else (one-digit numbers are no content words), the newest of those equal.
    assert summary == "- [2026-01-05 09:09] user: sentence number 9 here"
    assert count_tokens(summary) == 18


def test_nothing_to_summarise_is_a_skipped_run(api, session):
    add(session, "only one")

    [run] = api.post(f"/sessions/{session.id}/summarize").json()["runs"]

    assert (run["status"], run["reason"]) == ("skipped", "nothing_to_do")


def test_the_summary_survives_reset_and_goes_with_the_session(api, session):
    Summary.objects.create(session=session, content="Kept.")
    add(session, "hello")

    api.post(f"/sessions/{session.id}/reset")
    assert _summary(session) == "Kept."
    api.delete(f"/sessions/{session.id}")
    assert Summary.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_session_removed_during_the_call_gets_nothing_written(api, session, settings, llm_server):
    from apps.conversations.models import Session
    from tests.support.llm_server import Reply

    use_llm(settings, llm_server)
    _twenty(session)

    def remove_meanwhile(body):
        from django.db import connection

        from apps.conversations.services import session_remove

        session_remove(session=Session.objects.get(pk=session.pk))
        connection.close()
        return Completion("A summary nobody will read.")

    llm_server.script(Reply(remove_meanwhile))

    from apps.lifecycle.services import session_summarize

    [run] = session_summarize(session=session, trigger="api")

    assert (run.status, run.reason, run.session_id, run.session_key) == (
        "skipped",
        "superseded",
        None,
        "chat-1",
    )
    assert Summary.objects.count() == 0
