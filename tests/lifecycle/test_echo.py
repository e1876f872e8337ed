"""Answers that copy the prompt's instructions back (SmolLM2-135M's answers in the real-model
run, verbatim): the echoed lines are dropped, a field left empty counts as absent, and the
run says what went. Over real HTTP to the loopback model."""

import json

import pytest

from apps.conversations.models import SessionMeta, Summary
from apps.entries.models import Entry
from apps.lifecycle.models import HistoryEntry, Run
from apps.lifecycle.services.echo import Instructions
from apps.lifecycle.services.prompts import consolidation_prompt, summary_prompt
from tests.lifecycle.helpers import TEA_MEMORY, add, tea_conversation, use_llm
from tests.support.llm_server import Completion

pytestmark = pytest.mark.django_db

# SmolLM2's own answers to seed 004's consolidation prompt and to the summary prompt.
ECHOED_HISTORY = "history-summary paragraph with [YYYY-MM-DD HH:mm] timestamp"
ECHOED_MEMORY = "updated long-term memory content updated from [yyyy-mm-dd HH:MM], in JSON."
ECHOED_SUMMARY = "<the updated summary as plain text>"
RAW = (
    "[raw-fallback] [2026-01-05 09:02] 3 messages:\n"
    "- [2026-01-05 09:00] user: I switched to green tea.\n"
    "- [2026-01-05 09:01] assistant: Noted: green tea from now on.\n"
    "- [2026-01-05 09:02] user: Also, my cat is called Whiskerino."
)


def _consolidation_instructions(sources):
    bare = consolidation_prompt(memory="", messages=[], compress=False, max_bytes=8192)
    return Instructions.of(bare, sources)


def test_echoed_lines_are_found_and_the_conversation_is_kept():
    instructions = _consolidation_instructions(["I switched to green tea.", TEA_MEMORY])

    text, dropped = instructions.clean(
        f"{ECHOED_MEMORY}\n\n- likes green tea\n{ECHOED_HISTORY}\n- timestamp: green tea"
    )

    assert (text, dropped) == ("- likes green tea\n- timestamp: green tea", 2)


def test_instruction_words_the_conversation_uses_are_not_echoes():
    # "memory", "content" and "updated" are in the prompt, but this user said them too.
    said = "I updated the memory content of my notes app."
    instructions = _consolidation_instructions([said])

    assert instructions.is_echo("updated memory content") is False
    assert _consolidation_instructions([]).is_echo("updated memory content") is True


def test_the_summary_instructions_echoed_are_an_echo():
    bare = summary_prompt(old_summary="", messages=[], max_tokens=128)

    assert Instructions.of(bare, ["hello there"]).is_echo(ECHOED_SUMMARY) is True
    assert Instructions.of(bare, ["hello there"]).is_echo("The user said hello.") is False


def test_a_consolidation_that_echoes_both_fields_is_a_fallback_that_loses_nothing(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    tea_conversation(agent, session)
    llm_server.script(
        Completion(json.dumps({"history_entry": ECHOED_HISTORY, "memory_update": ECHOED_MEMORY}))
    )

    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert (run["status"], run["reason"], run["parse_tier"]) == (
        "fallback",
        "echoed_instructions",
        None,
    )
    history = HistoryEntry.objects.get(agent=agent)
    assert (history.kind, history.content) == ("raw-fallback", RAW)
    assert Entry.objects.get(agent=agent, name="MEMORY.md").content == TEA_MEMORY
    details = Run.objects.get(pk=run["id"]).details
    assert (details["echoed"], details["memory"], details["applied"]) == (
        {"history_entry": 1, "memory_update": 1},
        "unchanged",
        [],
    )


def test_a_memory_update_keeps_its_lines_that_are_not_echoes(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    tea_conversation(agent, session)
    update = f"{ECHOED_MEMORY}\n\n# Memory\n- likes green tea\n- cat: Whiskerino"
    llm_server.script(
        Completion(json.dumps({"history_entry": ECHOED_HISTORY, "memory_update": update}))
    )

    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    # Seed 004 applies each field on its own: MEMORY.md is written, the history is raw.
    assert (run["status"], run["reason"], run["parse_tier"]) == ("ok", "", 1)
    memory = Entry.objects.get(agent=agent, name="MEMORY.md").content
    assert memory == "# Memory\n- likes green tea\n- cat: Whiskerino\n"
    assert HistoryEntry.objects.get(agent=agent).content == RAW
    details = Run.objects.get(pk=run["id"]).details
    assert (details["echoed"], details["applied"]) == (
        {"history_entry": 1, "memory_update": 1},
        ["memory_update"],
    )


def _cat_chat(agent, session, settings, llm_server, answer: str) -> None:
    use_llm(settings, llm_server)
    agent.settings = {"max_history_messages": 2}
    agent.save()
    add(session, "My cat is called Whiskerino. She is three.", "Lovely name!", "Thanks.", role=None)
    llm_server.script(Completion(answer))


@pytest.mark.parametrize(
    ("answer", "reason", "details"),
    [
        (json.dumps({"summary": ECHOED_SUMMARY}), "echoed_instructions", {"summary": 1}),
        # The same model would most likely answer the same again: the summary moves on.
        ("   ", "empty_answer", None),
    ],
)
def test_a_summary_answer_without_a_summary_gives_way_to_the_extractive_one(
    api, agent, session, settings, llm_server, answer, reason, details
):
    _cat_chat(agent, session, settings, llm_server, answer)

    body = api.post(f"/sessions/{session.id}/summarize").json()

    assert body["summary"] == "- [2026-01-05 09:00] user: My cat is called Whiskerino."
    [run] = body["runs"]
    assert (run["status"], run["reason"], run["parse_tier"]) == ("fallback", reason, None)
    assert Run.objects.get(pk=run["id"]).details.get("echoed") == details
    assert Summary.objects.get(session=session).content == body["summary"]
    assert SessionMeta.objects.get(session=session).summary_cursor is not None


def test_a_summary_without_echoes_is_the_models(api, agent, session, settings, llm_server):
    _cat_chat(
        agent,
        session,
        settings,
        llm_server,
        json.dumps({"summary": "The user's cat Whiskerino is three."}),
    )

    [run] = api.post(f"/sessions/{session.id}/summarize").json()["runs"]

    assert (run["status"], run["reason"], run["parse_tier"]) == ("ok", "", 1)
    assert "echoed" not in Run.objects.get(pk=run["id"]).details
    assert Summary.objects.get(session=session).content == "The user's cat Whiskerino is three."


def test_a_line_of_fewer_than_three_words_is_never_an_echo():
    instructions = _consolidation_instructions([])

    assert instructions.clean("# Memory\n- likes tea\nlong-term memory content") == (
        "# Memory\n- likes tea",
        1,
    )


def test_an_answer_without_a_letter_or_digit_is_no_text():
    instructions = _consolidation_instructions(["I switched to green tea."])

    assert instructions.clean("]\n{\n- ...\n") == ("", 0)
    assert instructions.clean("- 42\n") == ("- 42", 0)


def test_a_memory_update_of_punctuation_leaves_memory_md_as_it_was(
    api, agent, session, settings, llm_server
):
    # SmolLM2-135M's memory_update in a walk through the service: the JSON's punctuation
    use_llm(settings, llm_server)
    tea_conversation(agent, session)
    history = "[2026-01-05 09:02] The user switched to green tea; the cat is Whiskerino."
    llm_server.script(
        Completion(json.dumps({"history_entry": history, "memory_update": "]\n{\n- ...\n"}))
    )

    [run] = api.post(f"/sessions/{session.id}/consolidate").json()["runs"]

    assert (run["status"], run["reason"], run["parse_tier"]) == ("ok", "", 1)
    assert Entry.objects.get(agent=agent, name="MEMORY.md").content == TEA_MEMORY
    assert HistoryEntry.objects.get(agent=agent).content == history
    details = Run.objects.get(pk=run["id"]).details
    assert (details["memory"], details["applied"]) == ("unchanged", ["history_entry"])
