"""Issue 23: each lifecycle call asks for a JSON Schema'd answer, bounded by max_tokens, and
its run records the structured-output mode, any mode the server refused, and truncation."""

import json

import pytest

from apps.lifecycle.models import HistoryEntry, Run
from tests.lifecycle.helpers import add, use_llm
from tests.support.llm_server import Completion

pytestmark = pytest.mark.django_db

HISTORY = "[2026-01-05 09:00] The user switched to green tea."
CLEAN = json.dumps({"history_entry": HISTORY, "memory_update": "# Memory\n- green tea"})


def formats(server) -> list:
    return [(r.body.get("response_format") or {}).get("type") for r in server.chats]


def test_a_server_rejecting_json_schema_gets_json_object_and_the_run_log_says_so(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    llm_server.reject_formats("json_schema")
    llm_server.script(Completion(CLEAN), Completion(CLEAN))

    add(session, "I switched to green tea.", "Noted.", role=None)
    first = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]
    add(
        session,
        "And I adopted a cat.",
        "Lovely.",
        role=None,
        start=HistoryEntry.objects.get().created_at,
    )
    second = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert formats(llm_server) == ["json_schema", "json_object", "json_object"]
    assert [c.body["response_format"].get("schema") is not None for c in llm_server.chats] == [
        False,
        True,
        True,
    ]
    assert [(r["status"], r["structured_mode"], r["truncated"]) for r in first + second] == [
        ("ok", "json_object_schema", False),
        ("ok", "json_object_schema", False),
    ]
    assert first[0]["details"]["structured"] == {
        "mode": "json_object_schema",
        "rejected": ["json_schema"],
    }
    assert "structured" not in second[0]["details"]
    listed = api.get("/runs?kind=consolidate").json()["items"]
    assert [r["structured_mode"] for r in listed] == ["json_object_schema", "json_object_schema"]


def test_every_call_declares_its_schema_and_sends_max_tokens(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    agent.settings = {"consolidation_max_tokens": 700}
    agent.save()
    llm_server.script(Completion(CLEAN))
    add(session, "I switched to green tea.", "Noted.", role=None)

    api.post(f"/sessions/{session.id}/consolidate")

    body = llm_server.chats[0].body
    spec = body["response_format"]["json_schema"]
    assert (spec["name"], spec["schema"]["required"], body["max_tokens"]) == (
        "consolidation",
        ["history_entry", "memory_update"],
        700,
    )
    assert sorted(spec["schema"]["properties"]) == ["corrections", "history_entry", "memory_update"]


def test_a_truncated_answer_is_read_for_what_it_holds_and_the_run_says_truncated(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    cut = '{"history_entry": "' + HISTORY + '", "memory_update": "# Memory\\n- gre'
    llm_server.script(Completion(cut, finish_reason="length"))
    add(session, "I switched to green tea.", "Noted.", role=None)

    runs = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert [(r["status"], r["truncated"], r["parse_tier"]) for r in runs] == [("ok", True, 3)]
    assert HistoryEntry.objects.get().content == HISTORY
    assert Run.objects.get().truncated is True


def test_a_summary_answer_is_json_and_a_prose_answer_still_reads(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    agent.settings = {"max_history_messages": 1, "summary_max_tokens": 300}
    agent.save()
    llm_server.script(
        Completion(json.dumps({"summary": "Tea talk."})), Completion("Prose summary.")
    )
    add(session, "I like tea.", "Good.", "Green, mostly.", role=None)

    first = api.post(f"/sessions/{session.id}/summarize").json()
    add(
        session,
        "Also coffee.",
        "Fine.",
        "Sometimes.",
        role=None,
        start=Run.objects.get().created_at,
    )
    second = api.post(f"/sessions/{session.id}/summarize").json()

    body = llm_server.chats[0].body
    assert (body["response_format"]["json_schema"]["name"], body["max_tokens"]) == ("summary", 300)
    assert (first["summary"], first["runs"][0]["parse_tier"]) == ("Tea talk.", 1)
    assert (second["summary"], second["runs"][0]["parse_tier"]) == ("Prose summary.", None)


def test_a_json_archive_summary_records_its_parse_tier(api, agent, session, settings, llm_server):
    """A compaction read from its JSON field says so (tier 1); prose stays tier None."""
    use_llm(settings, llm_server)
    agent.settings = {"max_history_bytes": 300}
    agent.save()
    llm_server.script(
        Completion(json.dumps({"facts": []})),
        Completion(json.dumps({"summary": "They counted."})),
    )
    add(session, *[f"{'q' if i % 2 == 0 else 'a'}{i:03d} " + "x" * 95 for i in range(8)], role=None)

    runs = api.post(f"/sessions/{session.id}/compact").json()["runs"]

    assert [(r["kind"], r["status"], r["parse_tier"]) for r in runs] == [
        ("extract", "ok", 1),
        ("compact", "ok", 1),
    ]
    assert llm_server.chats[1].body["response_format"]["json_schema"]["schema"]["required"] == [
        "summary"
    ]


def test_the_consolidation_schema_requires_both_of_seed_004s_fields(
    api, agent, session, settings, llm_server
):
    """A server that enforces the schema must not let a model stop after history_entry."""
    use_llm(settings, llm_server)
    llm_server.script(Completion(CLEAN))
    add(session, "I switched to green tea.", "Noted.", role=None)

    api.post(f"/sessions/{session.id}/consolidate")

    schema = llm_server.chats[0].body["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["history_entry", "memory_update"]
