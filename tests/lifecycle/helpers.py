"""Shared bits for the lifecycle tests: an LLM on the loopback server, messages at fixed
times, and a model that answers each lifecycle prompt the way a faithful model would."""

import json
import re
from datetime import UTC, datetime, timedelta

from apps.conversations.services import NewMessage, messages_append
from apps.entries.services import entry_add
from tests.support.llm_server import Completion

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def use_llm(settings, server_or_url, *, timeout: float = 30.0) -> None:
    url = getattr(server_or_url, "url", server_or_url)
    settings.MEMORYHUB_PROVIDERS = {
        "embedding": {"CLASS": "apps.providers.embeddings.fake.HashEmbedder", "CONFIG": {}},
        "llm": {
            "CLASS": "apps.providers.llm.openai.OpenAIChat",
            "CONFIG": {"URL": url, "MODEL": "test-model", "TIMEOUT": timeout},
        },
    }


def add(session, *texts, role="user", start=T0, step=timedelta(minutes=1), **extra):
    """Append messages at fixed times, one per text (roles alternate when role is None)."""
    batch = [
        NewMessage(
            role=role or ("user" if i % 2 == 0 else "assistant"),
            content=t,
            created_at=start + i * step,
            **extra,
        )
        for i, t in enumerate(texts)
    ]
    return messages_append(session=session, messages=batch).messages


def prompt(body) -> str:
    """The user part of a chat request."""
    return body["messages"][-1]["content"]


def task_of(body) -> str:
    text = prompt(body)
    if "memory consolidation agent" in text:
        return "consolidate"
    if "## Current summary" in text:
        return "summary"
    if "Extract the important" in text:
        return "extract"
    return "archive"


def _section(text: str, title: str) -> str:
    match = re.search(rf"## {re.escape(title)}\n(.*?)(?:\n## |\nReturn only|\Z)", text, re.S)
    return match.group(1).strip() if match else ""


def faithful(body) -> Completion:
    """A model that keeps everything: the history entry quotes the conversation, the
    summary appends the new lines, MEMORY.md gains a line per conversation."""
    text = prompt(body)
    task = task_of(body)
    if task == "consolidate":
        conversation = _section(text, "Conversation to Process")
        memory = _section(text, "Current Long-term Memory")
        memory = "" if memory == "(empty)" else memory
        first = conversation.splitlines()[0][:18] if conversation else "[?]"
        answer = {
            "history_entry": f"{first} Conversation:\n{conversation}",
            "memory_update": (memory + "\n" if memory else "# Memory\n") + f"- talked at {first}",
        }
        return Completion(json.dumps(answer), prompt_tokens=100, completion_tokens=20)
    if task == "summary":
        old = _section(text, "Current summary")
        new = _section(text, "New messages")
        merged = new if old in ("", "(empty)") else f"{old}\n{new}"
        return Completion(merged, prompt_tokens=50, completion_tokens=10)
    if task == "extract":
        facts = [
            {"content": line.split(": ", 1)[1]}
            for line in _section(text, "Conversation").splitlines()
            if " user: " in line and "my " in line.lower()
        ]
        return Completion(json.dumps({"facts": facts}), prompt_tokens=40, completion_tokens=8)
    return Completion("Archived: " + _section(text, "Conversation")[:500])


TEA_MEMORY = "# Memory\n- likes black tea\n"


def tea_conversation(agent, session):
    """MEMORY.md says black tea; the session switches to green tea and names a cat."""
    entry_add(agent=agent, name="MEMORY.md", content=TEA_MEMORY)
    return add(
        session,
        "I switched to green tea.",
        "Noted: green tea from now on.",
        "Also, my cat is called Whiskerino.",
        role=None,
    )
