"""Per-agent settings: every threshold and limit from the seeds, with the seeds' defaults.

An agent stores only its overrides (Agent.settings); `AgentConfig` is the effective view.
Where two seeds disagree the choice is a setting, and the default is named here.
"""

from dataclasses import asdict, dataclass, fields
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from apps.core.errors import InvalidInput

Ratio = Annotated[float, Field(ge=0.0, le=1.0)]
Positive = Annotated[int, Field(ge=1)]
NonNegative = Annotated[int, Field(ge=0)]

MIB = 1024 * 1024


@dataclass(frozen=True)
class AgentConfig:
    # --- conversation store (seed 000, seed 002) ---
    max_history_messages: Positive = 16  # hot window size (seed 000)
    max_history_bytes: Positive = 5 * MIB  # compaction trigger by size (seed 000)
    compact_target_ratio: Ratio = 0.8  # trim to 80% on compaction (seed 000)
    working_memory_cap: Positive = 50  # cached recent messages per session (seed 002)
    max_content_bytes: Positive = 256 * 1024  # one message's content
    importance_user: Ratio = 0.5  # default importance by role (seed 002)
    importance_assistant: Ratio = 0.5
    importance_tool: Ratio = 0.3
    importance_system: Ratio = 0.1
    # --- search (seed 000) ---
    search_context_before: NonNegative = 2  # messages of context before each hit
    search_context_after: NonNegative = 1  # and after
    # Hybrid message search: rerank the top `rerank_candidates` fused hits (docs/search.md,
    # "Reranking"). Off by default: on 2 cores it adds ~0.3 s a query, over the p95 targets.
    rerank: bool = False
    rerank_candidates: Annotated[int, Field(ge=2, le=200)] = 50
    # --- context assembly (seed 001, seed 002) ---
    recency_limit: Positive = 10  # tri-hybrid recency leg
    salience_threshold: Ratio = 0.85  # tri-hybrid salience leg: importance >= this
    relevance_threshold: Ratio = 0.655  # tri-hybrid relevance leg: cosine > this
    context_window_tokens: Positive = 128_000  # the agent model's context size (seed 001)
    flush_ratio: Ratio = 0.6  # usage at which get_context flushes facts (seed 001)
    compact_ratio: Ratio = 0.7  # usage at which get_context writes, then compacts (seed 001)
    compact_keep_last: Positive = 4  # messages kept after a write-then-compact (seed 001)
    flush_max_facts: Positive = 20  # facts one flush may store
    # --- rolling summary (seed 000) ---
    summary_chunk_tokens: Positive = 4000  # messages per summary LLM call, in tokens
    summary_max_tokens: Positive = 1024  # the rolling summary is kept under this
    # --- consolidation (seed 002, seed 004) ---
    consolidation_interval_hours: Positive = 6
    memory_window: Positive = 50  # message count that triggers auto-consolidation (seed 004)
    consolidation_keep: NonNegative = 25  # newest messages auto-consolidation leaves alone
    consolidation_chunk_tokens: Positive = 8000  # messages per consolidation LLM call
    max_memory_bytes: Positive = 8192  # MEMORY.md size before compression (seed 004)
    consolidation_timeout_seconds: Annotated[float, Field(gt=0)] = 30.0  # seed 004
    raw_fallback_messages: Positive = 10  # [raw-fallback] history entry size (seed 004)
    raw_fallback_chars: Positive = 200
    # Seed 000 clears messages on reset; seed 004 consolidates first. "always": every message
    # a reset deletes is archived whole first (an LLM's history entry is a summary, not the
    # text); "fallback": only those no LLM consolidation covered.
    reset_archive: Literal["always", "fallback"] = "always"
    # --- learnings and error memory (seeds 000, 001) ---
    error_memory_ttl_days: Positive = 90  # an error record's life, refreshed on every hit
    error_hints_limit: NonNegative = 5  # hints per failing tool (append, get_context)
    # --- long-term memory: facts (seed 001, seed 002) ---
    fact_dedup_threshold: Ratio = 0.92  # same-category cosine at or above this is one fact
    fact_default_importance: Ratio = 0.5  # importance of a fact saved without one
    # Review queue (issue 11): facts the lifecycle proposes (flush, extraction) and saves
    # with `review: true` wait as "pending" (not recalled, not in get_context) until an
    # editor approves them on the review pages. Off: both are active at once.
    fact_review: bool = False
    category_match_threshold: Ratio = 0.35  # cosine for auto-categorisation and recall tier 1
    salience_decay_per_day: Ratio = 0.95  # recency decay factor per day since last access
    salience_access_boost: Annotated[float, Field(ge=0.0)] = 0.2  # x ln(1 + access_count)
    salience_high_threshold: Ratio = 0.8  # facts at or above this surface in get_context
    recall_k: Positive = 5  # memory_recall results when k is not given
    recall_max_categories: Positive = 3  # categories searched by recall tier 2
    recall_min_similarity: Ratio = 0.25  # a scoped hit counts toward recall_scoped_min above this
    recall_scoped_min: Positive = 3  # fewer scoped hits than this: flat fallback (tier 3)
    recall_salience_weight: Ratio = 0.2  # score = (1 - w) * cosine + w * salience
    memory_search_k: Positive = 10  # memory_search results when k is not given
    # --- get_context (seed 001, seed 002) ---
    context_max_tokens: Positive = 8192  # budget when the request gives no max_tokens
    context_salience_limit: NonNegative = 10  # messages from the salience leg
    context_relevance_limit: NonNegative = 10  # messages from the relevance leg
    context_fact_limit: NonNegative = 10  # high-salience facts in the system part
    # With a query, facts relevant to it join the salient ones: cosine at or above this, or
    # a keyword match (a fact saved a moment ago has no vector yet).
    context_fact_relevance_threshold: Ratio = 0.4
    context_relevant_fact_limit: NonNegative = 5

    def importance_for_role(self, role: str) -> float:
        return float(getattr(self, f"importance_{role}", 0.5))

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


_adapter = TypeAdapter(AgentConfig)
FIELD_NAMES = frozenset(f.name for f in fields(AgentConfig))


def build_config(overrides: dict[str, Any] | None) -> AgentConfig:
    """The effective config for stored overrides; unknown stale keys are ignored."""
    known = {k: v for k, v in (overrides or {}).items() if k in FIELD_NAMES}
    try:
        return _adapter.validate_python(known)
    except PydanticValidationError:
        # A stored override that no longer validates must not take the agent down.
        return AgentConfig()


def validate_overrides(changes: dict[str, Any]) -> dict[str, Any]:
    """Validate a partial update; raise InvalidInput naming the first bad key."""
    for key in changes:
        if key not in FIELD_NAMES:
            raise InvalidInput(f"unknown setting '{key}'", loc=["body", "settings", key])
    try:
        _adapter.validate_python(changes)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        key = err["loc"][0] if err["loc"] else "settings"
        raise InvalidInput(f"{key}: {err['msg']}", loc=["body", "settings", key]) from exc
    return changes
