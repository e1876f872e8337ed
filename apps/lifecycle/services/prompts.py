"""The prompts of the lifecycle, and how messages are shown to the model.

Decisions: every message carries its [YYYY-MM-DD HH:MM] time (seed 004 asks the history
entry for one, and seed 000's cursor is a time); tool calls are shown by name and arguments
so the model knows what was done, not how; a message over its share of the budget is cut
with a visible marker rather than dropped.
"""

import json
from collections.abc import Iterable, Sequence
from datetime import datetime

from apps.conversations.models import Message
from apps.providers.llm import ChatMessage
from apps.providers.token_counts import count_tokens_batch

MESSAGE_MAX_CHARS = 4000


def stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M")


def _tool_calls(calls: Iterable[object] | None) -> str:
    names = []
    for call in calls or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            args = fn.get("arguments")
            args = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            names.append(f"{fn.get('name', '?')}({(args or '')[:200]})")
        elif isinstance(call, dict):
            names.append(str(call.get("name") or call.get("id") or "tool"))
    return ", ".join(names)


def format_message(message: Message, *, max_chars: int = MESSAGE_MAX_CHARS) -> str:
    """`[YYYY-MM-DD HH:MM] role (name): content`, tool calls named, long content cut."""
    who = message.role + (f" ({message.name})" if message.name else "")
    if message.role == "tool" and message.tool_name:
        who = f"tool ({message.tool_name})"
    text = message.content or ""
    if len(text) > max_chars:
        text = text[:max_chars] + f" […{len(text) - max_chars} more characters]"
    calls = _tool_calls(message.tool_calls_json)
    if calls:
        text = (text + " " if text else "") + f"[calls {calls}]"
    return f"[{stamp(message.created_at)}] {who}: {text}"


def transcript(messages: Sequence, *, budget_tokens: int | None = None) -> str:
    """The messages as prompt lines; past `budget_tokens` the middle is elided, keeping the
    first and last lines (an archive of a huge prefix still names its start and end)."""
    lines = [format_message(m) for m in messages]
    if budget_tokens is None:
        return "\n".join(lines)
    costs = count_tokens_batch(lines)
    if sum(costs) <= budget_tokens:
        return "\n".join(lines)
    used, i, j, from_head = 0, 0, len(lines) - 1, True
    while i <= j:
        k = i if from_head else j
        if used + costs[k] > budget_tokens:
            break
        used += costs[k]
        i, j = (i + 1, j) if from_head else (i, j - 1)
        from_head = not from_head
    return "\n".join([*lines[:i], f"[… {j - i + 1} messages not shown …]", *lines[j + 1 :]])


def summary_prompt(*, old_summary: str, messages: Sequence, max_tokens: int) -> list[ChatMessage]:
    """Seed 000's generatePass: the old summary is in the prompt, so the model merges as it
    writes and no second pass is needed."""
    system = (
        "You maintain the rolling summary of a conversation between a user and an AI agent. "
        "Rewrite the current summary so that it also covers the new messages: keep every "
        "fact, decision, preference, name, date and open task that may matter later; drop "
        "small talk. Answer with a JSON object "
        '{"summary": "<the updated summary as plain text>"}, the summary at most about '
        f"{max_tokens} tokens."
    )
    user = (
        f"## Current summary\n{old_summary.strip() or '(empty)'}\n\n"
        f"## New messages\n{transcript(messages)}\n\n"
        'Return only the JSON object {"summary": "..."}.'
    )
    return [ChatMessage("system", system), ChatMessage("user", user)]


def consolidation_prompt(
    *, memory: str, messages: Sequence, compress: bool, max_bytes: int
) -> list[ChatMessage]:
    """Seed 004's consolidation prompt: history_entry and memory_update as JSON."""
    parts = [
        "You are a memory consolidation agent. Return JSON with:\n"
        '  "history_entry": summary paragraph with [YYYY-MM-DD HH:MM] timestamp\n'
        '  "memory_update": updated long-term memory content\n'
        '  "corrections": (optional) a list of the corrections and preferences the user '
        "stated, each one sentence\n",
        f"## Current Long-term Memory\n{memory.strip() or '(empty)'}\n",
        f"## Conversation to Process\n{transcript(messages)}\n",
    ]
    if compress:
        parts.append(
            f"The long-term memory is over {max_bytes} bytes: compress it, and prune stale or "
            "low-value facts, in memory_update.\n"
        )
    parts.append("Return only the JSON object.")
    return [
        ChatMessage("system", "You consolidate an AI agent's memory. You answer in JSON."),
        ChatMessage("user", "\n".join(parts)),
    ]


def extraction_prompt(*, messages: Sequence, max_facts: int) -> list[ChatMessage]:
    """Seed 001's write-then-compact step 1: the facts worth keeping before messages go."""
    user = (
        "Extract the important, durable facts from this conversation: the user's "
        "preferences, personal details, decisions, names, dates, commitments. Skip what only "
        f"mattered in the moment. At most {max_facts} facts, each one self-contained "
        "sentence. Return JSON: "
        '{"facts": [{"content": "...", "category": "...", "importance": 0.5}]} '
        '(category and importance optional; {"facts": []} if nothing is worth keeping).\n\n'
        f"## Conversation\n{transcript(messages)}"
    )
    return [
        ChatMessage("system", "You extract facts for an AI agent's long-term memory. JSON only."),
        ChatMessage("user", user),
    ]


def archive_prompt(*, messages: Sequence, budget_tokens: int) -> list[ChatMessage]:
    """Seed 003: the summary of a compacted prefix, written into an Archive entry."""
    user = (
        "Summarise this part of a conversation for an archive that will be found again by "
        "keyword search: name the topics, people, facts, decisions and outcomes, with dates. "
        'Return only a JSON object {"summary": "<the summary as plain text>"}.\n\n'
        f"## Conversation\n{transcript(messages, budget_tokens=budget_tokens)}"
    )
    return [
        ChatMessage("system", "You write concise, factual archives."),
        ChatMessage("user", user),
    ]
