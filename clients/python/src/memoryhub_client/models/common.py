"""The base of every model, the registry of server schema components, pages, and the API's
error body."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Generic, TypeVar
from uuid import UUID

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")
M = TypeVar("M", bound="Model")

# Server schema component name -> the client model mirroring it (the schema-drift test
# compares the two, field by field).
COMPONENTS: dict[str, type[Model]] = {}


class Model(BaseModel):
    """A server schema mirrored field for field. Fields a newer server adds are kept
    (extra="allow"), so an older client still reads its answers."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())


def component(name: str) -> Callable[[type[M]], type[M]]:
    """Register the decorated model as the client side of the server's component `name`."""

    def register(cls: type[M]) -> type[M]:
        if name in COMPONENTS:
            raise ValueError(f"{name} is mirrored twice: {COMPONENTS[name]} and {cls}")
        COMPONENTS[name] = cls
        return cls

    return register


class QuotedMessage(Model):
    """The fields every message answer shares (the server's `QuotedMessage`); not a component
    itself: MessageOut, ContextMessageOut and ChatSearchMessageOut extend it."""

    id: UUID
    session_id: UUID
    role: str
    name: str
    content: str
    tool_call_id: str | None
    tool_name: str | None
    tool_calls: list[dict[str, Any]] | None
    created_at: datetime


class Page(Model, Generic[T]):
    """One page of a listing; the next one is asked with `cursor=next_cursor` (None: last)."""

    items: list[T]
    next_cursor: str | None


class Ranked(Model, Generic[T]):
    """A search's answer: the hits, best first, and the legs that could not run (degraded)."""

    items: list[T]
    degraded: list[str] = Field(default_factory=list)


@component("ApiErrorItem")
class ApiErrorItem(Model):
    """The server's `ApiErrorItem`: one refused value, `loc` naming where it was."""

    loc: list[str | int]
    msg: str
    type: str


@component("ApiError")
class ApiError(Model):
    """The server's `ApiError`: every error body (a message, or a list of refused values)."""

    detail: str | list[ApiErrorItem]
    loc: list[str | int] = Field(default_factory=list)
