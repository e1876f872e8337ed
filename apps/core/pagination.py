"""Keyset (cursor) pagination: stable under concurrent inserts, no OFFSET scans."""

import base64
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, TypeVar

from django.db.models import Model, Q, QuerySet

from apps.core.errors import InvalidInput

T = TypeVar("T", bound=Model)


@dataclass(frozen=True)
class Page(Generic[T]):
    items: list[T]
    next_cursor: str | None


def encode_cursor(values: list[Any]) -> str:
    raw = json.dumps([v.isoformat() if isinstance(v, datetime) else str(v) for v in values])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str, *, size: int) -> list[str]:
    """Return the cursor's values, or raise InvalidInput naming the `cursor` parameter."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        values = json.loads(base64.urlsafe_b64decode(padded.encode()).decode())
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput("malformed cursor", loc=["query", "cursor"]) from exc
    if not isinstance(values, list) or len(values) != size:
        raise InvalidInput("malformed cursor", loc=["query", "cursor"])
    return [str(v) for v in values]


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
    if cursor:
        a, b = decode_cursor(cursor, size=2)
        try:
            a_value = datetime.fromisoformat(a)
        except ValueError as exc:
            raise InvalidInput("malformed cursor", loc=["query", "cursor"]) from exc
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
        next_cursor = encode_cursor([getattr(last, first), getattr(last, second)])
    return Page(items=rows, next_cursor=next_cursor)


def id_paginate(qs: QuerySet[T], *, after_id: int | None, limit: int) -> Page[T]:
    """One page of `qs` in primary-key order; the cursor is the last id of the page."""
    if after_id is not None:
        qs = qs.filter(pk__gt=after_id)
    rows = list(qs.order_by("pk")[: limit + 1])
    next_cursor = str(rows[limit - 1].pk) if len(rows) > limit else None
    return Page(items=rows[:limit], next_cursor=next_cursor)
