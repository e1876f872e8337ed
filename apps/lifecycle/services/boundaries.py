"""Where a history may be cut for compaction: pure functions over the messages in order.

A cut at i keeps messages[i:] hot and archives messages[:i]. A cut is safe when it leaves
every tool call with its results (a tool result without its call means nothing to a model)
and does not fall between two messages with the same time (start_at is a time). Seed 000
trims "on a complete user+assistant pair boundary": a pair boundary is a safe cut right
before a user message that follows the assistant's (or a tool's) turn, and it is the only
cut compaction makes. Where there is none (a long run of tool calls), compaction waits for
the user to speak again.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from apps.conversations.models import Message


@dataclass(frozen=True)
class Turn:
    role: str
    created_at: datetime
    size: int
    calls: tuple[str, ...] = ()  # ids of the tool calls an assistant message makes
    result_of: str | None = None  # the tool call a tool message answers

    @classmethod
    def of(cls, message: Message) -> "Turn":
        calls = tuple(
            str(c["id"])
            for c in (message.tool_calls_json or [])
            if isinstance(c, dict) and c.get("id")
        )
        return cls(message.role, message.created_at, message.byte_size, calls, message.tool_call_id)


def blocked(turns: Sequence[Turn]) -> list[bool]:
    """blocked[i]: a cut before i would split a tool call from a result, or equal times."""
    n = len(turns)
    delta = [0] * (n + 1)
    issuer: dict[str, int] = {}
    last_caller: int | None = None
    for j, t in enumerate(turns):
        if t.role == "assistant" and t.calls:
            issuer.update(dict.fromkeys(t.calls, j))
            last_caller = j
        if t.role == "tool":
            # By id; a result without a known id belongs to the latest call, or at least
            # to the message before it.
            k = issuer.get(t.result_of) if t.result_of else None
            if k is None:
                k = last_caller if last_caller is not None else j - 1
            if 0 <= k < j:
                delta[k + 1] += 1  # every cut in (k, j] separates them
                delta[j + 1] -= 1
    out, running = [], 0
    for i in range(n):
        running += delta[i]
        same_time = i > 0 and turns[i].created_at <= turns[i - 1].created_at
        out.append(i == 0 or running > 0 or same_time)
    return out


def safe_cuts(turns: Sequence[Turn]) -> list[int]:
    return [i for i, b in enumerate(blocked(turns)) if not b]


def pair_cuts(turns: Sequence[Turn]) -> list[int]:
    """The safe cuts right before a user message whose previous turn (system notes aside)
    is the assistant's or a tool's: the user+assistant pairs before it are complete."""
    out, previous = [], None  # the role of the latest non-system turn
    for i, bad in enumerate(blocked(turns)):
        role = turns[i].role
        if not bad and role == "user" and previous in ("assistant", "tool"):
            out.append(i)
        if role != "system":
            previous = role
    return out


def _choose(cuts: list[int], kept: list[int], target: int, limit: int) -> int | None:
    """Keep the most bytes under `target`; else get as close to it as possible under
    `limit`; None if no cut brings the hot part under `limit`."""
    under_target = [i for i in cuts if kept[i] <= target]
    if under_target:
        return min(under_target)
    under_limit = [i for i in cuts if kept[i] <= limit]
    return max(under_limit) if under_limit else None


def cut_for_size(turns: Sequence[Turn], *, target: int, limit: int) -> int | None:
    """Seed 000: trim the oldest messages so the rest is at most `target` bytes, on a pair
    boundary; failing that, the pair boundary closest to `target` under `limit`, else the
    newest pair boundary. None when there is no pair boundary: compaction waits."""
    kept = [0] * (len(turns) + 1)
    for i in range(len(turns) - 1, -1, -1):
        kept[i] = kept[i + 1] + turns[i].size
    pairs = pair_cuts(turns)
    choice = _choose(pairs, kept, target, limit)
    # Over the limit whatever the cut: archive up to the newest pair all the same.
    return choice if choice is not None else max(pairs, default=None)


def cut_keep_last(turns: Sequence[Turn], *, keep: int) -> int | None:
    """Seed 001's write-then-compact: keep the last `keep` messages, or more, back to the
    nearest pair boundary. None when no pair boundary archives anything: it waits."""
    i = len(turns) - keep
    if i <= 0:
        return None
    return max((c for c in pair_cuts(turns) if c <= i), default=None)
