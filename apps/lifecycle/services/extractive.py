"""What the lifecycle writes without an LLM (or when the LLM fails): extractive text.

Nothing here calls a model. The texts are chosen, not generated: the salient sentences of
the messages for summaries, archives and history entries (sentence_salience.py), seed 004's
[raw-fallback] entry, a whole transcript for a reset archive, the user's first-person
statements as facts, and MEMORY.md lines made of them.
"""

import json
import re
from collections.abc import Sequence

from apps.lifecycle.services.prompts import stamp
from apps.lifecycle.services.sentence_salience import Candidate, select
from apps.providers.token_counts import count_tokens_batch

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


# A digest's sentences are at most this share of the characters they cover, so that with
# each line's `- [time] role: ` it is still shorter than the messages.
DIGEST_RATIO = 0.5
_SENTENCE_CHARS = 300
_LINE = re.compile(r"^- \[[^\]]*\] (?P<role>[a-z]+)[^:]*: (?P<text>.*)$")


def _candidates(messages: Sequence) -> list[Candidate]:
    """Each sentence a user or assistant said, as a `- [time] role: sentence` line."""
    found = []
    for m in messages:
        if m.role not in ("user", "assistant"):
            continue  # tool results and system text are kept by the messages themselves
        who = m.role + (f" {m.name}" if m.name else "")
        text = _SPACE.sub(" ", m.content or "").strip()
        for n, sentence in enumerate(s for s in _SENTENCE_END.split(text) if s.strip()):
            sentence = _clip(sentence.strip(), _SENTENCE_CHARS)
            line = f"- [{stamp(m.created_at)}] {who}: {sentence}"
            found.append(Candidate(line, sentence, m.role, opening=n == 0))
    return found


def extractive_digest(*, messages: Sequence, max_tokens: int) -> list[str]:
    """The messages' salient sentences as lines, in order: within `max_tokens`, sentences
    within DIGEST_RATIO of the messages' characters (one line at least, when any is salient)."""
    candidates = _candidates(messages)
    source = sum(len(m.content or "") for m in messages)
    chosen = select(candidates, max_tokens=max_tokens, max_chars=int(source * DIGEST_RATIO))
    if not chosen:  # all filler, or one long sentence: its best line, if it fits at all
        chosen = select(candidates, max_tokens=max_tokens)[:1]
    return [candidates[i].text for i in chosen]


def _old_candidate(line: str) -> Candidate:
    match = _LINE.match(line)
    if match is None:
        return Candidate(line, line)
    return Candidate(line, match["text"], match["role"])


def extractive_summary(*, old: str, messages: Sequence, max_tokens: int) -> str:
    """The old summary merged with the new messages' salient sentences: when the whole
    passes `max_tokens`, the least salient lines of either are dropped until it fits."""
    new = extractive_digest(messages=messages, max_tokens=max_tokens)
    if not new and not (old or "").strip():
        new = extractive_lines(list(messages)[-1:])  # only filler: say that it happened
    lines = [line for line in (old or "").splitlines() if line.strip()] + new
    if sum(count_tokens_batch(lines)) <= max_tokens:
        return "\n".join(lines)
    candidates = [_old_candidate(line) for line in lines]
    return "\n".join(lines[i] for i in select(candidates, max_tokens=max_tokens))


def extractive_history(*, messages: Sequence, max_tokens: int) -> str:
    """A history entry without a model: `[extractive] [time] N messages` and the salient
    sentences (seed 004's [YYYY-MM-DD HH:MM] stamp, the newest message's)."""
    head = f"[extractive] [{stamp(messages[-1].created_at)}] {len(messages)} messages"
    lines = extractive_digest(messages=messages, max_tokens=max_tokens)
    if not lines:
        return head + ": nothing salient."
    return "\n".join([head + ", the salient sentences:", *lines])


def memory_with_facts(*, memory: str, facts: Sequence[str], max_bytes: int) -> str | None:
    """MEMORY.md with a `- fact` line for each fact it lacks (case and spacing ignored),
    as many as fit in `max_bytes`; None when nothing is added."""
    present = {" ".join(line.split()).lower() for line in memory.splitlines()}
    text = memory.rstrip("\n") + "\n" if memory.strip() else "# Memory\n\n"
    added = False
    for fact in facts:
        line = "- " + " ".join(fact.split())
        if line.lower() in present:
            continue
        if len((text + line + "\n").encode("utf-8")) > max_bytes:
            continue  # the messages and the history entry still hold it
        text, added = text + line + "\n", True
        present.add(line.lower())
    return text if added else None


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
