"""The base of every model, the registry of server schema components, pages, and the API's
error body."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

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


class Page(Model, Generic[T]):
    """One page of a listing; the next one is asked with `cursor=next_cursor` (None: last)."""

    items: list[T]
    next_cursor: str | None


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
