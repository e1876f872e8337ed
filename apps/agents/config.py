"""Per-agent settings: every threshold and limit from the seeds, with the seeds' defaults.

An agent stores only its overrides (Agent.settings); `AgentConfig` is the effective view.
Where two seeds disagree the choice is a setting, and the default is named here.

Every number has a maximum (`le`), the global one: past it a single call would take the
service down (memory, CPU, a provider call too large to answer). The limits that protect
the service (CEILING_KEYS) also have a per-team ceiling an admin sets (Team.ceilings, at
most the global maximum); an agent may lower such a limit but not raise it past its team's
ceiling, and the effective config is clamped to it.
"""

import math
from dataclasses import asdict, dataclass, fields
from typing import Annotated, Any, Literal, Protocol, cast, get_type_hints

from annotated_types import Ge, Gt, Le
from pydantic import Field, TypeAdapter
from pydantic import ValidationError as PydanticValidationError

from apps.core.errors import InvalidInput

MIB = 1024 * 1024

Ratio = Annotated[float, Field(ge=0.0, le=1.0)]


def Count(high: int, *, low: int = 1) -> Any:  # Any: pydantic's Field() returns Any
    """The bounds of an int in [low, high], as in `Annotated[int, Count(high)]`."""
    return Field(ge=low, le=high)


# Global maxima shared by several fields. Sizes: a message or entry is held whole in memory,
# tokenised and embedded, so 1 MiB; token budgets: the largest model contexts (10M); an LLM
# call's input: 200k tokens, over what any provider accepts in one call.
MAX_CONTENT = 1 * MIB
MAX_CONTEXT_TOKENS = 10_000_000
MAX_LLM_CHUNK_TOKENS = 200_000
MAX_K = 100  # results of one search or recall (the request schemas' `k` bound too)
MAX_LEG = 200  # rows one get_context leg loads


@dataclass(frozen=True)
class AgentConfig:
    # --- conversation store (seed 000, seed 002) ---
    # Hot window size (seed 000); loaded per call
    max_history_messages: Annotated[int, Count(1000)] = 16
    # Compaction trigger by size (seed 000)
    max_history_bytes: Annotated[int, Count(64 * MIB)] = 5 * MIB
    compact_target_ratio: Ratio = 0.8  # trim to 80% on compaction (seed 000)
    # Cached recent messages per session (seed 002)
    working_memory_cap: Annotated[int, Count(1000)] = 50
    max_content_bytes: Annotated[int, Count(MAX_CONTENT)] = 256 * 1024  # one message's content
    # Messages one append may carry (also bounded by MEMORYHUB_MAX_BATCH_MESSAGES); one
    # transaction holds them all.
    max_batch_messages: Annotated[int, Count(10_000)] = 1000
    importance_user: Ratio = 0.5  # default importance by role (seed 002)
    importance_assistant: Ratio = 0.5
    importance_tool: Ratio = 0.3
    importance_system: Ratio = 0.1
    # --- search (seed 000) ---
    # Messages of context before each hit
    search_context_before: Annotated[int, Count(20, low=0)] = 2
    search_context_after: Annotated[int, Count(20, low=0)] = 1  # and after
    # Semantic mode over "all" history (every message keeps its vector), or seed 000's
    # "recent": only messages after each session's compact cutoff, as its vector store is
    # cleaned on compaction. Keyword and hybrid modes cover all history either way.
    semantic_scope: Literal["all", "recent"] = "all"
    # Hybrid search: rerank the top `rerank_candidates` fused hits by MaxSim over their
    # stored token states (docs/search.md, "Reranking"); no model runs at query time.
    rerank: bool = True
    rerank_candidates: Annotated[int, Count(200, low=2)] = 100
    # --- context assembly (seed 001, seed 002) ---
    recency_limit: Annotated[int, Count(MAX_LEG)] = 10  # tri-hybrid recency leg
    salience_threshold: Ratio = 0.85  # tri-hybrid salience leg: importance >= this
    relevance_threshold: Ratio = 0.655  # tri-hybrid relevance leg: cosine > this
    # The agent model's context
    context_window_tokens: Annotated[int, Count(MAX_CONTEXT_TOKENS)] = 128_000
    flush_ratio: Ratio = 0.6  # usage at which get_context flushes facts (seed 001)
    compact_ratio: Ratio = 0.7  # usage at which get_context writes, then compacts (seed 001)
    # Messages kept after a write-then-compact (seed 001)
    compact_keep_last: Annotated[int, Count(1000)] = 4
    flush_max_facts: Annotated[int, Count(200)] = 20  # facts one flush may store
    # --- rolling summary (seed 000) ---
    # Messages per summary LLM call
    summary_chunk_tokens: Annotated[int, Count(MAX_LLM_CHUNK_TOKENS)] = 4000
    # The rolling summary is kept under this
    summary_max_tokens: Annotated[int, Count(100_000)] = 1024
    # The window (/window, get_context's recency leg) also carries the hot messages that left
    # it and that the summary does not cover yet, so none sits in neither while the summary
    # waits for its trigger (docs/lifecycle.md, "Window and summary"). Off: seed 000's plain
    # window of max_history_messages.
    window_includes_unsummarised: bool = True
    # The newest this many of them at most: a summary that keeps failing cannot grow the window.
    window_unsummarised_max: Annotated[int, Count(1000, low=0)] = 64
    # --- consolidation (seed 002, seed 004) ---
    consolidation_interval_hours: Annotated[int, Count(24 * 365)] = 6
    # Message count that triggers auto-consolidation
    memory_window: Annotated[int, Count(10_000)] = 50
    # Newest messages auto-consolidation skips
    consolidation_keep: Annotated[int, Count(10_000, low=0)] = 25
    # Per consolidation call
    consolidation_chunk_tokens: Annotated[int, Count(MAX_LLM_CHUNK_TOKENS)] = 8000
    # Issue 23: every lifecycle call sends max_tokens. A consolidation answer carries MEMORY.md
    # (up to max_memory_bytes, ~3 bytes a token) plus a history entry; extraction a fact list.
    consolidation_max_tokens: Annotated[int, Count(100_000)] = 4096
    extraction_max_tokens: Annotated[int, Count(100_000)] = 1024
    # MEMORY.md size before compression (seed 004)
    max_memory_bytes: Annotated[int, Count(MAX_CONTENT)] = 8192
    # Seed 004; also the lease of a lifecycle run and an API wait, so 10 minutes at most.
    consolidation_timeout_seconds: Annotated[float, Field(gt=0, le=600.0)] = 30.0
    # [raw-fallback] history entry size (seed 004)
    raw_fallback_messages: Annotated[int, Count(1000)] = 10
    raw_fallback_chars: Annotated[int, Count(100_000)] = 200
    # Seed 004's recap: the messages a consolidation left (after the newest consolidated one)
    # that the window does not carry in full, the newest recap_messages of them, each cut to
    # recap_message_chars (docs/lifecycle.md, "Recap"). 0: no recap.
    recap_messages: Annotated[int, Count(MAX_LEG, low=0)] = 25
    recap_message_chars: Annotated[int, Count(4000)] = 200
    # Seed 000 clears messages on reset; seed 004 consolidates first. "always": every message
    # a reset deletes is archived whole first (an LLM's history entry is a summary, not the
    # text); "fallback": only those no LLM consolidation covered.
    reset_archive: Literal["always", "fallback"] = "always"
    # --- learnings and error memory (seeds 000, 001) ---
    # An error record's life, refreshed on every hit
    error_memory_ttl_days: Annotated[int, Count(3650)] = 90
    # Hints per failing tool (append, get_context)
    error_hints_limit: Annotated[int, Count(50, low=0)] = 5
    # --- long-term memory: facts (seed 001, seed 002) ---
    fact_dedup_threshold: Ratio = 0.92  # same-category cosine at or above this is one fact
    fact_default_importance: Ratio = 0.5  # importance of a fact saved without one
    # Review queue (issue 11): facts the lifecycle proposes (flush, extraction) and saves
    # with `review: true` wait as "pending" (not recalled, not in get_context) until an
    # editor approves them on the review pages. Off: both are active at once.
    fact_review: bool = False
    category_match_threshold: Ratio = 0.35  # cosine for auto-categorisation and recall tier 1
    salience_decay_per_day: Ratio = 0.95  # recency decay factor per day since last access
    # x ln(1 + access_count); past 10 one access outweighs every other term.
    salience_access_boost: Annotated[float, Field(ge=0.0, le=10.0)] = 0.2
    salience_high_threshold: Ratio = 0.8  # facts at or above this surface in get_context
    # Memory_recall results when k is not given; caps a given k
    recall_k: Annotated[int, Count(MAX_K)] = 5
    recall_max_categories: Annotated[int, Count(50)] = 3  # categories searched by recall tier 2
    recall_min_similarity: Ratio = 0.25  # a scoped hit counts toward recall_scoped_min above this
    # Fewer scoped hits than this: flat fallback (tier 3)
    recall_scoped_min: Annotated[int, Count(MAX_K)] = 3
    recall_salience_weight: Ratio = 0.2  # score = (1 - w) * cosine + w * salience
    # Memory_search results when k is not given; caps k
    memory_search_k: Annotated[int, Count(MAX_K)] = 10
    # --- get_context (seed 001, seed 002) ---
    # Budget when no max_tokens; caps it
    context_max_tokens: Annotated[int, Count(MAX_CONTEXT_TOKENS)] = 8192
    # Messages from the salience leg
    context_salience_limit: Annotated[int, Count(MAX_LEG, low=0)] = 10
    # Messages from the relevance leg
    context_relevance_limit: Annotated[int, Count(MAX_LEG, low=0)] = 10
    # High-salience facts in the system part
    context_fact_limit: Annotated[int, Count(MAX_LEG, low=0)] = 10
    # With a query, facts relevant to it join the salient ones: cosine at or above this, or
    # a keyword match (a fact saved a moment ago has no vector yet).
    context_fact_relevance_threshold: Ratio = 0.4
    context_relevant_fact_limit: Annotated[int, Count(MAX_LEG, low=0)] = 5
    # Issue 24's memory leg, beside seed 002's three: the query against the agent's whole
    # history through /search's hybrid ranking; each hit brings its /search context window
    # (search_context_before/after), packed after the other legs in rank order. Off: seed
    # 002's three legs alone. The limit is the hits tried, after those the other legs hold.
    context_memory: bool = True
    context_memory_limit: Annotated[int, Count(MAX_K, low=0)] = 20
    # Relative dates in the memory leg's messages ("yesterday", "last week") followed by the
    # date they name, counted from the day each message was written (docs/memory.md; on
    # LoCoMo it writes the answer's date for 0.90 of temporal questions, against 0.58).
    context_memory_resolve_dates: bool = True
    # --- workspace import (apps.entries.selectors.workspace_unpacking): checked while streaming ---
    # The request body (compressed)
    import_max_archive_bytes: Annotated[int, Count(64 * MIB)] = 64 * MIB
    # All members, uncompressed
    import_max_unpacked_bytes: Annotated[int, Count(256 * MIB)] = 256 * MIB
    import_max_members: Annotated[int, Count(100_000)] = 100_000  # files and folders
    # One file (HISTORY.md can be large)
    import_max_member_bytes: Annotated[int, Count(32 * MIB)] = 32 * MIB

    def importance_for_role(self, role: str) -> float:
        return float(getattr(self, f"importance_{role}", 0.5))

    def as_dict(self) -> dict[str, Any]:  # Any: dataclasses.asdict's values
        return asdict(self)


_adapter = TypeAdapter(AgentConfig)
FIELD_NAMES = frozenset(f.name for f in fields(AgentConfig))

# The limits that protect the service: sizes, batch sizes, k's, token budgets, timeouts.
# A bigger value costs more per call, so a team ceiling bounds it. (Not e.g. memory_window:
# a smaller one means more work.)
CEILING_KEYS = (
    "max_content_bytes",
    "max_history_messages",
    "max_history_bytes",
    "max_memory_bytes",
    "max_batch_messages",
    "working_memory_cap",
    "search_context_before",
    "search_context_after",
    "rerank_candidates",
    "recency_limit",
    "window_unsummarised_max",
    "recap_messages",
    "recall_k",
    "memory_search_k",
    "context_salience_limit",
    "context_relevance_limit",
    "context_fact_limit",
    "context_relevant_fact_limit",
    "context_memory_limit",
    "error_hints_limit",
    "flush_max_facts",
    "context_window_tokens",
    "context_max_tokens",
    "summary_chunk_tokens",
    "summary_max_tokens",
    "consolidation_chunk_tokens",
    "consolidation_max_tokens",
    "extraction_max_tokens",
    "consolidation_timeout_seconds",
    "import_max_archive_bytes",
    "import_max_unpacked_bytes",
    "import_max_members",
    "import_max_member_bytes",
)


@dataclass(frozen=True)
class Bounds:
    kind: type[int] | type[float]
    low: float  # inclusive, or exclusive when `open_low`
    high: float
    open_low: bool = False


def _bounds() -> dict[str, Bounds]:
    out = {}
    for name, hint in get_type_hints(AgentConfig, include_extras=True).items():
        base = getattr(hint, "__origin__", hint)
        if base not in (int, float):
            continue  # bool, Literal
        meta = [m for f in hint.__metadata__ for m in getattr(f, "metadata", [f])]
        low = next((m.ge for m in meta if isinstance(m, Ge)), None)
        gt = next((m.gt for m in meta if isinstance(m, Gt)), None)
        high = next(m.le for m in meta if isinstance(m, Le))  # every number has a maximum
        # annotated_types types a bound as a comparable protocol; ours are numbers
        low_bound = cast(float, gt if low is None else low)
        out[name] = Bounds(base, low_bound, cast(float, high), open_low=low is None)
    return out


# Every numeric setting's type and range, by name; `high` is the global maximum.
NUMERIC: dict[str, Bounds] = _bounds()
assert set(CEILING_KEYS) <= set(NUMERIC)


# Any: a team's ceilings, a JSONField's value, checked here.
def effective_ceilings(ceilings: dict[str, Any] | None) -> dict[str, int | float]:
    """Every ceiling key with its team value, the global maximum where none (or a stale or
    invalid one) is stored."""
    stored = ceilings or {}
    out: dict[str, int | float] = {}
    for key in CEILING_KEYS:
        bounds = NUMERIC[key]
        value: Any = stored.get(key)  # Any: a team's stored JSON, checked below
        ok = isinstance(value, bounds.kind | int) and not isinstance(value, bool)
        out[key] = value if ok and bounds.low <= value <= bounds.high else bounds.high
    return out


# Any: a stored override, a JSONField's value.
def _at_most_max(key: str, value: Any) -> Any:
    # An override stored before its maximum existed (or was lowered) counts as the maximum.
    bounds = NUMERIC.get(key)
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return bounds.high if bounds and number and value > bounds.high else value


# Any: an agent's overrides and its team's ceilings, JSONField values.
def build_config(
    overrides: dict[str, Any] | None, ceilings: dict[str, Any] | None = None
) -> AgentConfig:
    """The effective config for stored overrides, clamped to the team's ceilings; unknown
    stale keys are ignored."""
    known = {k: _at_most_max(k, v) for k, v in (overrides or {}).items() if k in FIELD_NAMES}
    try:
        config = _adapter.validate_python(known)
    except PydanticValidationError as exc:
        # A stored override that no longer validates must not take the agent down: it is
        # dropped, and the others kept.
        bad = {err["loc"][0] for err in exc.errors() if err["loc"]}
        try:
            config = _adapter.validate_python({k: v for k, v in known.items() if k not in bad})
        except PydanticValidationError:
            config = AgentConfig()
    caps = effective_ceilings(ceilings)
    clamped = {k: cap for k, cap in caps.items() if getattr(config, k) > cap}
    return AgentConfig(**{**config.as_dict(), **clamped}) if clamped else config


# Any: JSON values from a request body, validated here.
def validate_overrides(
    changes: dict[str, Any], ceilings: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Validate a partial update; raise InvalidInput naming the first bad key, also for a
    value over the team's ceiling."""
    for key in changes:
        if key not in FIELD_NAMES:
            raise InvalidInput(f"unknown setting '{key}'", loc=["body", "settings", key])
    try:
        validated = _adapter.validate_python(changes)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        bad = err["loc"][0] if err["loc"] else "settings"
        raise InvalidInput(f"{bad}: {err['msg']}", loc=["body", "settings", bad]) from exc
    values = {key: getattr(validated, key) for key in changes}  # coerced: "5" -> 5
    caps = effective_ceilings(ceilings)
    for key, value in values.items():
        if key in caps and value > caps[key]:
            raise InvalidInput(
                f"{key}: {value} is over this team's ceiling of {caps[key]}",
                loc=["body", "settings", key],
            )
    return values


def validate_ceilings(ceilings: object) -> dict[str, int | float]:
    """Validate a team's ceilings: known keys, each a number within the setting's range (at
    most the global maximum). Raise InvalidInput naming the first bad key."""
    if not isinstance(ceilings, dict):
        raise InvalidInput("ceilings must be an object of setting: ceiling", loc=["ceilings"])
    for key, value in ceilings.items():
        if key not in CEILING_KEYS:
            raise InvalidInput(f"'{key}' has no ceiling", loc=["ceilings", key])
        b = NUMERIC[key]
        if isinstance(value, bool) or not isinstance(value, b.kind | int):
            kind = "a whole number" if b.kind is int else "a number"
            raise InvalidInput(f"{key}: must be {kind}", loc=["ceilings", key])
        too_low = value <= b.low if b.open_low else value < b.low
        if too_low or value > b.high or not math.isfinite(value):
            raise InvalidInput(
                f"{key}: {value} is outside {b.low}..{b.high} (the global maximum)",
                loc=["ceilings", key],
            )
    # A ceiling at the global maximum is the default: not stored.
    return {k: v for k, v in ceilings.items() if v < NUMERIC[k].high}


class _Team(Protocol):
    # Any: Team.ceilings is a JSONField, whose value django-stubs types as Any.
    ceilings: Any


class _OfTeam(Protocol):
    """An agent, as far as its team's ceilings go: a Protocol, because models.py imports
    this module (an import of Agent here would close a circle)."""

    @property
    def team(self) -> _Team: ...


def within_ceiling(agent: _OfTeam, key: str, value: float | None, *, loc: list[str | int]) -> None:
    """For a request-level number (a `k`, a `max_tokens`) bounded by the ceiling of setting
    `key`: InvalidInput at `loc` when `value` is over the agent's team's ceiling."""
    cap = effective_ceilings(agent.team.ceilings)[key]
    if value is not None and value > cap:
        raise InvalidInput(f"{value} is over this team's ceiling of {cap} ({key})", loc=loc)
