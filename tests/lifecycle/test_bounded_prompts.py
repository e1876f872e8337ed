"""Issue 23: with a small MEMORYHUB_LLM_CONTEXT_TOKENS and big inputs, no prompt the model
receives plus its max_tokens exceeds the context, MEMORY.md and instructions included."""

import json

import pytest

from apps.entries.services import entry_put
from apps.lifecycle import services
from apps.lifecycle.models import Run, Trigger
from apps.providers.token_counts import count_tokens
from tests.lifecycle.helpers import add, use_llm
from tests.support.llm_server import Completion, Reply

pytestmark = pytest.mark.django_db

CONTEXT = 1024
ANSWERS = {
    "summary": {"summary": "Talk about many things."},
    "consolidation": {"history_entry": "[2026-01-05 09:00] Many things."},
    "extraction": {"facts": [{"content": "The user likes tea."}]},
    "compression": {"memory": "# Memory\n- tea"},
}


def _answer(body):
    name = body["response_format"]["json_schema"]["name"]
    return Completion(json.dumps(ANSWERS[name]))


def _within_context(server) -> list[tuple[str, bool]]:
    out = []
    for chat in server.chats:
        used = sum(count_tokens(m["content"]) for m in chat.body["messages"])
        name = chat.body["response_format"]["json_schema"]["name"]
        out.append((name, used + chat.body["max_tokens"] <= CONTEXT))
    return out


def test_no_prompt_exceeds_the_context(agent, session, settings, llm_server):
    use_llm(settings, llm_server)
    settings.MEMORYHUB_LLM_CONTEXT_TOKENS = CONTEXT
    agent.settings = {"max_history_messages": 1, "max_memory_bytes": 2000}
    agent.save()
    llm_server.script(Reply(_answer, repeat=True))
    memory = "# Memory\n" + "".join(f"- fact number {i} about the user's tea\n" for i in range(600))
    entry_put(agent=agent, name="MEMORY.md", content=memory, changed_by="test")
    words = " ".join(f"word{i}" for i in range(1500))  # one message far over the context
    add(session, *[f"message {i}: I talked about tea and travel plans." for i in range(80)], words)

    services.session_summarize(session=session, trigger=Trigger.API)
    services.session_consolidate(session=session, trigger=Trigger.API)
    services.session_flush(session=session, trigger=Trigger.API)
    services.memory_compress(agent=agent, trigger=Trigger.API)

    seen = _within_context(llm_server)
    assert {name for name, _ in seen} == {"summary", "consolidation", "extraction", "compression"}
    assert [name for name, fits in seen if not fits] == []
    consolidations = Run.objects.filter(kind="consolidate", status="ok")
    assert all(r.details["fit"]["reference"]["chars"] == len(memory) for r in consolidations)
    assert consolidations.count() > 1  # the messages went in several chunks that fit
