"""Issue 22's acceptance: seed 001's context manager fires on what the agent's model holds.

An agent with a 4,096-token window streams real turns through the API and calls /context
before each user turn, in the background (the tests' Celery runs each task eagerly when the
request commits). Past 60% of the window the session is flushed, past 70% it is written,
then compacted: facts first, then the archive and the marker, and usage falls back."""

import json
import re

import pytest

from apps.conversations.models import CompactMarker, Message, SessionMeta, Summary
from apps.entries.models import Entry
from apps.entries.services import entry_add
from apps.facts.models import Fact
from apps.lifecycle.models import Run
from apps.memory.context.providers import DOCUMENTS
from apps.providers.token_counts import count_tokens
from tests.lifecycle.helpers import add, faithful, prompt, task_of, use_llm
from tests.support.llm_server import Completion, Reply

pytestmark = pytest.mark.django_db(transaction=True)

FACTS = [
    "My cat is called Whiskerino.",
    "My sister lives in Lyon.",
    "My favourite tea is oolong.",
    "My car is a green Renault.",
    "My brother plays the cello.",
    "My flat is on the fifth floor.",
]
TOPICS = [
    "the train journey to Lyon next month",
    "a birthday present for a friend who likes gardening",
    "the leaking tap in the kitchen",
    "practising the piano before the recital",
    "the budget for repainting the living room",
    "a weekend walk along the coast",
    "moving the home office into the spare room",
]


def _user(turn: int) -> str:
    lead = FACTS[turn // 3 % len(FACTS)] + " " if turn % 3 == 0 else ""
    return (
        f"{lead}Could you help me think about {TOPICS[turn % len(TOPICS)]}? I would like a "
        "short plan with the main steps and anything I might forget."
    )


def _assistant(turn: int) -> str:
    return (
        f"Of course. For {TOPICS[turn % len(TOPICS)]}, start by listing what you already "
        "have, then decide what matters most this week. Set aside an hour on Saturday, check "
        "the costs against your budget, and ask someone you trust for a second opinion "
        "before you commit. I can draft a checklist if that helps."
    )


def _conversation(turns: int) -> list[str]:
    """The texts of `turns` user+assistant pairs."""
    return [text for t in range(turns) for text in (_user(t), _assistant(t))]


def _model(body):
    """A faithful model that extracts the user's "My ..." sentences as facts and whose
    rolling summary condenses, as a summary does."""
    task = task_of(body)
    if task == "extract":
        found = dict.fromkeys(re.findall(r"\bMy [^.?!]*\.", prompt(body)))
        return Completion(json.dumps({"facts": [{"content": f} for f in found]}))
    if task == "summary":
        turns = prompt(body).count(" user: ")
        return Completion(f"The user asked for plans on {turns} more everyday topics.")
    return faithful(body)


def _context(api, session_id: str, **extra) -> dict:
    response = api.post("/context", {"session_id": session_id, **extra})
    assert response.status_code == 200, response.content
    return response.json()["usage"]


def _append(api, session_id: str, turn: int) -> None:
    body = {
        "messages": [
            {"role": "user", "content": _user(turn)},
            {"role": "assistant", "content": _assistant(turn)},
        ]
    }
    assert api.post(f"/sessions/{session_id}/messages", body).status_code == 201


def test_a_session_past_70_percent_is_flushed_then_compacted_through_context_alone(
    api, agent, settings, llm_server
):
    use_llm(settings, llm_server)
    llm_server.script(Reply(_model, repeat=True))
    patched = api.patch("/agent/settings", {"settings": {"context_window_tokens": 4096}})
    assert patched.status_code == 200, patched.content
    session_id = api.post("/sessions", {"key": "chat:acceptance"}).json()["id"]

    before = []  # /context before each user turn, until one set off the compaction
    for turn in range(120):
        before.append(_context(api, session_id, query=_user(turn)))
        if CompactMarker.objects.filter(session_id=session_id).exists():
            break
        _append(api, session_id, turn)
    after = _context(api, session_id, query=_user(turn))

    actions = [(u["action"], u["action_status"]) for u in before]
    assert ("flush", "queued") in actions
    assert actions[-1] == ("compact", "queued")
    assert actions.index(("flush", "queued")) < len(actions) - 1
    flushes = [u["usage_ratio"] for u in before if u["action"] == "flush"]
    assert flushes
    assert all(0.6 <= r < 0.7 for r in flushes)
    assert before[-1]["usage_ratio"] >= 0.7
    assert {u["measured_by"] for u in [*before, after]} == {"estimate"}

    # facts stored before the compaction, by the flush at 60% and the extraction at 70%
    compact = Run.objects.get(kind="compact", session_id=session_id)
    assert (compact.trigger, compact.status) == ("context", "ok")
    extract = Run.objects.get(kind="extract", session_id=session_id)
    flush = Run.objects.filter(kind="flush", session_id=session_id, status="ok").first()
    assert flush is not None
    assert flush.id < extract.id < compact.id
    facts = list(Fact.objects.filter(agent=agent))
    assert {f.value for f in facts} == set(FACTS)
    assert all(f.created_at <= compact.created_at for f in facts)
    stored_by = Run.objects.filter(facts__in=facts).distinct()
    assert stored_by
    assert all(r.id < compact.id and r.kind in ("flush", "extract") for r in stored_by)
    # the flush cursor covers every archived message
    meta = SessionMeta.objects.get(session_id=session_id)
    archived = list(Message.objects.filter(session_id=session_id, created_at__lt=meta.start_at))
    assert archived
    assert all((m.created_at, m.id) <= (meta.flush_cursor, meta.flush_cursor_id) for m in archived)
    # the marker and its archive
    marker = CompactMarker.objects.get(session_id=session_id)
    assert marker.message_count == len(archived)
    assert Entry.objects.get(agent=agent, name=marker.archive_name).kind == "archive"
    # the window is the summary and the last compact_keep_last messages: usage fell back
    assert after["counted"]["message_count"] == 4
    assert after["counted"]["summary"] > 0
    assert after["usage_ratio"] < 0.7
    assert after["action"] in ("none", "flush")


def _document_tokens(agent) -> int:
    return sum(
        Entry.objects.filter(agent=agent, name__in=DOCUMENTS).values_list("token_count", flat=True)
    )


def test_usage_counts_documents_summary_and_only_the_messages_after_the_marker(api, agent, session):
    agent.settings = {"max_history_bytes": 100, "context_window_tokens": 1000}
    agent.save()
    entry_add(agent=agent, name="SOUL.md", content="You are a patient, careful assistant.")
    Summary.objects.create(session=session, content="Earlier they planned a trip to Lyon.")
    rows = add(
        session,
        *_conversation(4),
        role=None,
    )
    api.post(f"/sessions/{session.id}/compact")
    start_at = SessionMeta.objects.get(session=session).start_at
    hot = [m for m in rows if m.created_at >= start_at]
    assert 0 < len(hot) < len(rows)

    usage = _context(api, str(session.id), lifecycle="off")

    counted = usage["counted"]
    assert (counted["messages"], counted["message_count"]) == (
        sum(m.token_count for m in hot),
        len(hot),
    )
    assert counted["system"] == _document_tokens(agent)  # SOUL.md, and MEMORY.md's facts
    assert counted["summary"] == count_tokens("Earlier they planned a trip to Lyon.")
    total = counted["system"] + counted["summary"] + counted["messages"]
    assert (counted["estimate"], counted["observed"]) == (total, None)
    assert (usage["usage_tokens"], usage["measured_by"]) == (total, "estimate")
    assert usage["usage_ratio"] == total / 1000


def test_observed_tokens_stand_in_for_the_estimate(api, agent, session):
    agent.settings = {"context_window_tokens": 1000}
    agent.save()
    add(session, "word " * 800)  # the estimate alone is past 70%

    estimated = _context(api, str(session.id), lifecycle="off")
    observed = _context(api, str(session.id), lifecycle="off", observed_tokens=650)
    quiet = _context(api, str(session.id), observed_tokens=0)

    assert (estimated["usage_ratio"], estimated["action"]) == (0.8, "compact")
    assert (observed["measured_by"], observed["usage_tokens"], observed["usage_ratio"]) == (
        "observed",
        650,
        0.65,
    )
    assert (observed["action"], observed["action_status"]) == ("flush", "off")
    assert observed["counted"] == {**estimated["counted"], "observed": 650}
    assert (quiet["action"], quiet["action_status"], quiet["runs"]) == ("none", "none", [])
    assert not Run.objects.exists()


@pytest.mark.parametrize("bad", [-1, "650", 6.5, True, 10_000_001])
def test_a_bad_observed_tokens_is_422(api, session, bad):
    response = api.post("/context", {"session_id": str(session.id), "observed_tokens": bad})

    assert response.status_code == 422
    assert [d["loc"] for d in response.json()["detail"]] == [["body", "payload", "observed_tokens"]]


def test_usage_at_60_percent_flushes_in_the_background(api, agent, session):
    rows = add(
        session,
        *_conversation(6),
        role=None,
    )
    tokens = _context(api, str(session.id), lifecycle="off")["usage_tokens"]
    agent.settings = {"context_window_tokens": int(tokens / 0.65)}
    agent.save()

    usage = _context(api, str(session.id))

    assert (usage["action"], usage["action_status"]) == ("flush", "queued")
    assert 0.6 <= usage["usage_ratio"] < 0.7
    [run] = Run.objects.all()
    assert (run.kind, run.trigger, run.status, run.message_count) == (
        "flush",
        "context",
        "fallback",
        8,
    )
    assert SessionMeta.objects.get(session=session).flush_cursor_id == rows[7].id
    assert not CompactMarker.objects.exists()
