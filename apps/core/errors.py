"""Domain errors. The API layer maps each class to an HTTP status (memoryhub/api.py)."""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


class ApplicationError(Exception):
    """A failure the caller can act on; `loc` names the offending field when there is one."""

    def __init__(self, message: str, *, loc: Sequence[str | int] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.loc = list(loc) if loc else None


class NotFound(ApplicationError):
    """The object does not exist for this agent (another agent's objects look the same)."""


class Forbidden(ApplicationError):
    """403: the key may not do this."""


class Conflict(ApplicationError):
    """The write collides with existing state (a taken name, a duplicate key)."""


class InvalidInput(ApplicationError):
    """A value is well-formed JSON but not acceptable."""


class BadRequest(InvalidInput):
    """A query or path parameter (a cursor, say) that cannot be read at all: 400, not 422.
    An InvalidInput, so callers that catch those still catch it."""


class PayloadTooLarge(ApplicationError):
    """A value or batch is over a configured size limit."""


def error_detail(exc: ApplicationError) -> object:
    """The `detail` clients read for a domain error: InvalidInput as a list of {loc, msg,
    type} (the shape of schema validation errors, so one format), else the message."""
    if isinstance(exc, InvalidInput):
        return validation_detail(
            [{"loc": exc.loc or [], "msg": exc.message, "type": "value_error"}]
        )
    return exc.message


# Any: pydantic's ErrorDetails values are Any
def validation_detail(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, object]]:
    """Schema validation errors (pydantic's, or ninja's from them) as the 422 body's
    `detail`: a {loc, msg, type} each. Pydantic's ctx may hold exception objects, so only
    what serialises is kept."""
    return [
        {"loc": list(e.get("loc", [])), "msg": str(e.get("msg", "")), "type": e.get("type", "")}
        for e in errors
    ]
