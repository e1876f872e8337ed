"""An append with what it sets off: error memory for failing tool calls, and the lifecycle."""

from dataclasses import dataclass

from apps.conversations.models import Session
from apps.conversations.services import AppendResult, NewMessage, messages_append
from apps.learnings.selectors import Hint
from apps.lifecycle.triggers import after_append
from apps.memory.failures import capture_and_hint, named_failures


@dataclass(frozen=True)
class Appended:
    result: AppendResult
    lifecycle: list[str]  # what the append set off: summary, consolidate, compact
    hints: list[Hint]  # for the tools whose calls failed (seed 000's error memory)


def messages_append_turn(
    *, session: Session, messages: list[NewMessage], max_batch: int
) -> Appended:
    """Append; record failing tool calls and gather hints for them; then enqueue what the
    session now needs (after commit, debounced)."""
    messages, calls = named_failures(session, messages)
    result = messages_append(session=session, messages=messages, max_batch=max_batch)
    hints = capture_and_hint(session=session, stored=result.messages,
                             created_ids=result.created_ids, calls=calls)  # fmt: skip
    due = after_append(session=session) if result.created else []
    return Appended(result=result, lifecycle=due, hints=hints)
