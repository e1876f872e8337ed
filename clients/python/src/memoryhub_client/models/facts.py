"""Facts and their versions: the server's schemas, field for field."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from memoryhub_client.models.common import Model, Page, component


@component("FactOut")
class Fact(Model):
    """The server's `FactOut`."""

    user: str | None = None
    id: int
    category: str
    key: str
    value: str
    source: str
    status: str
    importance: float
    access_count: int
    last_accessed_at: datetime | None
    salience: float
    embedded: bool
    valid_from: datetime
    valid_to: datetime | None
    superseded_by: int | None = None
    session_id: str | None
    created_at: datetime
    updated_at: datetime


@component("FactQuery")
class FactQuery(Model):
    """The server's `FactQuery`."""

    user: str | None = None
    all_users: bool = False
    category: str | None = None
    include_superseded: bool = False
    cursor: str | None = None
    limit: int = 100


@component("FactPage")
class FactPage(Page[Fact]):
    """A page of `Fact`: items and next_cursor."""


@component("FactSaveOut")
class FactSaveResult(Model):
    """The server's `FactSaveOut`."""

    fact: Fact
    action: str
    deduped: bool
    existing_id: int | None
    similarity: float | None


@component("FactIn")
class FactIn(Model):
    """The server's `FactIn`."""

    user: str | None = None
    scope: Literal["agent", "user"] | None = None
    value: str
    category: str | None = None
    key: str | None = None
    importance: float | None = None
    source: Literal["agent", "user"] = "agent"
    review: bool = False


@component("FactPatch")
class FactPatch(Model):
    """The server's `FactPatch`."""

    value: str | None = None
    category: str | None = None
    key: str | None = None
    importance: float | None = None
    reason: str = ""
    source: Literal["agent", "user"] = "agent"


@component("FactSupersede")
class FactSupersede(Model):
    """The server's `FactSupersede`."""

    value: str
    reason: str = ""
    source: Literal["agent", "user"] = "agent"


@component("FactVersionOut")
class FactVersion(Model):
    """The server's `FactVersionOut`."""

    number: int
    old_value: str
    new_value: str
    changed_by: str
    reason: str
    changed_at: datetime
