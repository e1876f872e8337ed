"""get_context (seed 002, with seeds 000 and 001): the system part and tri-hybrid messages,
fitted to a token budget.

Budget priority, highest first: the newest message (truncated if it alone is over budget,
never dropped), then the system providers in settings order (documents, summary, learnings),
the rest of the recency leg newest first, high-salience facts, the salience leg, the
relevance leg. A unit that does not fit whole is dropped and reported; smaller later ones
may still fit. Tokens are MiniLM WordPiece counts (apps.providers.tokens).
"""

import functools
from dataclasses import dataclass, field

from django.conf import settings
from django.utils.module_loading import import_string

from apps.agents.models import Agent
from apps.conversations.models import Session
from apps.memory.context import legs
from apps.memory.context.types import Candidate, ContextRequest, Part, SystemProvider
from apps.providers.tokens import count_tokens, count_tokens_batch

__all__ = ["Candidate", "Context", "ContextRequest", "Part", "SystemProvider", "get_context"]

DEFAULT_PROVIDERS = [
    "apps.memory.context.providers.workspace_documents",
    "apps.memory.context.providers.rolling_summary",
    "apps.memory.context.providers.learnings_files",
    "apps.memory.context.providers.salient_facts",
]


@dataclass
class Context:
    request: ContextRequest
    parts: list[Part]  # system part, in provider order (facts last)
    messages: list[Candidate]  # time order
    required_tokens: int  # everything found, before fitting to the budget
    used_tokens: int
    dropped: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def tokens_of(self, *kinds: str) -> int:
        return sum(p.tokens for p in self.parts if p.kind in kinds)

    @property
    def message_tokens(self) -> int:
        return sum(c.tokens for c in self.messages)

    @property
    def ratio(self) -> float:
        return self.required_tokens / self.request.max_tokens

    @property
    def flush_recommended(self) -> bool:
        return self.ratio >= self.request.config.flush_ratio

    @property
    def compact_required(self) -> bool:
        return self.ratio >= self.request.config.compact_ratio


def system_providers() -> list[SystemProvider]:
    paths = getattr(settings, "MEMORYHUB_CONTEXT_PROVIDERS", None) or DEFAULT_PROVIDERS
    return _load_providers(tuple(paths))


@functools.cache
def _load_providers(paths: tuple[str, ...]) -> list[SystemProvider]:
    # Keyed by the paths, so a settings change (tests) loads the new list.
    return [import_string(path) for path in paths]


def _truncate(text: str, budget: int) -> tuple[str, int]:
    """The longest prefix of `text` (cut at a character) with at most `budget` tokens."""
    if budget <= 0:
        return "", 0
    lo, hi = 0, len(text)
    while lo < hi:  # binary search: count_tokens is monotone enough over prefixes
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo].rstrip()
    return cut, count_tokens(cut)


def get_context(
    *, agent: Agent, session: Session, query: str | None, max_tokens: int | None
) -> Context:
    """Assemble the context for one turn; never over `max_tokens`, never without the newest."""
    config = agent.config
    request = ContextRequest(
        agent=agent,
        config=config,
        session=session,
        query=query,
        max_tokens=max_tokens or config.context_max_tokens,
    )
    parts: list[Part] = []
    for provider in system_providers():
        parts.extend(provider(request))
    uncounted = [p for p in parts if p.tokens is None]  # summary, facts: short, counted here
    for part, n in zip(uncounted, count_tokens_batch([p.content for p in uncounted]), strict=True):
        part.tokens = n

    found: dict = {}
    recent = legs.recency(request)
    for m in recent:
        found.setdefault(m.id, Candidate(m)).legs.append("recency")
    for m in legs.salience(request):
        found.setdefault(m.id, Candidate(m)).legs.append("salience")
    relevant, warning = legs.relevance(request)
    for m, similarity in relevant:
        c = found.setdefault(m.id, Candidate(m))
        c.legs.append("relevance")
        c.similarity = similarity
    for c in found.values():
        c.tokens = c.message.token_count
        c.content = c.message.content

    required = sum(p.tokens for p in parts) + sum(c.tokens for c in found.values())
    budget = request.max_tokens
    used = 0
    kept_parts: set[int] = set()
    kept_msgs: set = set()
    decided: set = set()  # a message found by two legs is tried once
    dropped: list[dict] = []

    def take(tokens: int) -> bool:
        nonlocal used
        if used + tokens <= budget:
            used += tokens
            return True
        return False

    newest = recent[-1] if recent else None
    if newest is not None:
        c = found[newest.id]
        if c.tokens > budget:
            c.content, c.tokens = _truncate(c.content, budget)
            c.truncated = True
        take(c.tokens)
        kept_msgs.add(newest.id)
        decided.add(newest.id)

    def fit_part(i: int) -> None:
        if take(parts[i].tokens):
            kept_parts.add(i)
        else:
            dropped.append(
                {"kind": parts[i].kind, "name": parts[i].name, "tokens": parts[i].tokens}
            )

    def fit_message(c: Candidate) -> None:
        if c.message.id in decided:
            return
        decided.add(c.message.id)
        if take(c.tokens):
            kept_msgs.add(c.message.id)
        else:
            dropped.append({"kind": "message", "name": str(c.message.id), "tokens": c.tokens})

    for i, part in enumerate(parts):
        if part.kind != "fact":
            fit_part(i)
    for m in reversed(recent):
        fit_message(found[m.id])
    for i, part in enumerate(parts):
        if part.kind == "fact":
            fit_part(i)
    for c in sorted(
        (c for c in found.values() if "salience" in c.legs),
        key=lambda c: c.message.created_at,
        reverse=True,
    ):
        fit_message(c)
    for c in sorted(
        (c for c in found.values() if "relevance" in c.legs), key=lambda c: -(c.similarity or 0)
    ):
        fit_message(c)

    messages = [c for c in found.values() if c.message.id in kept_msgs]
    messages.sort(key=lambda c: (c.message.created_at, str(c.message.id)))
    return Context(
        request=request,
        parts=[p for i, p in enumerate(parts) if i in kept_parts],
        messages=messages,
        required_tokens=required,
        used_tokens=used,
        dropped=dropped,
        warnings=[warning] if warning else [],
    )
