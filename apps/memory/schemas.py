"""Request and response bodies for the memory tools and get_context."""

import uuid
from datetime import date as calendar_date
from typing import Literal

from ninja import Schema
from pydantic import Field

from apps.agents.schemas import ForUser, ReadFor, ScopedWrite
from apps.conversations.schemas import LegOut, MessageIn, MessageOut, QuotedMessage
from apps.core.schemas import Input
from apps.facts.schemas import FactOut
from apps.learnings.schemas import HintOut
from apps.lifecycle.schemas import RunOut


class MessagesIn(Input):
    # The global maximum of max_batch_messages; the agent's own limit (<= its team's
    # ceiling, <= MEMORYHUB_MAX_BATCH_MESSAGES) answers 413.
    messages: list[MessageIn] = Field(..., min_length=1, max_length=10_000)


class AppendOut(Schema):
    created: int
    deduplicated: int
    messages: list[MessageOut]
    lifecycle: list[str] = Field(
        description="What the append set off in the background: summary, consolidate, compact."
    )
    hints: list[HintOut] = Field(
        description="For failing tool messages: the tool's earlier failures, best first."
    )


class ImportQuery(Input):
    force: bool = False


class ImportOut(Schema):
    created: int
    overwritten: int
    names: list[str]
    history_entries: int
    learnings: int


class SaveIn(ScopedWrite):
    content: str
    category: str | None = None
    key: str | None = Field(None, max_length=200)
    importance: float | None = Field(None, ge=0.0, le=1.0)
    session_id: str | None = Field(None, max_length=200)
    review: bool = Field(
        False,
        description="With the agent's fact_review on, the fact waits as pending (not recalled, "
        "not in get_context) until an editor approves it. Off: ignored.",
    )


class SaveOut(Schema):
    fact: FactOut
    action: str
    deduped: bool
    existing_id: int | None
    similarity: float | None
    log: str = Field(description='The daily log the save was appended to; "" when pending.')


class RecallIn(ReadFor):
    query: str = Field(..., max_length=4000)
    session_id: str | None = Field(
        None, max_length=200, description="Recall as this session's user does."
    )
    category: str | None = None
    k: int | None = Field(None, ge=1, le=100)


class RecallHitOut(Schema):
    fact: FactOut
    similarity: float
    score: float
    tier: str


class RecallOut(Schema):
    items: list[RecallHitOut]
    categories: list[str]
    fell_back: bool
    degraded: list[str] = Field(
        default_factory=list,
        description='["semantic"] when the query could not be embedded and keyword matching '
        "stood in. Empty when healthy.",
    )


class SearchIn(ReadFor):
    query: str = Field(..., max_length=4000)
    session_id: str | None = Field(
        None, max_length=200, description="Search as this session's user does."
    )
    k: int | None = Field(None, ge=1, le=100)


class SearchHitOut(Schema):
    source: str = Field(description="Where the hit came from: document, entry, fact, learning "
                        "(an active learning) or history (a HISTORY entry).")  # fmt: skip
    id: int
    name: str
    content: str
    score: float
    legs: dict[str, float]


class SearchOut(Schema):
    items: list[SearchHitOut]
    degraded: list[str] = Field(
        default_factory=list,
        description='["semantic"] when the query could not be embedded and keyword matching '
        'stood in; "rerank" when the reranker could not run (its token projection refused) '
        "and the fused order stands. Empty when healthy.",
    )


class ContextIn(ForUser):
    session_id: str = Field(..., max_length=200)
    query: str | None = Field(None, max_length=16000)
    max_tokens: int | None = Field(None, ge=1, le=10_000_000)
    lifecycle: Literal["background", "wait", "off"] = Field(
        "background",
        description="At flush_ratio or compact_ratio usage: act in the background, act now "
        "and return the re-assembled context (wait), or only report (off).",
    )
    observed_tokens: int | None = Field(
        None,
        ge=0,
        le=10_000_000,
        strict=True,
        description="Your model's own count of its last prompt (input tokens only, never "
        "output), as Letta and LlamaIndex measure it. Given, it stands in for memoryhub's "
        "estimate of the context usage.",
    )


class PartOut(Schema):
    kind: str
    name: str
    title: str = Field(
        "",
        description="The plain heading to put the part under in a prompt: 'Agent memory' "
        "for MEMORY.md, 'What you know about ana' for users/ana/MEMORY.md.",
    )
    content: str
    tokens: int
    truncated: bool = False  # MEMORY.md over the whole budget is cut to it (see warnings)


class ContextFactOut(Schema):
    id: int
    category: str
    key: str
    value: str
    importance: float
    salience: float
    tokens: int


class ContextMessageOut(QuotedMessage):
    importance: float
    metadata: dict
    tokens: int
    legs: list[str] = Field(
        description="The legs that found it: recency, salience, relevance (this session), "
        "memory (the agent's whole history); turn: the call or a result of a tool-call turn "
        "another leg found part of (a call and its results are kept or dropped together)."
    )
    similarity: float | None
    truncated: bool


class MemoryMessageOut(ContextMessageOut):
    hit: bool = Field(
        description="A hit of the memory leg (else its context window brought the message)."
    )
    rank: int | None = Field(description="A hit's rank in /search's hybrid ranking (1: best).")
    score: float | None = Field(description="A hit's score there.")
    search_legs: dict[str, LegOut] | None = Field(
        description="A hit's search legs (bm25, vector, neighbour, rerank): rank and score."
    )


class MemoryWindowOut(Schema):
    session_id: uuid.UUID
    session_key: str
    session_title: str
    date: calendar_date = Field(description="The UTC date of the window's first message.")
    header: str = Field(
        description="The line to put above the window's messages (session and date); its "
        "tokens are counted in the budget."
    )
    rank: int = Field(description="The window's best hit's rank.")
    tokens: int = Field(description="The header's and the messages' tokens.")
    messages: list[MemoryMessageOut]


class SystemOut(Schema):
    parts: list[PartOut]
    facts: list[ContextFactOut]
    tokens: int


class TokensOut(Schema):
    system: int
    facts: int
    messages: int
    memory: int = Field(0, description="The memory leg's windows, headers included.")
    total: int


class UsageCountedOut(Schema):
    system: int = Field(description="The documents, learnings and hints the prompt carries.")
    summary: int = Field(description="The rolling summary.")
    messages: int = Field(description="Every message after the latest compact marker.")
    message_count: int
    estimate: int = Field(description="system + summary + messages.")
    observed: int | None = Field(description="The observed_tokens sent, if any.")


class UsageOut(Schema):
    max_tokens: int
    used_tokens: int
    required_tokens: int
    ratio: float = Field(description="required_tokens / max_tokens: this turn's budget.")
    flush_ratio: float
    compact_ratio: float
    flush_recommended: bool
    compact_required: bool
    context_window_tokens: int
    usage_ratio: float = Field(
        description="usage_tokens / context_window_tokens: what the agent's model holds, "
        "measured before any action this call took."
    )
    usage_tokens: int
    measured_by: Literal["observed", "estimate"]
    counted: UsageCountedOut
    action: Literal["none", "flush", "compact"]
    action_status: Literal["none", "queued", "already_queued", "done", "off"] = Field(
        description="none (under flush_ratio), off (lifecycle off), queued or "
        "already_queued (background), done (wait: ran now; `runs` says how each step went)."
    )
    runs: list[RunOut]


class DroppedOut(Schema):
    kind: str
    name: str
    tokens: int


class ContextOut(Schema):
    session_id: uuid.UUID
    query: str | None
    system: SystemOut
    messages: list[ContextMessageOut] = Field(
        description="This session's messages (recent, salient, relevant), in time order."
    )
    memory: list[MemoryWindowOut] = Field(
        default_factory=list,
        description="The memory leg: the agent's messages that match the query, from its "
        "whole history as /search ranks it, each hit with its context window; windows in "
        "time order, each under a header naming its session and date.",
    )
    tokens: TokensOut
    usage: UsageOut
    dropped: list[DroppedOut]
    warnings: list[str]
    degraded: list[str] = Field(
        default_factory=list,
        description='["semantic"] when the query could not be embedded and keyword matching '
        "stood in. Empty when healthy.",
    )
    token_counter: str
