"""Seed 004's consolidation against every kind of answer, over real HTTP to the loopback
model: each answer's exact effect on history, MEMORY.md, the messages and the run log."""

import json

import pytest

from apps.conversations.models import Message
from apps.entries.models import Entry, EntryChange
from apps.lifecycle.models import HistoryEntry, Run
from tests.lifecycle.helpers import TEA_MEMORY, tea_conversation, use_llm
from tests.support.llm_server import Completion, Delay, Drop, Status, unused_port_url

pytestmark = pytest.mark.django_db

MEMORY = TEA_MEMORY
UPDATE = "# Memory\n- likes green tea\n- cat: Whiskerino"
HISTORY = "[2026-01-05 09:00] The user switched to green tea and named the cat."
CLEAN = json.dumps({"history_entry": HISTORY, "memory_update": UPDATE})
RAW = (
    "[raw-fallback] [2026-01-05 09:02] 3 messages:\n"
    "- [2026-01-05 09:00] user: I switched to green tea.\n"
    "- [2026-01-05 09:01] assistant: Noted: green tea from now on.\n"
    "- [2026-01-05 09:02] user: Also, my cat is called Whiskerino."
)

ANSWERS = {
    "clean JSON": (Completion(CLEAN), "ok", "", 1),
    "fenced JSON": (Completion(f"```json\n{CLEAN}\n```"), "ok", "", 1),
    "JSON inside prose": (Completion(f"Sure! Here it is:\n{CLEAN}\nAnything else?"), "ok", "", 2),
    "broken JSON, tier 3": (
        Completion(
            '{"history_entry": "'
            + HISTORY
            + '", "memory_update": "'
            + UPDATE.replace("\n", "\\n")
            + '", "extra": [1, 2'
        ),
        "ok",
        "",
        3,
    ),
    "garbage": (Completion("I am sorry, I cannot do that."), "fallback", "unparseable", None),
    "HTTP 500": (Status(500, "upstream exploded"), "fallback", "error", None),
    "slower than the timeout": (Delay(5, then=Completion(CLEAN)), "fallback", "timeout", None),
}


def _given(agent, session, settings, url):
    use_llm(settings, url)
    agent.settings = {"consolidation_timeout_seconds": 1}
    agent.save()
    return tea_conversation(agent, session)


@pytest.mark.parametrize("answer", list(ANSWERS))
def test_consolidation_answer(api, agent, session, settings, llm_server, answer):
    item, status, reason, tier = ANSWERS[answer]
    rows = _given(agent, session, settings, llm_server)
    llm_server.script(item)

    response = api.post(f"/sessions/{session.id}/consolidate")

    assert response.status_code == 200
    [run] = response.json()["runs"]
    ok = status == "ok"
    history = HistoryEntry.objects.get(agent=agent)
    assert (history.kind, history.content) == ("ok", HISTORY) if ok else ("raw-fallback", RAW)
    assert (history.session_id, history.session_key, history.run_id) == (
        session.id,
        "chat-1",
        run["id"],
    )
    memory = Entry.objects.get(agent=agent, name="MEMORY.md")
    assert memory.content == (UPDATE + "\n" if ok else MEMORY)
    writes = EntryChange.objects.filter(action="write")
    assert list(writes.values_list("changed_by", "previous_content")) == (
        [("consolidation", MEMORY)] if ok else []
    )
    consolidated = set(Message.objects.values_list("consolidation", flat=True))
    assert consolidated == {"ok" if ok else "raw-fallback"}
    assert Message.objects.filter(consolidated_at=history.created_at).count() == 3
    assert (run["kind"], run["trigger"], run["status"], run["reason"], run["parse_tier"]) == (
        "consolidate",
        "api",
        status,
        reason,
        tier,
    )
    assert (run["first_message_id"], run["last_message_id"], run["message_count"]) == (
        str(rows[0].id),
        str(rows[2].id),
        3,
    )
    assert run["details"] == {
        "history_entry_id": history.pk,
        "memory": "updated" if ok else "unchanged",
        "corrections": 0,
        "applied": ["history_entry", "memory_update"] if ok else [],
    }
    if ok:
        assert (run["model"], run["input_tokens"], run["output_tokens"]) == ("test-model", 11, 7)
    stored = Run.objects.get(pk=run["id"])
    assert len(stored.idempotency_key) == 64
    if answer == "HTTP 500":
        assert run["error"].startswith("HTTP 500 from http://127.0.0.1:")
        assert run["error"].endswith("/v1/chat/completions: upstream exploded")
    if answer == "slower than the timeout":
        assert run["error"] == "no answer within 1 s"
    if answer == "garbage":
        assert stored.output == "I am sorry, I cannot do that."
    [request] = llm_server.chats
    text = request.body["messages"][-1]["content"]
    assert "## Current Long-term Memory\n# Memory\n- likes black tea\n" in text
    assert "[2026-01-05 09:02] user: Also, my cat is called Whiskerino." in text
    assert "compress it" not in text


@pytest.mark.parametrize("answer", ["connection refused", "dropped connection"])
def test_an_unreachable_model_falls_back(api, agent, session, settings, llm_server, answer):
    url = unused_port_url() if answer == "connection refused" else llm_server.url
    llm_server.script(Drop())
    _given(agent, session, settings, url)

    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert (run["status"], run["reason"]) == ("fallback", "error")
    assert HistoryEntry.objects.get(agent=agent).content == RAW
    assert Entry.objects.get(agent=agent, name="MEMORY.md").content == MEMORY


def test_memory_over_max_memory_bytes_asks_for_compression(
    api, agent, session, settings, llm_server
):
    _given(agent, session, settings, llm_server)
    agent.settings = {"max_memory_bytes": 20}
    agent.save()
    llm_server.script(Completion(CLEAN))

    api.post(f"/sessions/{session.id}/consolidate")

    text = llm_server.chats[0].body["messages"][-1]["content"]
    assert "The long-term memory is over 20 bytes: compress it, and prune stale or" in text


@pytest.mark.django_db(transaction=True)
def test_a_memory_md_written_during_the_call_is_not_overwritten(
    api, agent, session, settings, llm_server
):
    from tests.support.llm_server import Reply

    _given(agent, session, settings, llm_server)

    def agent_writes_meanwhile(body):
        from django.db import connection

        Entry.objects.filter(agent=agent, name="MEMORY.md").update(content="# Mine\n")
        connection.close()  # the server thread's own connection
        return Completion(CLEAN)

    llm_server.script(Reply(agent_writes_meanwhile))

    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert (run["status"], run["details"]["memory"]) == ("ok", "conflict")
    assert Entry.objects.get(agent=agent, name="MEMORY.md").content == "# Mine\n"
    assert HistoryEntry.objects.get(agent=agent).content == HISTORY
    assert Run.objects.get(pk=run["id"]).output == CLEAN
