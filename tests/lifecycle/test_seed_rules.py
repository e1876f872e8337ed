"""Seed rules the seed table (docs/lifecycle.md) listed as missing or only partly proved:
seed 000's error memory across reset and removal, and seed 004's consolidation at its exact
numbers (memoryWindow 50, 200 characters and 10 messages per [raw-fallback] entry, the
prompt's "(empty)"), memoryUpdate written only if changed, HISTORY kept out of the context,
and the session's created_at kept through every lifecycle step. LLM answers come from the
loopback server over real HTTP."""

import json
from datetime import UTC, datetime, timedelta

import pytest

from apps.conversations.models import Message, Session
from apps.entries.models import Entry, EntryChange
from apps.entries.services import entry_add
from apps.learnings.models import ErrorRecord
from apps.lifecycle.models import HistoryEntry, Run
from tests.factories import SessionFactory
from tests.lifecycle.helpers import T0, add, faithful, use_llm
from tests.support.llm_server import Completion, Reply, Status

pytestmark = pytest.mark.django_db

MEMORY = "# Memory\n- likes black tea\n"
HISTORY = "[2026-01-05 09:02] The user talked about tea."
ERROR = "rejected: non-fast-forward"


def _consolidate(api, session) -> list[dict]:
    response = api.post(f"/sessions/{session.id}/consolidate")
    assert response.status_code == 200, response.content
    return response.json()["runs"]


def _answer(history: str, memory_update: str) -> Completion:
    return Completion(json.dumps({"history_entry": history, "memory_update": memory_update}))


# --- seed 000: error memory is cross-session ----------------------------------------------
def _fail(api, session_ref):
    body = {"messages": [{"role": "tool", "tool_name": "git_push", "content": ERROR,
                          "is_error": True}]}  # fmt: skip
    response = api.post(f"/sessions/{session_ref}/messages", body)
    assert response.status_code == 201, response.content
    return response.json()


def test_error_memory_survives_the_reset_and_the_removal_of_its_session(api, agent, session):
    _fail(api, session.id)  # captured: an open record of session A
    record = ErrorRecord.objects.get(agent=agent)
    assert record.session_id == session.id
    patched = api.patch(
        f"/errors/{record.pk}", {"outcome": "resolved", "resolution": "pull --rebase then push"}
    )
    assert patched.status_code == 200

    reset = api.post(f"/sessions/{session.id}/reset")

    assert reset.status_code == 200
    # the failure and the call recorded for it (it was appended without one)
    assert reset.json()["deleted_messages"] == 2
    assert api.get(f"/errors/{record.pk}").json()["session_id"] == str(session.id)

    removed = api.delete(f"/sessions/{session.id}")

    assert removed.status_code == 204
    assert not Session.objects.filter(pk=session.pk).exists()
    stored = ErrorRecord.objects.get(pk=record.pk)
    assert (stored.session_id, stored.tool_name, stored.error, stored.outcome) == (
        None,
        "git_push",
        ERROR,
        "resolved",
    )
    read = api.get(f"/errors/{record.pk}").json()
    assert (read["session_id"], read["resolution"]) == (None, "pull --rebase then push")
    assert [r["id"] for r in api.get("/errors").json()["items"]] == [record.pk]
    found = api.post("/errors/search", {"query": "non-fast-forward", "k": 5}).json()["items"]
    assert [(h["record"]["id"], h["record"]["session_id"]) for h in found] == [(record.pk, None)]

    # the same tool failing in another session is hinted the resolution of session A
    other = api.post("/sessions", {"key": "chat-2"}).json()["id"]
    hints = _fail(api, other)["hints"]
    assert [(h["error_id"], h["rule"], h["text"]) for h in hints] == [
        (record.pk, "apply", "apply: pull --rebase then push")
    ]
    assert ErrorRecord.objects.filter(agent=agent).count() == 1


# --- seed 004: memoryWindow 50 ------------------------------------------------------------
def _append(api, session, n, start=0):
    body = {"messages": [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"}
                         for i in range(start, start + n)]}  # fmt: skip
    response = api.post(f"/sessions/{session.id}/messages", body)
    assert response.status_code == 201, response.content
    return response.json()


@pytest.mark.parametrize("window", [50, 5])
def test_memory_window_messages_trigger_nothing_and_one_more_consolidates(
    api, agent, session, django_capture_on_commit_callbacks, window
):
    if window != 50:
        agent.settings = {"memory_window": window, "consolidation_keep": 2}
        agent.save()
    keep = 25 if window == 50 else 2

    with django_capture_on_commit_callbacks(execute=True):
        at_window = _append(api, session, window)

    assert "consolidate" not in at_window["lifecycle"]
    assert Run.objects.filter(kind="consolidate").count() == 0
    assert HistoryEntry.objects.count() == 0
    assert Message.objects.filter(session=session, consolidated_at__isnull=True).count() == window

    with django_capture_on_commit_callbacks(execute=True):
        past_window = _append(api, session, 1, start=window)

    assert "consolidate" in past_window["lifecycle"]
    [run] = Run.objects.filter(kind="consolidate")
    assert (run.trigger, run.message_count) == ("auto", window + 1 - keep)
    assert HistoryEntry.objects.count() == 1
    assert Message.objects.filter(session=session, consolidated_at__isnull=True).count() == keep


# --- seed 004: the consolidation prompt ---------------------------------------------------
@pytest.mark.parametrize("memory", [None, "", "  \n"])
def test_the_prompt_carries_empty_memory_and_asks_for_history_entry_and_memory_update(
    api, agent, session, settings, llm_server, memory
):
    use_llm(settings, llm_server)
    if memory is not None:
        entry_add(agent=agent, name="MEMORY.md", content=memory)
    add(session, "I switched to green tea.", "Noted.", role=None)
    llm_server.script(_answer(HISTORY, "# Memory\n- likes green tea"))

    [run] = _consolidate(api, session)

    assert run["status"] == "ok"
    [request] = llm_server.chats
    text = request.body["messages"][-1]["content"]
    assert text.startswith("You are a memory consolidation agent. Return JSON with:\n")
    assert '  "history_entry": summary paragraph with [YYYY-MM-DD HH:MM] timestamp\n' in text
    assert '  "memory_update": updated long-term memory content\n' in text
    assert "## Current Long-term Memory\n(empty)\n" in text
    assert (
        "## Conversation to Process\n"
        "[2026-01-05 09:00] user: I switched to green tea.\n"
        "[2026-01-05 09:01] assistant: Noted.\n"
    ) in text


# --- seed 004: memoryUpdate is written only if it changed -----------------------------------
@pytest.mark.parametrize(
    "update",
    [MEMORY, MEMORY.strip(), "\n\n" + MEMORY + "\n  "],
    ids=["same", "no-newline", "padded"],
)
def test_a_memory_update_equal_to_memory_md_writes_nothing(
    api, agent, session, settings, llm_server, update
):
    use_llm(settings, llm_server)
    entry_add(agent=agent, name="MEMORY.md", content=MEMORY)
    before = Entry.objects.get(agent=agent, name="MEMORY.md")
    changes = list(EntryChange.objects.order_by("id").values_list("id", "action", "changed_by"))
    add(session, "I still drink black tea.", "Noted.", role=None)
    llm_server.script(_answer(HISTORY, update))

    [run] = _consolidate(api, session)

    assert run["status"] == "ok"
    assert (run["details"]["memory"], run["details"]["applied"]) == (
        "unchanged",
        ["history_entry"],
    )
    after = Entry.objects.get(agent=agent, name="MEMORY.md")
    assert (after.content, after.updated_at, after.token_count) == (
        MEMORY,
        before.updated_at,
        before.token_count,
    )
    assert (
        list(EntryChange.objects.order_by("id").values_list("id", "action", "changed_by"))
        == changes
    )
    assert HistoryEntry.objects.get(agent=agent).content == HISTORY


# --- seed 004: [raw-fallback]: the last 10 messages, each cut to 200 characters -------------
TEXTS = [
    "m00 " + "a" * 496,  # 500 characters, but older than the last 10: not in the entry
    "m01 short",
    "m02 " + "b" * 496,  # 500 -> 199 + "…"
    "m03 " + "c" * 196,  # exactly 200: whole
    "m04 " + "d" * 197,  # 201 -> 199 + "…"
    "m05  folded \n\n  white\tspace",
    "m06 " + "é" * 296,  # characters, not bytes
    "m07 ok",
    "m08 " + "e" * 300,
    "m09 fine",
    "m10 " + "f" * 1000,
    "m11 the newest",
]


def _line(i: int, text: str) -> str:
    role = "user" if i % 2 == 0 else "assistant"
    return f"- [2026-01-05 09:{i:02d}] {role}: {text}"


def test_a_raw_fallback_entry_has_the_last_10_messages_each_cut_to_200_characters(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    add(session, *TEXTS, role=None)
    llm_server.script(Status(500, "upstream exploded"))

    [run] = _consolidate(api, session)

    assert (run["status"], run["reason"], run["message_count"]) == ("fallback", "error", 12)
    entry = HistoryEntry.objects.get(agent=agent)
    assert entry.kind == "raw-fallback"
    assert entry.content == "\n".join(
        [
            "[raw-fallback] [2026-01-05 09:11] 12 messages, the last 10:",
            _line(2, "m02 " + "b" * 195 + "…"),
            _line(3, "m03 " + "c" * 196),
            _line(4, "m04 " + "d" * 195 + "…"),
            _line(5, "m05 folded white space"),
            _line(6, "m06 " + "é" * 195 + "…"),
            _line(7, "m07 ok"),
            _line(8, "m08 " + "e" * 195 + "…"),
            _line(9, "m09 fine"),
            _line(10, "m10 " + "f" * 195 + "…"),
            _line(11, "m11 the newest"),
        ]
    )
    texts = [line.split(": ", 1)[1] for line in entry.content.splitlines()[1:]]
    assert max(len(t) for t in texts) == 200
    assert Message.objects.filter(session=session, consolidation="raw-fallback").count() == 12


def test_raw_fallback_size_and_count_are_per_agent_settings(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    agent.settings = {"raw_fallback_chars": 10, "raw_fallback_messages": 3}
    agent.save()
    add(session, *TEXTS, role=None)
    llm_server.script(Status(500, "upstream exploded"))

    _consolidate(api, session)

    assert HistoryEntry.objects.get(agent=agent).content == "\n".join(
        [
            "[raw-fallback] [2026-01-05 09:11] 12 messages, the last 3:",
            _line(9, "m09 fine"),
            _line(10, "m10 fffff…"),
            _line(11, "m11 the n…"),
        ]
    )


# --- seed 004: HISTORY is never loaded into the context -----------------------------------
MARK = "Zanzibar quokka expedition"


def test_history_is_never_in_the_context_but_is_found_on_demand(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    add(session, "Let us plan the trip.", "Sure, where to?", "Somewhere warm.", role=None)
    history = f"[2026-01-05 09:02] The user planned the {MARK} with the assistant."
    llm_server.script(_answer(history, "# Memory\n- plans a trip somewhere warm"))
    [run] = _consolidate(api, session)
    assert (run["status"], HistoryEntry.objects.get(agent=agent).content) == ("ok", history)
    found = api.get("/memory/history", {"q": "zanzibar QUOKKA"}).json()["items"]
    assert [h["content"] for h in found] == [history]

    for query in (None, MARK, history):
        body = api.post(
            "/context", {"session_id": str(session.id), "query": query, "lifecycle": "off"}
        ).json()

        parts = body["system"]["parts"]
        assert ("document", "MEMORY.md") in [(p["kind"], p["name"]) for p in parts]
        assert [p for p in parts if "history" in p["kind"].lower()] == []
        assert [p["name"] for p in parts if "Zanzibar" in p["content"]] == []
        assert [m["id"] for m in body["messages"] if "Zanzibar" in m["content"]] == []
        assert [f["id"] for f in body["system"]["facts"] if "Zanzibar" in f["value"]] == []
        assert [d for d in body["dropped"] if "history" in d["kind"]] == []


# --- seed 004: the session's createdAt survives every lifecycle step ----------------------
CREATED = datetime(2025, 12, 1, 8, 30, 15, 123456, tzinfo=UTC)
TALK = ["Hi there.", "Hello! How can I help?", "My cat is called Whiskerino.", "What a name!",
        "My sister lives in Lyon.", "Noted.", "What time is it?", "Noon.", "Thanks.",
        "Anytime."]  # fmt: skip


def test_the_sessions_created_at_is_kept_through_compaction_consolidation_and_reset(
    api, agent, settings, llm_server
):
    use_llm(settings, llm_server)
    llm_server.script(Reply(faithful, repeat=True))
    session = SessionFactory(agent=agent, key="old-chat", created_at=CREATED)
    api_created = "2025-12-01T08:30:15.123456Z"

    def created_at_kept(step: str) -> None:
        stored = Session.objects.get(pk=session.pk).created_at
        shown = api.get(f"/sessions/{session.id}").json()["created_at"]
        assert (stored, shown) == (CREATED, api_created), f"created_at changed by {step}"

    created_at_kept("creation")
    add(session, *TALK, role=None, start=T0)
    created_at_kept("append")

    compacted = api.post(f"/sessions/{session.id}/compact").json()["runs"]
    assert ("compact", "ok") in [(r["kind"], r["status"]) for r in compacted]
    created_at_kept("compaction")

    add(session, *TALK, role=None, start=T0 + timedelta(hours=1))
    consolidated = _consolidate(api, session)
    assert {(r["kind"], r["status"]) for r in consolidated} == {("consolidate", "ok")}
    created_at_kept("consolidation")

    add(session, *TALK, role=None, start=T0 + timedelta(hours=2))
    required = api.post("/context", {"session_id": str(session.id), "lifecycle": "off"}).json()[
        "usage"
    ]["usage_tokens"]
    agent.settings = {"context_window_tokens": int(required / 0.75)}
    agent.save()
    usage = api.post("/context", {"session_id": str(session.id), "lifecycle": "wait"}).json()[
        "usage"
    ]
    assert (usage["action"], usage["action_status"]) == ("compact", "done")
    assert ("compact", "ok") in [(r["kind"], r["status"]) for r in usage["runs"]]
    created_at_kept("write-then-compact")

    reset = api.post(f"/sessions/{session.id}/reset")
    assert reset.status_code == 200
    assert reset.json()["deleted_messages"] == 30
    assert reset.json()["session"]["created_at"] == api_created
    created_at_kept("reset")
