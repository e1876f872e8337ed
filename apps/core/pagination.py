"""Keyset (cursor) pagination: stable under concurrent inserts, no OFFSET scans."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Generic, TypeVar

from django.core import signing
from django.db.models import Model, Q, QuerySet
from pydantic import Field

from apps.core.errors import BadRequest
from apps.core.schemas import Input

T = TypeVar("T", bound=Model)
K = TypeVar("K")  # a keyset cursor's tie-breaker


Cursor = Annotated[str | None, Field(max_length=500)]
Limit = Annotated[int, Field(ge=1, le=500)]


# The page of every listing, declared once: `cursor` (the previous page's next_cursor) and
# `limit`, 50 rows by default. A listing's query is `class XQuery(PageQuery, XFilters)`:
# pydantic takes the last base's fields first, so the filters come before the page, as the
# API has always published them. (Comments, not docstrings: a query model's docstring would
# be published as its schema's description.)
class PageQuery(Input):
    cursor: Cursor = None
    limit: Limit = 50


class IdPageQuery(PageQuery):
    # A page of a listing in insert (id) order (id_paginate): 100 rows by default.
    cursor: Cursor = Field(None, description="An opaque next_cursor.")
    limit: Limit = 100


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None


def _signer(purpose: str) -> signing.Signer:
    # A salt per purpose: a cursor from one listing is refused by every other.
    return signing.Signer(salt=f"memoryhub.cursor.{purpose}")


def _invalid() -> BadRequest:
    return BadRequest("invalid cursor", loc=["query", "cursor"])


def encode_cursor(values: Sequence[object], *, purpose: str = "cursor") -> str:
    """An opaque, signed cursor holding `values` (datetimes as ISO 8601, the rest as str)."""
    raw = [v.isoformat() if isinstance(v, datetime) else str(v) for v in values]
    return _signer(purpose).sign_object(raw, compress=False)


def decode_cursor(cursor: str, *, size: int, purpose: str = "cursor") -> list[str]:
    """The cursor's `size` values; BadRequest (400) naming `cursor` when it is not one we
    signed for `purpose`."""
    try:
        values = _signer(purpose).unsign_object(cursor)
    except (signing.BadSignature, ValueError, UnicodeError) as exc:
        raise _invalid() from exc
    if not isinstance(values, list) or len(values) != size:
        raise _invalid()
    if not all(isinstance(v, str) for v in values):
        raise _invalid()
    return values


def decode_keyset_cursor(
    cursor: str, *, purpose: str = "cursor", tie: Callable[[str], K]
) -> tuple[datetime, K]:
    """The (time, tie-breaker) of a keyset cursor, the tie-breaker read by `tie` (uuid.UUID,
    say); BadRequest (400) naming `cursor` when it is not one we signed for `purpose`."""
    a, b = decode_cursor(cursor, size=2, purpose=purpose)
    try:
        at, key = datetime.fromisoformat(a), tie(b)
    except ValueError as exc:
        raise _invalid() from exc
    return (at if at.tzinfo else at.replace(tzinfo=UTC)), key


def decode_id_cursor(cursor: str | None, *, model: type[Model]) -> int | None:
    """The last id an id_paginate cursor of `model` names (None: the first page)."""
    if not cursor:
        return None
    (value,) = decode_cursor(cursor, size=1, purpose=f"id.{model._meta.label_lower}")
    if not value.isdigit() or len(value) > 19:
        raise _invalid()
    return int(value)


def keyset_paginate(
    qs: QuerySet[T],
    *,
    fields: tuple[str, str],
    cursor: str | None,
    limit: int,
    descending: bool = False,
) -> Page[T]:
    """One page of `qs` ordered by two fields (a timestamp and a unique tie-breaker)."""
    first, second = fields
    purpose = f"keyset.{qs.model._meta.label_lower}.{first}.{second}"
    if cursor:
        a_value, b = decode_keyset_cursor(cursor, purpose=purpose, tie=str)
        op = "lt" if descending else "gt"
        qs = qs.filter(
            Q(**{f"{first}__{op}": a_value}) | Q(**{first: a_value, f"{second}__{op}": b})
        )
    prefix = "-" if descending else ""
    rows = list(qs.order_by(f"{prefix}{first}", f"{prefix}{second}")[: limit + 1])
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        next_cursor = encode_cursor([getattr(last, first), getattr(last, second)], purpose=purpose)
    return Page(items=rows, next_cursor=next_cursor)


def id_paginate(qs: QuerySet[T], *, after_id: int | None, limit: int) -> Page[T]:
    """One page of `qs` in primary-key order; the cursor (read back by decode_id_cursor)
    signs the last id of the page."""
    if after_id is not None:
        qs = qs.filter(pk__gt=after_id)
    rows = list(qs.order_by("pk")[: limit + 1])
    next_cursor = None
    if len(rows) > limit:
        purpose = f"id.{qs.model._meta.label_lower}"
        next_cursor = encode_cursor([rows[limit - 1].pk], purpose=purpose)
    return Page(items=rows[:limit], next_cursor=next_cursor)
