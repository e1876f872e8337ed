"""Request and response bodies for entries and workspace documents."""

from datetime import datetime
from typing import Literal

from ninja import Schema
from pydantic import Field

from apps.core.pagination import IdPageQuery


class EntryFilters(Schema):
    kind: str | None = Field(None, pattern="^(note|archive)$")


class ListQuery(IdPageQuery, EntryFilters):  # GET /entries
    pass


class SearchQuery(Schema):  # GET /entries/search
    q: str = Field(..., min_length=1, max_length=4000)
    limit: int = Field(20, ge=1, le=200)


class EntryIn(Schema):
    name: str = Field(..., description="Unique per agent; a safe relative path, e.g. MEMORY.md")
    content: str = ""
    kind: Literal["note", "archive"] = "note"


class EntryWrite(Schema):
    content: str


class EntryRename(Schema):
    name: str


class EntryAliasIn(Schema):
    alias: str


class EntryOut(Schema):
    id: int
    name: str
    aliases: list[str]
    kind: str
    content: str
    bytes: int
    needs_compression: bool
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_aliases(obj) -> list[str]:
        return [a.name for a in obj.aliases.all()]

    @staticmethod
    def resolve_bytes(obj) -> int:
        return len(obj.content.encode("utf-8"))


class EntrySummary(Schema):
    id: int
    name: str
    aliases: list[str]
    kind: str
    bytes: int
    needs_compression: bool
    created_at: datetime
    updated_at: datetime

    resolve_aliases = staticmethod(EntryOut.resolve_aliases)
    resolve_bytes = staticmethod(EntryOut.resolve_bytes)


class EntryPage(Schema):
    items: list[EntrySummary]
    next_cursor: str | None


class AliasOut(Schema):
    alias: str
    entry: EntrySummary


class EntryHitOut(Schema):
    score: float
    entry: EntryOut


class EntrySearchOut(Schema):
    items: list[EntryHitOut]
