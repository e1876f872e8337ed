"""Reset (seeds 000 and 004): consolidation is awaited (bounded by the timeout), what it did
not cover is archived whole, then messages, markers and meta go; the summary stays."""

import re
import time

import pytest

from apps.conversations.models import Message, SessionMeta, Summary
from apps.entries.models import Entry
from apps.lifecycle.models import HistoryEntry
from tests.lifecycle.helpers import add, faithful, use_llm
from tests.support.llm_server import Completion, Delay, Reply

pytestmark = pytest.mark.django_db


def test_with_reset_archive_fallback_what_the_llm_covered_is_not_archived(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    agent.settings = {"reset_archive": "fallback"}
    agent.save()
    add(session, "My cat is called Whiskerino.", "Noted.", role=None)
    Summary.objects.create(session=session, content="Earlier: cats.")
    llm_server.script(Reply(faithful))

    body = api.post(f"/sessions/{session.id}/reset").json()

    assert body["deleted_messages"] == 2
    assert [(r["kind"], r["trigger"], r["status"]) for r in body["runs"]] == [
        ("consolidate", "reset", "ok")
    ]
    assert body["archive"] is None
    history = HistoryEntry.objects.get(agent=agent)
    assert "[2026-01-05 09:00] user: My cat is called Whiskerino." in history.content
    assert Entry.objects.get(agent=agent, name="MEMORY.md").content == (
        "# Memory\n- talked at [2026-01-05 09:00]\n"
    )
    assert Message.objects.filter(session=session).count() == 0
    assert not SessionMeta.objects.filter(session=session).exists()
    assert Summary.objects.get(session=session).content == "Earlier: cats."


def test_a_hung_llm_returns_within_the_timeout_and_loses_nothing(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    agent.settings = {"consolidation_timeout_seconds": 3}
    agent.save()
    long = "The plan: " + "step " * 100
    add(session, long, "ok", role=None)
    llm_server.script(Delay(60, then="never"))

    started = time.monotonic()
    body = api.post(f"/sessions/{session.id}/reset").json()
    took = time.monotonic() - started

    assert took < 3 + 2
    [run] = body["runs"]
    assert (run["status"], run["reason"]) == ("fallback", "timeout")
    # the call had what was left of the 3 s once the lease was taken
    assert re.fullmatch(r"no answer within (3|2\.\d+) s", run["error"])
    assert body["archive"] == "archive/chat-1/1"
    archive = Entry.objects.get(agent=agent, name="archive/chat-1/1")
    assert archive.kind == "archive"
    assert archive.content == (
        "# Session chat-1 before its reset: 2 messages kept whole\n\n"
        f"## 2026-01-05T09:00:00+00:00 user\n\n{long}\n\n"
        "## 2026-01-05T09:01:00+00:00 assistant\n\nok\n"
    )
    assert HistoryEntry.objects.get(agent=agent).kind == "raw-fallback"


def test_without_an_llm_reset_keeps_everything_in_an_archive(api, agent, session):
    call = [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]
    add(session, "", role="assistant", tool_calls=call)

    body = api.post(f"/sessions/{session.id}/reset").json()

    assert [(r["status"], r["reason"]) for r in body["runs"]] == [("fallback", "not_configured")]
    assert Entry.objects.get(name=body["archive"]).content.endswith(
        '\n\ntool_calls: [{"id": "c1", "type": "function", "function": '
        '{"name": "grep", "arguments": "{}"}}]\n'
    )


def test_by_default_a_reset_keeps_even_what_the_llm_summarised(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    add(session, "hello, my cat is Whiskerino")
    llm_server.script(Completion('{"history_entry": "[x] Talked about a cat."}'))

    body = api.post(f"/sessions/{session.id}/reset").json()

    assert (body["runs"][0]["status"], body["archive"]) == ("ok", "archive/chat-1/1")
    assert "hello, my cat is Whiskerino" in Entry.objects.get(name=body["archive"]).content


def test_reset_of_an_empty_session_writes_nothing(api, agent, session):
    body = api.post(f"/sessions/{session.id}/reset").json()

    assert (body["deleted_messages"], body["archive"]) == (0, None)
    assert [(r["status"], r["reason"]) for r in body["runs"]] == [("skipped", "nothing_to_do")]
    assert not Entry.objects.exists()
