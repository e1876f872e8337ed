"""Seed 001's context manager: a flush at 60% usage, write-then-compact at 70%, reported by
get_context, run now ("wait") or in the background."""

import json

import pytest

from apps.conversations.models import CompactMarker, SessionMeta, Summary
from apps.entries.models import Entry
from apps.facts.models import Fact
from apps.lifecycle.models import Run
from tests.lifecycle.helpers import add, faithful, use_llm
from tests.support.llm_server import Completion, Reply

pytestmark = pytest.mark.django_db

TALK = [
    "Hi there.",
    "Hello! How can I help?",
    "My cat is called Whiskerino.",
    "What a name!",
    "My sister lives in Lyon.",
    "Noted.",
    "What time is it?",
    "Noon.",
    "Thanks.",
    "Anytime.",
]


def _context(api, session, **extra):
    return api.post("/context", {"session_id": str(session.id), **extra}).json()


def _window(agent, tokens):
    agent.settings = {"context_window_tokens": tokens}
    agent.save()


def test_flush_stores_the_facts_of_the_oldest_window_messages(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    rows = add(session, *TALK, role=None)
    llm_server.script(
        Completion(
            json.dumps(
                {
                    "facts": [
                        {
                            "content": "The user's cat is called Whiskerino",
                            "category": "pets",
                            "importance": 0.8,
                        },
                        {"content": "The user's sister lives in Lyon"},
                    ]
                }
            )
        )
    )

    [run] = api.post(f"/sessions/{session.id}/flush").json()["runs"]

    assert (run["kind"], run["status"], run["parse_tier"], run["message_count"]) == (
        "flush",
        "ok",
        1,
        6,
    )  # the newest compact_keep_last (4) stay out
    facts = list(Fact.objects.filter(agent=agent).order_by("id"))
    assert [(f.category.name, f.value, f.source, f.importance) for f in facts] == [
        ("pets", "The user's cat is called Whiskerino", "agent", 0.8),
        ("general", "The user's sister lives in Lyon", "agent", 0.5),
    ]
    assert sorted(Run.objects.get(pk=run["id"]).facts.values_list("pk", flat=True)) == [
        f.pk for f in facts
    ]
    assert run["details"] == {"facts": [f.pk for f in facts], "memory": "updated"}
    assert Entry.objects.get(agent=agent, name="MEMORY.md").content == (
        "# Memory\n\n- The user's cat is called Whiskerino\n- The user's sister lives in Lyon\n"
    )
    meta = SessionMeta.objects.get(session=session)
    assert (meta.flush_cursor, meta.flush_cursor_id) == (rows[5].created_at, rows[5].id)
    again = api.post(f"/sessions/{session.id}/flush").json()["runs"]
    assert [(r["status"], r["reason"]) for r in again] == [("skipped", "nothing_to_do")]
    assert Fact.objects.count() == 2


def test_a_flushed_fact_saved_twice_is_deduplicated_not_doubled(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    add(session, *TALK, role=None)
    api.post("/memory/save", {"content": "The user's cat is called Whiskerino"})
    llm_server.script(Completion('{"facts": ["The user\'s cat is called Whiskerino"]}'))

    api.post(f"/sessions/{session.id}/flush")

    assert Fact.objects.get().access_count == 1  # reinforced by the flush
    assert Entry.objects.get(name="MEMORY.md").content.count("Whiskerino") == 1


def test_flush_without_an_llm_keeps_the_users_first_person_statements(api, agent, session):
    add(session, *TALK, role=None)

    [run] = api.post(f"/sessions/{session.id}/flush").json()["runs"]

    assert (run["status"], run["reason"]) == ("fallback", "not_configured")
    assert list(Fact.objects.values_list("value", flat=True)) == [
        "My cat is called Whiskerino.",
        "My sister lives in Lyon.",
    ]


def test_a_broken_facts_answer_is_read_by_tier_3(api, agent, session, settings, llm_server):
    use_llm(settings, llm_server)
    add(session, *TALK, role=None)
    llm_server.script('{"facts": [{"content": "Cat: Whiskerino"}, {"content": "Sister in Ly')

    [run] = api.post(f"/sessions/{session.id}/flush").json()["runs"]

    assert (run["status"], run["parse_tier"]) == ("ok", 3)
    assert list(Fact.objects.values_list("value", flat=True)) == ["Cat: Whiskerino"]


def test_get_context_at_60_percent_flushes_and_says_so(api, agent, session, settings, llm_server):
    use_llm(settings, llm_server)
    add(session, *TALK, role=None)
    required = _context(api, session, lifecycle="off")["usage"]["required_tokens"]
    _window(agent, int(required / 0.65))  # 65%: flush, not compact
    llm_server.script(Reply(faithful))

    usage = _context(api, session, lifecycle="wait")["usage"]

    assert (usage["action"], usage["action_status"]) == ("flush", "done")
    assert [(r["kind"], r["trigger"], r["status"]) for r in usage["runs"]] == [
        ("flush", "context", "ok")
    ]
    assert list(Fact.objects.values_list("value", flat=True)) == [
        "My cat is called Whiskerino.",
        "My sister lives in Lyon.",
    ]
    assert not CompactMarker.objects.exists()


@pytest.mark.django_db(transaction=True)  # commits for real: the window cache follows them
def test_get_context_at_70_percent_writes_then_compacts(api, agent, session, settings, llm_server):
    use_llm(settings, llm_server)
    rows = add(session, *TALK, role=None)
    required = _context(api, session, lifecycle="off")["usage"]["required_tokens"]
    _window(agent, int(required / 0.75))
    llm_server.script(Reply(faithful, repeat=True))

    body = _context(api, session, lifecycle="wait")
    usage = body["usage"]

    assert (usage["action"], usage["action_status"]) == ("compact", "done")
    assert [(r["kind"], r["status"]) for r in usage["runs"]] == [
        ("extract", "ok"),
        ("compact", "ok"),
        ("summary", "ok"),
    ]
    # 1. facts extracted and stored, 2. in MEMORY.md too
    assert Fact.objects.count() == 2
    assert "- My cat is called Whiskerino." in Entry.objects.get(name="MEMORY.md").content
    # 4. the window is the summary plus the last compact_keep_last (4) messages
    assert SessionMeta.objects.get(session=session).start_at == rows[6].created_at
    window = api.get(f"/sessions/{session.id}/window").json()
    assert [m["content"] for m in window["messages"]] == TALK[6:]
    assert "user: My cat is called Whiskerino." in Summary.objects.get(session=session).content
    # 3. the re-assembled context carries the summary and only the last four messages
    assert [p["kind"] for p in body["system"]["parts"]] == ["document", "summary"]
    assert [m["content"] for m in body["messages"]] == TALK[6:]


def test_in_the_background_the_action_is_queued_once(
    api, agent, session, django_capture_on_commit_callbacks
):
    add(session, *TALK, role=None)
    _window(agent, 10)

    with django_capture_on_commit_callbacks() as queued:
        first = _context(api, session)["usage"]
        second = _context(api, session)["usage"]
    assert Run.objects.count() == 0
    for task in queued:
        task()

    assert (first["action"], first["action_status"], first["runs"]) == ("compact", "queued", [])
    assert second["action_status"] == "already_queued"
    assert len(queued) == 1
    # the eager task ran the write-then-compact without an LLM
    assert list(Run.objects.order_by("id").values_list("kind", "trigger", "status")) == [
        ("extract", "context", "fallback"),
        ("compact", "context", "fallback"),
        ("summary", "context", "fallback"),
    ]


def test_an_importance_out_of_range_keeps_the_fact_at_the_default(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    add(session, *TALK, role=None)
    llm_server.script(
        Completion(
            json.dumps(
                {
                    "facts": [
                        {"content": "The user's cat is called Whiskerino", "importance": 7},
                        {"content": "The user's sister lives in Lyon", "importance": True},
                    ]
                }
            )
        )
    )

    api.post(f"/sessions/{session.id}/flush")

    assert sorted(Fact.objects.values_list("value", "importance")) == [
        ("The user's cat is called Whiskerino", 0.5),
        ("The user's sister lives in Lyon", 0.5),
    ]
