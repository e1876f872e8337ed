"""What the lifecycle writes without an LLM (or when the LLM fails): extractive text.

Nothing here calls a model. The texts are chosen, not generated: the first sentence of each
message for summaries and archives, seed 004's [raw-fallback] entry, a whole transcript for
a reset archive, and first-person statements of the user as facts.
"""

import json
import re
from collections.abc import Sequence

from apps.lifecycle.services.prompts import stamp
from apps.providers.tokens import count_tokens_batch

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SPACE = re.compile(r"\s+")
# Statements a user makes about themselves: what a flush without an LLM keeps as facts.
_FIRST_PERSON = re.compile(
    r"\b(my|i am|i'm|i have|i've|i like|i love|i prefer|i hate|i live|i work|i moved|"
    r"call me|remember that|i always|i never|i need|i want)\b",
    re.I,
)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def first_sentence(text: str, limit: int = 200) -> str:
    """The first sentence of `text`, whitespace folded, at most `limit` characters."""
    text = _SPACE.sub(" ", text or "").strip()
    if not text:
        return ""
    return _clip(_SENTENCE_END.split(text, maxsplit=1)[0], limit)


def extractive_lines(messages: Sequence) -> list[str]:
    """One line per message that says something: `- [time] role: first sentence`."""
    lines = []
    for m in messages:
        who = m.role + (f" {m.name}" if m.name else "")
        if m.role == "tool":
            who = f"tool {m.tool_name or ''}".strip()
        text = first_sentence(m.content, 100 if m.role == "tool" else 200)
        if not text and m.tool_calls_json:
            text = "[tool calls]"
        if text:
            lines.append(f"- [{stamp(m.created_at)}] {who}: {text}")
    return lines


def extractive_summary(*, old: str, messages: Sequence, max_tokens: int) -> str:
    """The old summary's lines followed by the new messages' lines, the oldest lines
    dropped until the whole is under `max_tokens`."""
    lines = [line for line in (old or "").splitlines() if line.strip()]
    lines += extractive_lines(messages)
    costs = count_tokens_batch(lines)
    total, start = sum(costs), 0
    while total > max_tokens and start < len(lines) - 1:
        total -= costs[start]
        start += 1
    return "\n".join(lines[start:])


def raw_fallback(*, messages: Sequence, last: int, chars: int) -> str:
    """Seed 004's `[raw-fallback]` history entry: the last `last` messages, each cut to
    `chars` characters, stamped with the newest message's time."""
    shown = list(messages)[-last:]
    head = f"[raw-fallback] [{stamp(messages[-1].created_at)}] {len(messages)} messages"
    if len(shown) < len(messages):
        head += f", the last {len(shown)}"
    lines = [head + ":"]
    for m in shown:
        text = _SPACE.sub(" ", m.content or "").strip()
        lines.append(f"- [{stamp(m.created_at)}] {m.role}: {_clip(text, chars)}")
    return "\n".join(lines)


def whole_transcript(*, messages: Sequence, title: str) -> str:
    """Every message in full, tool calls included: what a reset archives so nothing is lost."""
    parts = [f"# {title}", ""]
    for m in messages:
        who = m.role + (f" ({m.name})" if m.name else "")
        if m.tool_name:
            who += f" tool={m.tool_name}"
        if m.tool_call_id:
            who += f" tool_call_id={m.tool_call_id}"
        parts.append(f"## {m.created_at.isoformat()} {who}")
        parts.append("")
        parts.append(m.content or "")
        if m.tool_calls_json:
            parts.append("")
            parts.append("tool_calls: " + json.dumps(m.tool_calls_json, ensure_ascii=False))
        parts.append("")
    return "\n".join(parts)


def heuristic_facts(*, messages: Sequence, limit: int) -> list[str]:
    """First-person statements of the user (`My cat is called ...`), deduplicated."""
    found: dict[str, str] = {}
    for m in messages:
        if m.role != "user":
            continue
        for sentence in _SENTENCE_END.split(_SPACE.sub(" ", m.content or "").strip()):
            sentence = sentence.strip()
            if 10 <= len(sentence) <= 300 and _FIRST_PERSON.search(sentence):
                found.setdefault(sentence.lower(), sentence)
    return list(found.values())[:limit]
