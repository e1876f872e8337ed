"""Seed 001's context usage: what the agent's model holds, against its context window.

The model replays every message after the latest compact marker (seed 003) under the
rolling summary and the system documents, so usage counts those: the documents, learnings
and hints the assembled prompt carries, the summary, and the session's hot messages by
their stored token counts (one aggregate query, nothing re-tokenised). The assembled
context's own size is no measure: it stays within max_tokens however long the conversation
grows. An agent may send its model's own prompt (input) token count instead, as Letta and
LlamaIndex measure it; output tokens are not context (letta#3242 compacted too often for
counting them).
"""

from dataclasses import dataclass
from typing import Literal

from django.db.models import Count, Sum

from apps.conversations.selectors import hot_messages
from apps.memory.context.types import ContextRequest, Part

# System parts the prompt carries that count as usage; facts are retrieved per query and
# the summary is counted on its own.
SYSTEM_KINDS = ("document", "learnings", "hints")


@dataclass(frozen=True)
class Usage:
    """Tokens the agent's model holds by part, and what seed 001 does about them."""

    window: int  # context_window_tokens
    flush_ratio: float
    compact_ratio: float
    system: int  # documents, learnings and hints the prompt carries
    summary: int  # the rolling summary
    messages: int  # every message after the latest compact marker
    message_count: int
    observed: int | None = None  # the agent's own count of its model's prompt tokens

    @property
    def estimate(self) -> int:
        return self.system + self.summary + self.messages

    @property
    def measured_by(self) -> Literal["observed", "estimate"]:
        return "estimate" if self.observed is None else "observed"

    @property
    def tokens(self) -> int:
        """The observed count when the agent sent one, else memoryhub's estimate."""
        return self.estimate if self.observed is None else self.observed

    @property
    def ratio(self) -> float:
        return self.tokens / self.window

    @property
    def flush_recommended(self) -> bool:
        return self.ratio >= self.flush_ratio

    @property
    def compact_required(self) -> bool:
        return self.ratio >= self.compact_ratio

    @property
    def action(self) -> Literal["none", "flush", "compact"]:
        """none, flush (at flush_ratio) or compact (write-then-compact, at compact_ratio)."""
        if self.compact_required:
            return "compact"
        return "flush" if self.flush_recommended else "none"


def usage_measure(
    *, request: ContextRequest, parts: list[Part], observed_tokens: int | None = None
) -> Usage:
    """The usage of the context assembled for `request` (its kept `parts`) plus the session's
    hot messages; `observed_tokens`, when given, stands in for the estimate."""
    config = request.config
    hot = hot_messages(session=request.session).aggregate(tokens=Sum("token_count"), n=Count("id"))
    return Usage(
        window=config.context_window_tokens,
        flush_ratio=config.flush_ratio,
        compact_ratio=config.compact_ratio,
        system=sum(p.tokens or 0 for p in parts if p.kind in SYSTEM_KINDS),
        summary=sum(p.tokens or 0 for p in parts if p.kind == "summary"),
        messages=hot["tokens"] or 0,
        message_count=hot["n"],
        observed=observed_tokens,
    )
