"""Search over messages (/search), its status, and the memory tools (save, recall, search)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal
from uuid import UUID

from pydantic import Field

from memoryhub_client.models.common import Model, QuotedMessage, Ranked, component
from memoryhub_client.models.context import Leg
from memoryhub_client.models.facts import Fact


@component("ChatSearchMessageOut")
class SearchMessage(QuotedMessage):
    """The server's `ChatSearchMessageOut`."""

    metadata: dict[str, Any]


@component("ChatSearchHitOut")
class SearchHit(SearchMessage):
    """The server's `ChatSearchHitOut`: a message, its score and its legs' ranks."""

    score: float
    legs: dict[str, Leg]
    window: int


@component("ChatSearchWindowOut")
class SearchWindow(Model):
    """The server's `ChatSearchWindowOut`."""

    session_id: UUID
    messages: list[SearchMessage]


@component("ChatSearchOut")
class SearchResult(Model):
    """The server's `ChatSearchOut`."""

    query: str
    mode: Literal["semantic", "keyword", "hybrid", "contains"]
    degraded: list[str] = Field(default_factory=list)
    hits: list[SearchHit]
    windows: list[SearchWindow]


@component("ChatSearchIn")
class ChatSearchIn(Model):
    """The server's `ChatSearchIn`."""

    user: str | None = None
    all_users: bool = False
    query: str
    mode: Literal["semantic", "keyword", "hybrid", "contains"] = "semantic"
    k: int = 10
    session_id: str | None = None
    role: str | list[str] | None = None
    after: datetime | None = None
    before: datetime | None = None
    metadata: dict[str, str | int | float | bool] | None = None
    min_score: float | None = None


@component("TokenStatesOut")
class TokenStates(Model):
    """The server's `TokenStatesOut`."""

    space: str
    stored: int
    pending: int
    error: str


@component("CorpusBacklogOut")
class CorpusBacklog(Model):
    """The server's `CorpusBacklogOut`."""

    vectors: bool
    embedded: int
    stale: int
    pending: int
    failed: int
    token_states: TokenStates | None = None


@component("EmbeddingStatusOut")
class SearchStatus(Model):
    """The server's `EmbeddingStatusOut`."""

    model: str
    embedded: int
    stale: int
    pending: int
    failed: int
    token_states: TokenStates | None = None
    corpora: dict[str, CorpusBacklog]


@component("SaveOut")
class SaveResult(Model):
    """The server's `SaveOut`."""

    fact: Fact
    action: str
    deduped: bool
    existing_id: int | None
    similarity: float | None
    log: str


@component("SaveIn")
class SaveIn(Model):
    """The server's `SaveIn`."""

    user: str | None = None
    scope: Literal["agent", "user"] | None = None
    content: str
    category: str | None = None
    key: str | None = None
    importance: float | None = None
    session_id: str | None = None
    review: bool = False


@component("RecallHitOut")
class RecallHit(Model):
    """The server's `RecallHitOut`."""

    fact: Fact
    similarity: float
    score: float
    tier: str


@component("RecallOut")
class RecallResult(Model):
    """The server's `RecallOut`."""

    items: list[RecallHit]
    categories: list[str]
    fell_back: bool
    degraded: list[str] = Field(default_factory=list)


@component("RecallIn")
class RecallIn(Model):
    """The server's `RecallIn`."""

    user: str | None = None
    all_users: bool = False
    query: str
    session_id: str | None = None
    category: str | None = None
    k: int | None = None


@component("SearchHitOut")
class MemorySearchHit(Model):
    """The server's `SearchHitOut`."""

    source: str
    id: int
    name: str
    content: str
    score: float
    legs: dict[str, float]


@component("SearchOut")
class MemorySearchResult(Ranked[MemorySearchHit]):
    """The server's `SearchOut`."""


@component("SearchIn")
class SearchIn(Model):
    """The server's `SearchIn`."""

    user: str | None = None
    all_users: bool = False
    query: str
    session_id: str | None = None
    k: int | None = None
