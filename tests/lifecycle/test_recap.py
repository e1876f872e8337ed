"""Issue 22, seed 004: after a consolidation, /window and get_context carry a recap of the
messages it left that they do not carry in full (docs/lifecycle.md, "Recap")."""

from datetime import UTC, datetime, timedelta

import pytest

from apps.lifecycle.models import Run
from tests.lifecycle.helpers import faithful, use_llm
from tests.support.llm_server import Reply

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
SETTINGS = {
    "max_history_messages": 2,
    "memory_window": 6,  # more than 6 unconsolidated messages: auto-consolidation
    "consolidation_keep": 4,
    "recency_limit": 1,
    "recap_message_chars": 20,
}
HEAD = "Recap of the conversation since the last consolidation, before the messages shown"


def _append(api, session, first, last):
    body = {"messages": [
        {"role": "user" if i % 2 == 0 else "assistant",
         "content": f"message {i} about  the\ngarden",
         "created_at": (T0 + timedelta(minutes=i)).isoformat()}
        for i in range(first, last)
    ]}  # fmt: skip
    response = api.post(f"/sessions/{session.id}/messages", body)
    assert response.status_code == 201
    return response.json()["lifecycle"]


def _window(api, session):
    return api.get(f"/sessions/{session.id}/window").json()


def _context_parts(api, session):
    body = api.post("/context", {"session_id": str(session.id), "lifecycle": "off"}).json()
    return [(p["kind"], p["content"]) for p in body["system"]["parts"]]


@pytest.fixture
def consolidated(api, agent, session, settings, llm_server, django_capture_on_commit_callbacks):
    """Eight messages; the append sets off the summary and the auto-consolidation."""
    use_llm(settings, llm_server)
    llm_server.script(Reply(faithful, repeat=True))
    agent.settings = SETTINGS
    agent.save()
    with django_capture_on_commit_callbacks(execute=True):
        assert _append(api, session, 0, 8) == ["summary", "consolidate"]
    return session


def test_after_an_auto_consolidation_the_window_carries_a_recap(api, consolidated):
    window = _window(api, consolidated)

    runs = Run.objects.filter(kind="consolidate").values_list("trigger", "status", "message_count")
    assert list(runs) == [("auto", "ok", 4)]  # messages 0-3 consolidated, 4-7 remain
    assert [m["content"][:9] for m in window["messages"]] == ["message 6", "message 7"]
    assert window["recap"] == (
        f"{HEAD}:\n"
        "[2026-01-05 09:04] user: message 4 about the…\n"
        "[2026-01-05 09:05] assistant: message 5 about the…"
    )
    # nothing trimmed: every message is still there
    assert len(api.get(f"/sessions/{consolidated.id}/messages").json()["items"]) == 8


def test_get_context_has_a_recap_part_of_what_its_recency_leg_does_not_carry(api, consolidated):
    parts = _context_parts(api, consolidated)

    assert [kind for kind, _ in parts] == ["document", "summary", "recap"]  # MEMORY.md
    assert parts[2][1] == (
        f"{HEAD}:\n"
        "[2026-01-05 09:04] user: message 4 about the…\n"
        "[2026-01-05 09:05] assistant: message 5 about the…\n"
        "[2026-01-05 09:06] user: message 6 about the…"
    )


def test_the_recap_keeps_its_newest_messages_within_recap_messages(api, agent, consolidated):
    agent.settings = {**SETTINGS, "recap_messages": 2, "recap_message_chars": 11}
    agent.save()

    [(_, recap)] = [p for p in _context_parts(api, consolidated) if p[0] == "recap"]

    assert recap == (
        f"{HEAD} (the last 2 of 3):\n"
        "[2026-01-05 09:05] assistant: message 5…\n"
        "[2026-01-05 09:06] user: message 6…"
    )


def test_no_recap_before_any_consolidation(api, agent, session):
    agent.settings = SETTINGS
    agent.save()
    _append(api, session, 0, 6)  # not over memory_window

    assert _window(api, session)["recap"] is None
    assert "recap" not in [kind for kind, _ in _context_parts(api, session)]


def test_recap_messages_zero_turns_it_off(api, agent, consolidated):
    agent.settings = {**SETTINGS, "recap_messages": 0}
    agent.save()

    assert _window(api, consolidated)["recap"] is None
    assert "recap" not in [kind for kind, _ in _context_parts(api, consolidated)]
