"""Entries (notes, archives and documents) and the workspace import: the server's schemas,
field for field."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from memoryhub_client.models.common import Model, Page, component


@component("ForUser")
class ForUser(Model):
    """The server's `ForUser`."""

    user: str | None = None


@component("ReadFor")
class ReadFor(Model):
    """The server's `ReadFor`: a read's audience (`user`, or every user with `all_users`)."""

    user: str | None = None
    all_users: bool = False


@component("EntryOut")
class Entry(Model):
    """The server's `EntryOut`."""

    user: str | None = None
    id: int
    name: str
    aliases: list[str]
    kind: str
    content: str
    bytes: int
    needs_compression: bool
    index: bool = True
    index_fields: list[str] | None = None
    created_at: datetime
    updated_at: datetime


@component("EntryIn")
class EntryIn(Model):
    """The server's `EntryIn`."""

    user: str | None = None
    scope: Literal["agent", "user"] | None = None
    name: str
    content: str = ""
    kind: Literal["note", "archive"] = "note"
    index: bool | list[str] = True


@component("ListQuery")
class ListQuery(Model):
    """The server's `ListQuery`."""

    user: str | None = None
    all_users: bool = False
    kind: str | None = None
    cursor: str | None = None
    limit: int = 100
    prefix: str = ""
    content: bool = False


@component("EntrySummary")
class EntrySummary(Model):
    """The server's `EntrySummary`."""

    user: str | None = None
    id: int
    name: str
    aliases: list[str]
    kind: str
    content: str | None = None
    bytes: int
    needs_compression: bool
    index: bool = True
    created_at: datetime
    updated_at: datetime


@component("EntryPage")
class EntryPage(Page[EntrySummary]):
    """A page of `EntrySummary`: items and next_cursor."""


@component("SearchQuery")
class SearchQuery(Model):
    """The server's `SearchQuery`."""

    user: str | None = None
    all_users: bool = False
    q: str
    limit: int = 20
    mode: Literal["keyword", "semantic", "hybrid"] = "keyword"
    prefix: str | None = None


@component("EntryHitOut")
class EntryHit(Model):
    """The server's `EntryHitOut`."""

    score: float
    entry: Entry


@component("EntrySearchOut")
class EntrySearchResult(Model):
    """The server's `EntrySearchOut`."""

    items: list[EntryHit]
    degraded: list[str] = []


@component("AliasOut")
class Alias(Model):
    """The server's `AliasOut`."""

    alias: str
    entry: EntrySummary


@component("EntryAliasIn")
class EntryAliasIn(Model):
    """The server's `EntryAliasIn`."""

    user: str | None = None
    scope: Literal["agent", "user"] | None = None
    alias: str


@component("EntryWrite")
class EntryWrite(Model):
    """The server's `EntryWrite`."""

    user: str | None = None
    scope: Literal["agent", "user"] | None = None
    content: str
    index: bool | list[str] | None = None
    create: bool = False


@component("EntryRename")
class EntryRename(Model):
    """The server's `EntryRename`."""

    user: str | None = None
    scope: Literal["agent", "user"] | None = None
    name: str


@component("ScopedWrite")
class ScopedWrite(Model):
    """The server's `ScopedWrite`."""

    user: str | None = None
    scope: Literal["agent", "user"] | None = None


@component("ImportQuery")
class ImportQuery(Model):
    """The server's `ImportQuery`."""

    force: bool = False


@component("ImportOut")
class ImportResult(Model):
    """The server's `ImportOut`."""

    created: int
    overwritten: int
    names: list[str]
    history_entries: int
    learnings: int
