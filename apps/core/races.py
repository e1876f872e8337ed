"""A request that lost a race with a delete: a row it wrote refers to a row another request
removed meanwhile (or it removed a row another request made a new reference to), so a
foreign key fails at commit and nothing it wrote is kept.

The services turn the races they know into a 404 (an append to a removed session); this is
the net for the rest: a 409 the client can retry, not a 500. Any other IntegrityError is a
defect and stays a 500.
"""

import logging

from django.db import IntegrityError
from django.http import HttpRequest, JsonResponse

logger = logging.getLogger(__name__)

# PostgreSQL's foreign_key_violation.
FOREIGN_KEY_SQLSTATE = "23503"
DETAIL = (
    "a record this request names, or one naming it, changed meanwhile; nothing was written, retry"
)


def is_vanished_reference(exc: BaseException) -> bool:
    """True when `exc` is a foreign key that failed: the row it names is gone."""
    if not isinstance(exc, IntegrityError):
        return False
    sqlstate = getattr(exc.__cause__, "sqlstate", None)
    if sqlstate is not None:
        return sqlstate == FOREIGN_KEY_SQLSTATE
    # SQLite reports a deferred key failed at commit only as SQLITE_CONSTRAINT, by its
    # message ("FOREIGN KEY constraint failed"), as does Django's own check of its keys.
    return "foreign key" in str(exc).lower()


def integrity_error(request: HttpRequest, exc: Exception) -> JsonResponse:
    """409 JSON for a vanished reference; 500 JSON for any other integrity error."""
    if not is_vanished_reference(exc):
        logger.error("integrity error on %s %s", request.method, request.path, exc_info=exc)
        return JsonResponse({"detail": "internal error"}, status=500)
    logger.warning("vanished reference on %s %s: %s", request.method, request.path, exc)
    return JsonResponse({"detail": DETAIL}, status=409)
