"""get_context (seed 002, with seeds 000 and 001): the system part and tri-hybrid messages,
fitted to a token budget.

Budget priority, highest first: MEMORY.md (seed 004: in the prompt on every message, so
its room is reserved first; truncated, with a warning, only when it alone is over budget),
the newest message (truncated to the room left, never dropped), then the system providers
in settings order (the other documents, summary, learnings, error hints), the rest of the
recency leg newest first, high-salience facts then the facts relevant to the query, the
salience leg, the relevance leg, then the memory leg's hits in rank order, each with its
context window (and the window's header line, when the hit opens it; a span that does not
fit is tried as the hit alone). A unit that does not fit whole is dropped and reported;
smaller later ones may still fit. A session message is tried with its tool-call turn (turns.py):
a call and its results are kept or dropped together, and the newest message's turn is cut to
the room left together (contents only: tool calls are never cut). Tokens are MiniLM WordPiece
counts (apps.providers.token_counts).
"""

import functools
from dataclasses import dataclass, field, replace

from django.conf import settings
from django.utils.module_loading import import_string

from apps.agents.models import Agent
from apps.conversations.models import Session
from apps.entries import names
from apps.memory.context import legs
from apps.memory.context.turns import Units, complete_turns, turn_units
from apps.memory.context.types import (
    Candidate,
    ContextRequest,
    MemoryHit,
    MemoryLeg,
    MemoryWindow,
    Part,
    SystemProvider,
)
from apps.memory.context.usage import Usage, usage_measure
from apps.providers.token_counts import count_tokens, count_tokens_batch

__all__ = [
    "Candidate",
    "Context",
    "ContextRequest",
    "MemoryWindow",
    "Part",
    "SystemProvider",
    "Usage",
    "get_context",
]

DEFAULT_PROVIDERS = [
    "apps.memory.context.providers.workspace_documents",
    "apps.memory.context.providers.rolling_summary",
    "apps.memory.context.providers.consolidation_recap",
    "apps.memory.context.providers.active_learnings",
    "apps.memory.context.providers.failure_hints",
    "apps.memory.context.providers.salient_facts",
    "apps.memory.context.providers.relevant_facts",
]


@dataclass
class Context:
    request: ContextRequest
    parts: list[Part]  # system part, in provider order (facts last)
    messages: list[Candidate]  # seed 002's legs, this session's messages, time order
    required_tokens: int  # everything found, before fitting to the budget
    used_tokens: int
    dropped: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The memory leg: windows of the agent's other messages, each under its header line
    # (session and date), in time order.
    memory: list[MemoryWindow] = field(default_factory=list)

    def tokens_of(self, *kinds: str) -> int:
        return sum(p.counted for p in self.parts if p.kind in kinds)

    @property
    def message_tokens(self) -> int:
        return sum(c.tokens for c in self.messages)

    @property
    def memory_tokens(self) -> int:
        return sum(w.tokens for w in self.memory)

    @property
    def ratio(self) -> float:
        """What this turn needs, against the request's budget."""
        return self.required_tokens / self.request.max_tokens

    @property
    def degraded(self) -> list[str]:
        """["semantic"] when the query could not be embedded: the relevance leg dropped out
        (relevant facts and the memory leg matched by keyword only); `warnings` says why.
        Also whatever else /search reports degraded for the memory leg."""
        vector = self.request.memo.get("query_vector")
        out = ["semantic"] if vector is not None and vector[0] is None else []
        return out + [d for d in self.request.memo.get("memory_degraded", []) if d not in out]

    def usage(self, observed_tokens: int | None = None) -> Usage:
        """Seed 001's context usage: what the agent's model holds (the system documents the
        prompt carries, the summary, every message after the latest compact marker) against
        its context window, or `observed_tokens` when the agent counted them (usage.py)."""
        return usage_measure(
            request=self.request, parts=self.parts, observed_tokens=observed_tokens
        )


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


@dataclass
class _Budget:
    """What fits in `budget` tokens, tried unit by unit in priority order."""

    budget: int
    units: Units = field(default_factory=dict)  # a session message's tool-call turn
    used: int = 0
    kept_parts: set[int] = field(default_factory=set)
    kept_msgs: set = field(default_factory=set)
    decided: set = field(default_factory=set)  # a message found by two legs is tried once
    dropped: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def take(self, tokens: int) -> bool:
        if self.used + tokens <= self.budget:
            self.used += tokens
            return True
        return False

    def reserve_memory(self, i: int, part: Part) -> None:
        """MEMORY.md always stays (seed 004): whole, or cut to the budget with a warning (a
        user's MEMORY.md, after the agent's, to the room it left)."""
        room = self.budget - self.used
        if part.counted > room:
            whole = part.tokens
            part.content, part.tokens = _truncate(part.content, room)
            part.truncated = True
            self.warnings.append(
                f"{part.name} is {whole} tokens, over the {room}-token budget: "
                f"truncated to {part.tokens} tokens"
            )
        self.take(part.counted)
        self.kept_parts.add(i)

    def keep_newest(self, c: Candidate) -> None:
        """The newest message always stays, with its turn: cut to the room MEMORY.md left,
        each member to its share by size (empty when MEMORY.md alone fills the budget)."""
        unit = self.units.get(c.message.id, [c])
        room = self.budget - self.used
        total = sum(m.tokens for m in unit)
        for m in unit:
            share = room * m.tokens // total if total else 0
            if m.tokens > share:
                m.content, m.tokens = _truncate(m.content, share)
                m.truncated = True
            self.take(m.tokens)
            self.kept_msgs.add(m.message.id)
            self.decided.add(m.message.id)

    def fit_part(self, i: int, part: Part) -> None:
        if self.take(part.counted):
            self.kept_parts.add(i)
        else:
            self.dropped.append({"kind": part.kind, "name": part.name, "tokens": part.tokens})

    def fit_memory(self, hit: MemoryHit, window: MemoryWindow, opened: set[int]) -> None:
        """A memory hit with the span messages not placed yet (and its window's header when
        the hit opens the window); the hit alone when that is over; else dropped."""
        new = [c for c in hit.span if c.message.id not in self.decided]
        if not new:
            return
        header = 0 if hit.window in opened else window.header_tokens
        hit_is_new = any(c is hit.candidate for c in new)
        alone = [hit.candidate] if hit_is_new and len(new) > 1 else None
        for unit in (new, alone):
            if unit is not None and self.take(header + sum(c.tokens for c in unit)):
                opened.add(hit.window)
                for c in unit:
                    self.kept_msgs.add(c.message.id)
                    self.decided.add(c.message.id)
                return
        self.decided.add(hit.candidate.message.id)
        tokens = header + sum(c.tokens for c in new)
        self.dropped.append(
            {"kind": "memory", "name": str(hit.candidate.message.id), "tokens": tokens}
        )

    def fit_message(self, c: Candidate) -> None:
        """`c` with its turn, whole, or none of it (each member reported dropped)."""
        if c.message.id in self.decided:
            return
        unit = self.units.get(c.message.id, [c])
        self.decided.update(m.message.id for m in unit)
        if self.take(sum(m.tokens for m in unit)):
            self.kept_msgs.update(m.message.id for m in unit)
            return
        for m in unit:
            self.dropped.append({"kind": "message", "name": str(m.message.id), "tokens": m.tokens})


def _build_request(
    agent: Agent, session: Session, query: str | None, max_tokens: int | None
) -> ContextRequest:
    config = agent.config
    return ContextRequest(
        agent=agent,
        config=config,
        session=session,
        query=query,
        max_tokens=max_tokens or config.context_max_tokens,
    )


def _collect_parts(request: ContextRequest) -> list[Part]:
    """The system providers' parts in provider order, every one with its token count."""
    parts: list[Part] = []
    given: set[tuple[str, str]] = set()
    for provider in system_providers():
        for part in provider(request):
            # A fact both salient and relevant is given once, where it came first.
            if (part.kind, part.name) not in given:
                given.add((part.kind, part.name))
                parts.append(part)
    uncounted = [p for p in parts if p.tokens is None]  # summary, facts: short, counted here
    for part, n in zip(uncounted, count_tokens_batch([p.content for p in uncounted]), strict=True):
        part.tokens = n
    return parts


def _collect_candidates(request: ContextRequest) -> tuple[list, dict, str]:
    """The recency leg (oldest first), every leg's candidates by message id (with the calls
    and results their turns lack), and any warning."""
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
    complete_turns(request, found, recent)
    return recent, found, warning


def _memory_leg(request: ContextRequest, found: dict) -> MemoryLeg:
    """The memory leg, past every message the other legs hold (its warning, if any, joins
    the context's)."""
    return legs.memory(request, held=set(found))


def _is_memory(part: Part) -> bool:
    """The agent's MEMORY.md, or the session's user's (users/<user>/MEMORY.md)."""
    name = part.name
    own = name.startswith("users/") and name.endswith("/" + names.MEMORY)
    return part.kind == "document" and (name == names.MEMORY or own)


def _fit(budget: _Budget, parts: list[Part], recent: list, found: dict, leg: MemoryLeg) -> None:
    """Try every unit in budget priority order (module docstring)."""
    memories = [i for i, p in enumerate(parts) if _is_memory(p)]
    for i in memories:
        budget.reserve_memory(i, parts[i])
    if recent:
        budget.keep_newest(found[recent[-1].id])
    for i, part in enumerate(parts):
        if part.kind != "fact" and i not in memories:
            budget.fit_part(i, part)
    for m in reversed(recent):
        budget.fit_message(found[m.id])
    for i, part in enumerate(parts):
        if part.kind == "fact":
            budget.fit_part(i, part)
    for c in sorted(
        (c for c in found.values() if "salience" in c.legs),
        key=lambda c: c.message.created_at,
        reverse=True,
    ):
        budget.fit_message(c)
    for c in sorted(
        (c for c in found.values() if "relevance" in c.legs), key=lambda c: -(c.similarity or 0)
    ):
        budget.fit_message(c)
    opened: set[int] = set()
    for hit in leg.hits:
        budget.fit_memory(hit, leg.windows[hit.window], opened)


def _kept_windows(memory: MemoryLeg, kept: set) -> list[MemoryWindow]:
    """The memory windows with what fitted of them, in time order."""
    out = []
    for window in memory.windows:
        messages = [c for c in window.messages if c.message.id in kept]
        if messages:
            out.append(replace(window, messages=messages))
    return sorted(
        out, key=lambda w: (w.messages[0].message.created_at, str(w.messages[0].message.id))
    )


def _memory_required(memory: MemoryLeg) -> int:
    return sum(w.tokens for w in memory.windows)


def get_context(
    *, agent: Agent, session: Session, query: str | None, max_tokens: int | None
) -> Context:
    """Assemble the context for one turn; never over `max_tokens`, never without MEMORY.md
    (when it exists) or the newest message."""
    request = _build_request(agent, session, query, max_tokens)
    parts = _collect_parts(request)
    recent, found, warning = _collect_candidates(request)
    memory = _memory_leg(request, found)
    required = sum(p.counted for p in parts) + sum(c.tokens for c in found.values())
    required += _memory_required(memory)
    budget = _Budget(request.max_tokens, units=turn_units(found))
    _fit(budget, parts, recent, found, memory)
    messages = [c for c in found.values() if c.message.id in budget.kept_msgs]
    messages.sort(key=lambda c: (c.message.created_at, str(c.message.id)))
    return Context(
        request=request,
        parts=[p for i, p in enumerate(parts) if i in budget.kept_parts],
        messages=messages,
        required_tokens=required,
        used_tokens=budget.used,
        dropped=budget.dropped,
        warnings=budget.warnings + [w for w in (warning, memory.warning) if w],
        memory=_kept_windows(memory, budget.kept_msgs),
    )
