"""Issue 22: seed 004 applies `history_entry` and `memory_update` each when present, and
seed 001's daily log (`memory/YYYY-MM-DD.md`) gets a line per applied summary and
consolidation run. Over real HTTP to the loopback model."""

import json
from datetime import UTC, datetime

import pytest
import time_machine

from apps.conversations.models import Message, Session
from apps.entries.models import Entry
from apps.lifecycle.models import HistoryEntry
from tests.lifecycle.helpers import TEA_MEMORY, add, tea_conversation, use_llm
from tests.support.llm_server import Completion, Status

pytestmark = pytest.mark.django_db

MEMORY = TEA_MEMORY
UPDATE = "# Memory\n- likes green tea\n- cat: Whiskerino"
HISTORY = "[2026-01-05 09:00] The user switched to green tea and named the cat."
RAW = (
    "[raw-fallback] [2026-01-05 09:02] 3 messages:\n"
    "- [2026-01-05 09:00] user: I switched to green tea.\n"
    "- [2026-01-05 09:01] assistant: Noted: green tea from now on.\n"
    "- [2026-01-05 09:02] user: Also, my cat is called Whiskerino."
)
NOW = datetime(2026, 3, 1, 12, 30, 15, tzinfo=UTC)

# answer -> (history kind, history text, MEMORY.md after, run status, reason, applied)
FIELDS = {
    "both": (
        {"history_entry": HISTORY, "memory_update": UPDATE},
        ("ok", HISTORY, UPDATE + "\n", "ok", "", ["history_entry", "memory_update"]),
    ),
    "history only": (
        {"history_entry": HISTORY},
        ("ok", HISTORY, MEMORY, "ok", "", ["history_entry"]),
    ),
    "memory only": (
        {"memory_update": UPDATE},
        ("raw-fallback", RAW, UPDATE + "\n", "ok", "", ["memory_update"]),
    ),
    "history, blank memory": (
        {"history_entry": HISTORY, "memory_update": "  "},
        ("ok", HISTORY, MEMORY, "ok", "", ["history_entry"]),
    ),
    "neither (garbage)": (
        "I am sorry, I cannot do that.",
        ("raw-fallback", RAW, MEMORY, "fallback", "unparseable", []),
    ),
}


_conversation = tea_conversation


@pytest.mark.parametrize("answer", list(FIELDS))
def test_each_field_of_the_answer_is_applied_when_present(
    api, agent, session, settings, llm_server, answer
):
    body, (kind, history, memory, status, reason, applied) = FIELDS[answer]
    use_llm(settings, llm_server)
    _conversation(agent, session)
    llm_server.script(Completion(body if isinstance(body, str) else json.dumps(body)))

    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    entry = HistoryEntry.objects.get(agent=agent)
    assert (entry.kind, entry.content, entry.run_id) == (kind, history, run["id"])
    assert Entry.objects.get(agent=agent, name="MEMORY.md").content == memory
    assert (run["status"], run["reason"], run["details"]["applied"]) == (status, reason, applied)
    assert run["parse_tier"] == (None if answer == "neither (garbage)" else 1)
    # every message is covered by the entry; only the model's own entry counts as "ok"
    consolidated = set(Message.objects.values_list("consolidation", flat=True))
    assert consolidated == {kind}


def test_summary_and_consolidation_runs_each_add_a_line_to_the_days_log(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    add(session, *[f"message {i}" for i in range(20)], role=None)  # 0-3 left the window
    history = "[2026-01-05 09:00] They counted to nineteen.\nEvery number was said once."
    llm_server.script(
        Completion("They counted from 0 to 3. Nothing else happened."),
        Completion(json.dumps({"history_entry": history, "memory_update": "- counts well"})),
    )

    with time_machine.travel(NOW, tick=False):
        [summary] = api.post(f"/sessions/{session.id}/summarize").json()["runs"]
        [consolidation] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert (summary["status"], consolidation["status"]) == ("ok", "ok")
    log = Entry.objects.get(agent=agent, name="memory/2026-03-01.md")
    assert log.content == (
        "# 2026-03-01\n\n"
        "- 12:30:15 [summary] chat-1: They counted from 0 to 3.\n"
        "- 12:30:15 [consolidate] chat-1: [2026-01-05 09:00] They counted to nineteen.\n"
    )
    assert Entry.objects.filter(agent=agent, name__startswith="memory/2").count() == 1


def test_fallback_runs_are_logged_and_failed_ones_are_not(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    add(session, *[f"message {i}" for i in range(20)], role=None)
    llm_server.script(Status(500, "down"), Status(500, "down"))

    with time_machine.travel(NOW, tick=False):
        [summary] = api.post(f"/sessions/{session.id}/summarize").json()["runs"]
        [consolidation] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    # the summary failed (nothing written); the consolidation fell back to a raw entry
    assert (summary["status"], consolidation["status"]) == ("failed", "fallback")
    log = Entry.objects.get(agent=agent, name="memory/2026-03-01.md")
    assert log.content == (
        "# 2026-03-01\n\n"
        "- 12:30:15 [consolidate] chat-1: "
        "[raw-fallback] [2026-01-05 09:19] 20 messages, the last 10:\n"
    )


def test_a_long_first_line_is_bounded_on_the_log(api, agent, session, settings, llm_server):
    use_llm(settings, llm_server)
    add(session, "hello", "hi", role=None)
    long = "word " * 100
    llm_server.script(Completion(json.dumps({"history_entry": long + "\nsecond line"})))

    with time_machine.travel(NOW, tick=False):
        api.post(f"/sessions/{session.id}/consolidate")

    log = Entry.objects.get(agent=agent, name="memory/2026-03-01.md").content
    shown = long.strip()[:199].rstrip() + "…"
    assert log == f"# 2026-03-01\n\n- 12:30:15 [consolidate] chat-1: {shown}\n"


def test_a_session_gets_one_summary_line_a_day(api, agent, session, settings, llm_server):
    use_llm(settings, llm_server)
    agent.settings = {"max_history_messages": 2}
    agent.save()
    other = api.post("/sessions", {"key": "chat-2"}).json()["id"]
    llm_server.script(
        Completion("First pass. More."), Completion("Second pass."), Completion("Other chat.")
    )

    with time_machine.travel(NOW, tick=False):
        add(session, *[f"message {i}" for i in range(6)], role=None)
        [first] = api.post(f"/sessions/{session.id}/summarize").json()["runs"]
        add(session, *[f"later {i}" for i in range(4)], role=None, start=NOW)
        [second] = api.post(f"/sessions/{session.id}/summarize").json()["runs"]
        add(Session.objects.get(pk=other), *[f"other {i}" for i in range(6)], role=None)
        [third] = api.post(f"/sessions/{other}/summarize").json()["runs"]

    assert [r["status"] for r in (first, second, third)] == ["ok", "ok", "ok"]
    log = Entry.objects.get(agent=agent, name="memory/2026-03-01.md")
    assert log.content == (
        "# 2026-03-01\n\n"
        "- 12:30:15 [summary] chat-1: First pass.\n"
        "- 12:30:15 [summary] chat-2: Other chat.\n"
    )
