"""Tool-call turns: an assistant message with `tool_calls` and the tool messages answering
them (by `tool_call_id`). A replay keeps or drops a turn whole: OpenAI's chat format
rejects a tool result without the call before it, and a call without its results.

A call is named by its `id` (OpenAI's shape, as compaction's boundaries.py reads it). Ids
may be reused across turns (some model servers number calls per turn), so a result answers
the newest call with its id at or before it, in session order.
"""

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar


class Turnish(Protocol):
    """What pairing reads of a message (a Message, or a test's stand-in)."""

    role: str
    tool_call_id: str | None
    tool_calls_json: object


def call_ids(message: Turnish) -> tuple[str, ...]:
    """The ids of the tool calls an assistant message makes, in order."""
    if message.role != "assistant" or not isinstance(message.tool_calls_json, list):
        return ()
    return tuple(
        str(c["id"]) for c in message.tool_calls_json if isinstance(c, dict) and c.get("id")
    )


def answers(message: Turnish) -> str | None:
    """The call id a tool message answers (None for any other message, or without one)."""
    if message.role != "tool" or not message.tool_call_id:
        return None
    return message.tool_call_id


def open_results(messages: Iterable[Turnish]) -> set[str]:
    """The call ids that tool messages of `messages` (in session order) answer without a
    call of that id before them there: results that would be replayed without their call."""
    made: set[str] = set()
    missing: set[str] = set()
    for m in messages:
        made.update(call_ids(m))
        ident = answers(m)
        if ident is not None and ident not in made:
            missing.add(ident)
    return missing


T = TypeVar("T", bound=Turnish)


def widen_to_calls(window: Sequence[T], older: Sequence[T]) -> list[T]:
    """`window` reaching back into `older` (the messages right before it, oldest first), to
    the oldest call any of its results answer, so none of its tool results is left without
    its call. Results whose call is not in `older` stay as they are."""
    start = len(older)
    missing = open_results(window)
    while missing:
        j = next(
            (i for i in range(start - 1, -1, -1) if set(call_ids(older[i])) & missing),
            None,
        )
        if j is None:
            break
        start = j
        # What joined may hold results of still older calls.
        missing = open_results([*older[start:], *window])
    return [*older[start:], *window]
