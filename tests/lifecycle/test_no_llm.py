"""Without a model, a first-class lifecycle (issue 23, point 5): the rolling summary is the
salient sentences, shorter than what it covers and within summary_max_tokens; the first
consolidation writes MEMORY.md from the user's first-person statements and an extractive
history entry; a reset still keeps every message whole. The API says `fallback` with reason
`not_configured` for these runs (the review pages show them as "extractive")."""

from datetime import timedelta

import pytest

from apps.entries.models import Entry
from apps.lifecycle.models import HistoryEntry, Run
from apps.providers.token_counts import count_tokens
from tests.lifecycle.helpers import T0, add

pytestmark = pytest.mark.django_db

CHAT = [
    "Hi there.",
    "Hello! How can I help you today?",
    "I moved to Berlin in March and I work as a nurse at the Charité hospital.",
    "Berlin is a great city. Working as a nurse at a big hospital must be demanding.",
    "ok thanks",
    "You're welcome.",
    "We decided that the garden party will be on Saturday the 14th.",
    "Noted: the garden party is on Saturday the 14th. Shall I remind you on Friday?",
    "ok thanks",
    "Anything else?",
]


def _settings(agent, **extra):
    agent.settings = {"max_history_messages": 2, **extra}
    agent.save()


def test_the_summary_is_the_salient_sentences_shorter_than_what_it_covers(api, agent, session):
    _settings(agent)
    add(session, *CHAT, role=None)

    body = api.post(f"/sessions/{session.id}/summarize").json()

    covered = CHAT[:8]  # the newest 2 stay in the window
    assert body["summary"].splitlines() == [
        "- [2026-01-05 09:02] user: I moved to Berlin in March and I work as a nurse at the"
        " Charité hospital.",
        "- [2026-01-05 09:03] assistant: Berlin is a great city.",
        "- [2026-01-05 09:06] user: We decided that the garden party will be on Saturday the 14th.",
    ]
    assert len(body["summary"]) < len("".join(covered))
    assert count_tokens(body["summary"]) <= 1024
    assert "ok thanks" not in body["summary"]
    [run] = body["runs"]
    assert (run["status"], run["reason"], run["message_count"]) == ("fallback", "not_configured", 8)


def test_the_rolling_summary_merges_old_and_new_within_summary_max_tokens(api, agent, session):
    _settings(agent, summary_max_tokens=60)
    add(session, *CHAT[:4], role=None)
    api.post(f"/sessions/{session.id}/summarize")
    add(session, *CHAT[4:], role=None, start=T0 + timedelta(hours=1))

    summary = api.post(f"/sessions/{session.id}/summarize").json()["summary"]

    # the old line and the new decision fit in 60 tokens; less salient lines of both went
    assert summary.splitlines() == [
        "- [2026-01-05 09:02] user: I moved to Berlin in March and I work as a nurse at the"
        " Charité hospital.",
        "- [2026-01-05 10:02] user: We decided that the garden party will be on Saturday the 14th.",
    ]
    assert count_tokens(summary) <= 60


def test_the_first_consolidation_writes_memory_md_and_an_extractive_entry(api, agent, session):
    add(session, *CHAT, role=None)

    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert (run["status"], run["reason"]) == ("fallback", "not_configured")
    assert run["details"]["memory"] == "updated"
    assert api.get("/entries/MEMORY.md").json()["content"] == (
        "# Memory\n\n- I moved to Berlin in March and I work as a nurse at the Charité hospital.\n"
    )
    [entry] = HistoryEntry.objects.filter(agent=agent)
    # a fallback kind: the messages stay `raw-fallback`, so a reset still archives them whole
    assert (entry.kind, entry.content.splitlines()) == (
        "raw-fallback",
        [
            "[extractive] [2026-01-05 09:09] 10 messages, the salient sentences:",
            "- [2026-01-05 09:02] user: I moved to Berlin in March and I work as a nurse at the"
            " Charité hospital.",
            "- [2026-01-05 09:03] assistant: Berlin is a great city.",
            "- [2026-01-05 09:06] user: We decided that the garden party will be on Saturday"
            " the 14th.",
        ],
    )


def test_memory_md_lines_are_deduplicated_and_stay_under_max_memory_bytes(api, agent, session):
    api.post(
        "/entries", {"name": "MEMORY.md", "content": "# Memory\n\n- I moved to Berlin in March.\n"}
    )
    agent.settings = {"max_memory_bytes": 120}
    agent.save()
    add(
        session,
        "i moved  to Berlin in March.",
        "Nice.",
        "My sister is called Anna and she lives in Rome.",
        "Noted.",
        "I prefer tea to coffee in the morning.",
        "Noted.",
        role=None,
    )

    api.post(f"/sessions/{session.id}/consolidate")

    memory = api.get("/entries/MEMORY.md").json()["content"]
    # the restated fact is not repeated; the third fact would pass 120 bytes
    assert memory == (
        "# Memory\n\n- I moved to Berlin in March.\n"
        "- My sister is called Anna and she lives in Rome.\n"
    )
    assert len(memory.encode()) <= 120


def test_a_reset_after_an_extractive_consolidation_keeps_every_message(api, agent, session):
    agent.settings = {"reset_archive": "fallback"}
    agent.save()
    add(session, *CHAT, role=None)
    api.post(f"/sessions/{session.id}/consolidate")

    body = api.post(f"/sessions/{session.id}/reset").json()

    archive = Entry.objects.get(name=body["archive"]).content
    assert [text for text in CHAT if f"\n\n{text}\n" not in archive] == []
    assert Run.objects.filter(kind="consolidate", reason="not_configured").count() == 1
