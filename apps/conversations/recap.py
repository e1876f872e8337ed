"""Seed 004's recap: the messages that remain after a consolidation, as one text for the
system prompt (role, content and time per line; each cut to a bound). No reads here: the
selectors choose the messages (docs/lifecycle.md, "Recap")."""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC

from apps.conversations.models import Message

_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Recap:
    text: str
    count: int  # messages in the text
    remaining: int  # messages the consolidation left that the window does not carry


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def recap_line(message: Message, *, chars: int) -> str:
    """`[YYYY-MM-DD HH:MM] role: content`, whitespace folded, content cut to `chars`."""
    who = message.role + (f" ({message.name})" if message.name else "")
    if message.role == "tool" and message.tool_name:
        who = f"tool ({message.tool_name})"
    text = _SPACE.sub(" ", message.content or "").strip()
    if not text and message.tool_calls_json:
        text = "[tool calls]"
    at = message.created_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    return f"[{at}] {who}: {_clip(text, chars)}"


def recap_text(messages: Sequence[Message], *, remaining: int, chars: int) -> Recap:
    """The recap of `messages` (oldest first, the newest of `remaining` such messages)."""
    head = "Recap of the conversation since the last consolidation, before the messages shown"
    if len(messages) < remaining:
        head += f" (the last {len(messages)} of {remaining})"
    lines = [head + ":"] + [recap_line(m, chars=chars) for m in messages]
    return Recap(text="\n".join(lines), count=len(messages), remaining=remaining)
