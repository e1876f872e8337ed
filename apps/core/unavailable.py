"""A backing service down: the database answers 503, the broker defers work to the sweeps.

`database_unavailable` is an exception handler for the agent API (registered in
memoryhub/api.py for OperationalError and InterfaceError). Only errors a retry can cure get
the 503: a lost or refused connection, a server shutting down or starting up, too many
connections, a deadlock or serialization failure, SQLite's busy/locked file. Any other
OperationalError (a missing table, an FTS syntax error) is a defect and stays a 500.

`send_or_defer` sends a task from an on_commit hook; with the broker down the write still
succeeds, and the beat sweep that owns that work (search.embed_pending, lifecycle.*_due)
enqueues it later.
"""

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, JsonResponse
from kombu.exceptions import OperationalError as BrokerError

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
# SQLSTATE classes: 08 connection exception, 40 transaction rollback (deadlock,
# serialization), 53 insufficient resources, 57 operator intervention (admin shutdown,
# cannot connect now, query canceled).
TRANSIENT_SQLSTATE_CLASSES = frozenset({"08", "40", "53", "57"})
# sqlite3 primary result codes: BUSY, LOCKED, IOERR, FULL, CANTOPEN.
TRANSIENT_SQLITE_CODES = frozenset({5, 6, 10, 13, 14})


def is_transient(exc: BaseException) -> bool:
    """True when `exc` says the database cannot serve now, not that the request is wrong."""
    if isinstance(exc, InterfaceError):
        return True  # the connection object is closed or broken
    if not isinstance(exc, OperationalError):
        return False
    cause = exc.__cause__
    code = getattr(cause, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in TRANSIENT_SQLITE_CODES
    sqlstate = getattr(cause, "sqlstate", None)
    # psycopg gives no SQLSTATE when there is no server to give one: refused, reset, closed.
    return sqlstate is None or sqlstate[:2] in TRANSIENT_SQLSTATE_CLASSES


def database_unavailable(request: HttpRequest, exc: Exception) -> JsonResponse:
    """503 JSON with Retry-After for a transient database error; 500 JSON for any other."""
    if not is_transient(exc):
        logger.exception("database error on %s %s", request.method, request.path)
        return JsonResponse({"detail": "internal error"}, status=500)
    logger.warning(
        "database unavailable on %s %s: %s: %s",
        request.method,
        request.path,
        type(exc).__name__,
        str(exc).strip().splitlines()[0] if str(exc).strip() else "",
    )
    response = JsonResponse({"detail": "the database is unavailable; retry later"}, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def send_or_defer(send: Callable[[], object], *, what: str) -> bool:
    """Call `send` (a task's .delay, run from an on_commit hook). A broker that cannot be
    reached is logged, not raised: the committed write must not answer 500. False then."""
    try:
        send()
    except BrokerError as exc:
        logger.warning("broker unavailable; %s is left to its sweep: %s", what, exc)
        return False
    return True
