"""Request and response bodies for entries and workspace documents."""

from datetime import datetime
from typing import Literal

from ninja import Schema
from pydantic import Field

from apps.agents.schemas import Owned, ReadFor, ScopedWrite
from apps.core.pagination import IdPageQuery
from apps.core.schemas import Input
from apps.entries.models import Entry


class EntryFilters(Input):
    kind: str | None = Field(None, pattern="^(note|archive)$")


class ListQuery(IdPageQuery, EntryFilters, ReadFor):  # GET /entries
    prefix: str = Field(
        "", max_length=255, description="Only entries whose name starts with it: 'notes/'."
    )
    content: bool = Field(False, description="true: each entry with its content.")


class SearchQuery(ReadFor):  # GET /entries/search
    q: str = Field(..., min_length=1, max_length=4000)
    limit: int = Field(20, ge=1, le=200)
    mode: Literal["keyword", "semantic", "hybrid"] = Field(
        "keyword", description="keyword: by words; semantic: by meaning; hybrid: both."
    )
    prefix: str | None = Field(
        None, max_length=255, description="Only entries whose name starts with it."
    )


INDEX_DOC = (
    "true: searched; false: left out of every search (still read by name, listed and "
    "exported); a list of JSON paths ('text', 'tags[*]', 'a.b'; '$' is all): searched, by "
    "meaning on the texts at those paths of the JSON content."
)


class EntryIn(ScopedWrite):
    name: str = Field(
        ..., description="Unique per owner (the agent, a user); a safe relative path: MEMORY.md"
    )
    content: str = ""
    kind: Literal["note", "archive"] = "note"
    index: bool | list[str] = Field(True, description=INDEX_DOC)


class EntryWrite(ScopedWrite):
    content: str
    index: bool | list[str] | None = Field(None, description=INDEX_DOC + " Absent: kept.")
    create: bool = Field(
        False, description="true: a missing entry is added (a note), as POST /entries would."
    )


class EntryRename(ScopedWrite):
    name: str


class EntryAliasIn(ScopedWrite):
    alias: str


class EntryOut(Owned):
    id: int
    name: str
    aliases: list[str]
    kind: str
    content: str
    bytes: int
    needs_compression: bool
    index: bool = Field(True, description="false: left out of every search.")
    index_fields: list[str] | None = Field(
        None, description="The JSON paths embedded (null: the content)."
    )
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_aliases(obj: Entry) -> list[str]:
        return [a.name for a in obj.aliases.all()]

    @staticmethod
    def resolve_bytes(obj: Entry) -> int:
        return len(obj.content.encode("utf-8"))

    @staticmethod
    def resolve_index(obj: Entry) -> bool:
        return not obj.unindexed


class EntrySummary(Owned):
    id: int
    name: str
    aliases: list[str]
    kind: str
    content: str | None = Field(None, description="With content=true only.")
    bytes: int
    needs_compression: bool
    index: bool = Field(True, description="false: left out of every search.")
    created_at: datetime
    updated_at: datetime

    resolve_aliases = staticmethod(EntryOut.resolve_aliases)
    resolve_bytes = staticmethod(EntryOut.resolve_bytes)
    resolve_index = staticmethod(EntryOut.resolve_index)

    @staticmethod
    def resolve_content(obj: Entry) -> str | None:
        # entries_page's annotation: None unless the listing asked for content.
        return getattr(obj, "listed_content", None)


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
    degraded: list[str] = Field(
        default_factory=list, description='["semantic"]: the query was not embedded (BM25 only)'
    )
