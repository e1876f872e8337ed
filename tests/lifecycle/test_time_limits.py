"""Issue 23: background runs get MEMORYHUB_LLM_BACKGROUND_TIMEOUT, awaited work keeps the
agent's consolidation_timeout_seconds; a background consolidation that times out keeps its
raw fallback and retries its range once in halves."""

import json

import pytest

from apps.conversations.models import Message
from apps.lifecycle import services
from apps.lifecycle.models import HistoryEntry, Run, Trigger
from tests.lifecycle.helpers import add, use_llm
from tests.support.llm_server import Completion, Delay

pytestmark = pytest.mark.django_db


def _answer(text: str) -> Completion:
    return Completion(json.dumps({"history_entry": text}))


def test_a_background_timeout_keeps_the_fallback_and_retries_in_halves(
    agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    settings.MEMORYHUB_LLM_BACKGROUND_TIMEOUT = 0.3
    llm_server.script(
        Delay(3, then=_answer("never used")), _answer("first half"), _answer("second half")
    )
    add(session, "one", "two", "three", "four", role=None)

    runs = services.session_consolidate(session=session, trigger=Trigger.AUTO)

    assert [(r.status, r.reason, r.details.get("part")) for r in runs] == [
        ("fallback", "timeout", None)
    ]
    retries = Run.objects.filter(details__retry_of=runs[0].pk).order_by("id")
    assert [(r.status, r.details["part"], r.message_count) for r in retries] == [
        ("ok", "1/2", 2),
        ("ok", "2/2", 2),
    ]
    assert [(h.kind, h.content.split("\n")[0][:14]) for h in HistoryEntry.objects.all()] == [
        ("raw-fallback", "[raw-fallback]"),
        ("ok", "first half"),
        ("ok", "second half"),
    ]
    assert set(Message.objects.values_list("consolidation", flat=True)) == {"ok"}


def test_a_half_that_fails_again_is_given_up_and_its_fallback_stays(
    agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    settings.MEMORYHUB_LLM_BACKGROUND_TIMEOUT = 0.3
    llm_server.script(Delay(3), Delay(3), _answer("second half"))
    add(session, "one", "two", "three", "four", role=None)

    services.session_consolidate(session=session, trigger=Trigger.AUTO)

    assert [(r.status, r.reason) for r in Run.objects.order_by("id")] == [
        ("fallback", "timeout"),
        ("timeout", "given_up"),
        ("ok", ""),
    ]
    assert list(Message.objects.order_by("created_at").values_list("consolidation", flat=True)) == [
        "raw-fallback",
        "raw-fallback",
        "ok",
        "ok",
    ]


def test_awaited_work_keeps_the_agents_timeout_not_the_background_one(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    settings.MEMORYHUB_LLM_BACKGROUND_TIMEOUT = 0.2
    llm_server.script(Delay(0.6, then=_answer("awaited")))
    add(session, "one", "two", role=None)

    runs = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert [(r["status"], r["reason"]) for r in runs] == [("ok", "")]
    assert len(llm_server.chats) == 1  # no retry for a call someone waited for
