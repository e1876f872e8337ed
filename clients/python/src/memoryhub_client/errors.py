"""The exceptions a call raises: one class per kind of failure, each with the API's `detail`
and, when the server names one, the field at fault."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "Conflict",
    "Forbidden",
    "InvalidInput",
    "MemoryHubError",
    "NotFound",
    "RateLimited",
    "Unauthorized",
    "Unavailable",
]

# The first segment of a server `loc` says where the value was, not which field it is.
_SOURCES = frozenset({"body", "query", "path", "header"})
_BODY_PARAMETER = "payload"  # what every endpoint of the API names its JSON body


class MemoryHubError(Exception):
    """A failed call: `status` (None when no answer came), the API's `detail` as sent (a
    message, or a list of {loc, msg, type}), `loc` and `field` naming the value at fault."""

    def __init__(
        self,
        status: int | None,
        detail: Any,
        field: str | None = None,
        *,
        loc: Sequence[str | int] | None = None,
    ) -> None:
        self.status = status
        self.detail = detail
        self.loc: list[str | int] = list(loc or [])
        self.field = field if field is not None else field_of(self.loc)
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """The detail as one line: a list's messages joined, each after its field."""
        if isinstance(self.detail, list):
            parts = []
            for item in self.detail:
                if isinstance(item, dict):
                    where = field_of(item.get("loc") or [])
                    text = str(item.get("msg", ""))
                    parts.append(f"{where}: {text}" if where else text)
                else:
                    parts.append(str(item))
            return "; ".join(parts)
        return str(self.detail)

    def __str__(self) -> str:
        prefix = f"{self.status} " if self.status is not None else ""
        return f"{prefix}{self.message}"


class Unauthorized(MemoryHubError):
    """401: the key is missing, malformed or revoked."""


class Forbidden(MemoryHubError):
    """403: the key may not do this."""


class NotFound(MemoryHubError):
    """404: no such object for this agent."""


class Conflict(MemoryHubError):
    """409: the write collides with existing state (a taken name, a duplicate)."""


class InvalidInput(MemoryHubError):
    """400, 413, 414 or 422: the request was refused as it stands; `field` names the value."""


class _RetryAfter(MemoryHubError):
    """A failure worth retrying later: `retry_after` is the server's Retry-After in seconds
    (None when it sent none)."""

    def __init__(
        self,
        status: int | None,
        detail: Any,
        field: str | None = None,
        *,
        loc: Sequence[str | int] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(status, detail, field, loc=loc)
        self.retry_after = retry_after


class RateLimited(_RetryAfter):
    """429: too many calls; `retry_after` is the wait the server asked for, in seconds."""


class Unavailable(_RetryAfter):
    """503, or no answer at all (connection refused or dropped, timeout): retry later.
    `retry_after` is the server's Retry-After when it sent one."""


_BY_STATUS: dict[int, type[MemoryHubError]] = {
    400: InvalidInput,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: InvalidInput,
    414: InvalidInput,
    422: InvalidInput,
    429: RateLimited,
    503: Unavailable,
}


def field_of(loc: Sequence[str | int]) -> str | None:
    """A server `loc` as a dotted field of the request ("messages.0.content"), None when it
    names none. The server's schema validation puts the body's parameter name after "body"
    (["body", "payload", "key"]) where its own checks do not (["body", "key"]): the field is
    "key" either way."""
    parts = list(loc)
    if parts and parts[0] in _SOURCES:
        parts = parts[1:]
        if loc[0] == "body" and len(parts) > 1 and parts[0] == _BODY_PARAMETER:
            parts = parts[1:]
    return ".".join(str(p) for p in parts) or None


def retry_after_seconds(value: str | None) -> float | None:
    """A Retry-After header's delay in seconds (delta-seconds; an HTTP date is not parsed)."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return max(0.0, seconds)


def error_for(status: int, body: Any, retry_after: str | None = None) -> MemoryHubError:
    """The exception for a non-2xx answer: its class by status, detail and loc from the
    body ({"detail": ..., "loc": [...]} or a validation list whose first item names it)."""
    detail: Any = body
    loc: list[str | int] = []
    if isinstance(body, dict) and "detail" in body:
        detail = body["detail"]
        if isinstance(body.get("loc"), list):
            loc = body["loc"]
    if not loc and isinstance(detail, list) and detail and isinstance(detail[0], dict):
        loc = list(detail[0].get("loc") or [])
    if status == 429:
        return RateLimited(status, detail, loc=loc, retry_after=retry_after_seconds(retry_after))
    if status == 503:
        return Unavailable(status, detail, loc=loc, retry_after=retry_after_seconds(retry_after))
    return _BY_STATUS.get(status, MemoryHubError)(status, detail, loc=loc)
