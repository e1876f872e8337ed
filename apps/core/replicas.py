"""Read replicas (docs/deploy.md, "Read replicas"): which reads may go to one, and which one.

The rule: a read goes to a replica only inside `replica_reads()` (or a function wrapped in
`on_replica`), never by default. Replication lags, so a read that must see the caller's own
write (the window after an append, an idempotent resend's lookup, the lifecycle, every
service) stays on the primary simply by not being wrapped; only top-level read paths are
(search, recall, get_context's search legs, the review pages' lists). Even inside the context
a read stays on the primary:
- inside a transaction on the primary (it may be reading its own uncommitted rows);
- for a browser that has just written (`pin_primary_after_write`);
- when replica reads are switched off (MEMORYHUB_REPLICA_READS) or no replica answers.

A context picks one replica at random when it first reads and keeps it, so the rows one
search finds are the rows it then loads. A replica that does not answer a cheap probe
(believed MEMORYHUB_REPLICA_CHECK_SECONDS) is skipped; a query that fails on a replica that
then fails the probe is run again on the primary by `on_replica`, so a dead replica costs a
search one connection attempt, not an error.
"""

import contextlib
import functools
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

# The cookie a browser gets with the answer to its POST: its reads stay on the primary.
PIN_COOKIE = "memoryhub_primary"
_API_PREFIXES = ("/api/", "/mcp")


@dataclass
class _Reads:
    """One replica_reads() context: the replica it reads from, once it has read."""

    alias: str | None = None


_reads: ContextVar[_Reads | None] = ContextVar("memoryhub_replica_reads", default=None)
_pinned: ContextVar[bool] = ContextVar("memoryhub_primary_pinned", default=False)


@contextmanager
def replica_reads() -> Iterator[None]:
    """Reads inside may go to a replica (see the module's rule). Nested contexts share the
    outer one's replica."""
    token = _reads.set(_reads.get() or _Reads())
    try:
        yield
    finally:
        _reads.reset(token)


@contextmanager
def primary_reads() -> Iterator[None]:
    """Every read inside goes to the primary, even inside replica_reads()."""
    token = _pinned.set(True)
    try:
        yield
    finally:
        _pinned.reset(token)


def on_replica(func: Callable[P, R]) -> Callable[P, R]:
    """`func` inside replica_reads(); run again on the primary when its replica fails
    mid-read (a read-only path, so running it twice is harmless)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with replica_reads():
            reads = _reads.get()
            try:
                return func(*args, **kwargs)
            except DatabaseError:
                alias = reads.alias if reads is not None else None
                if alias in (None, DEFAULT_DB_ALIAS) or _probe_now(alias):
                    raise  # the primary's error, or the replica answers: a real error
                logger.warning("replica %s failed mid-read; reading from the primary", alias)
            with primary_reads():
                return func(*args, **kwargs)

    return wrapper


def read_alias() -> str:
    """The database alias a read made now goes to."""
    reads = _reads.get()
    if reads is None or _pinned.get() or not _replicas():
        return DEFAULT_DB_ALIAS
    if connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    if reads.alias is None:
        reads.alias = _choose()
    return reads.alias


def read_connection() -> BaseDatabaseWrapper:
    """The connection for a raw-SQL read (the search backends' cursors): read_alias()'s."""
    return connections[read_alias()]


def _replicas() -> list[str]:
    if not settings.MEMORYHUB_REPLICA_READS:
        return []
    return list(settings.MEMORYHUB_REPLICAS)


def _choose() -> str:
    candidates = _replicas()
    random.shuffle(candidates)
    for alias in candidates:
        if replica_answers(alias):
            return alias
    return DEFAULT_DB_ALIAS


class ReplicaRouter:
    """DATABASE_ROUTERS' entry when replicas are configured: reads as read_alias() says,
    writes and migrations on the primary. Outside replica_reads() a read names the primary
    explicitly: left to Django, it would follow the instance it was reached from, and an
    instance loaded from a replica would take later reads of its relations there."""

    # Any: a router's hints, as Django passes them
    def db_for_read(self, model: type[Model], **hints: Any) -> str:
        return read_alias()

    # Any: a router's hints, as Django passes them
    def db_for_write(self, model: type[Model], **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    # Any: a router's hints, as Django passes them
    def allow_relation(self, obj1: Model, obj2: Model, **hints: Any) -> bool:
        # Every alias holds the same rows: an agent read from a replica may own a new row.
        return True

    # Any: a router's hints, as Django passes them
    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


# --- Is a replica there? ---------------------------------------------------------------------
_seen: dict[str, tuple[float, bool]] = {}
_seen_lock = threading.Lock()


def replica_answers(alias: str) -> bool:
    """Whether `alias` answered its last probe, probing again once that answer is older than
    MEMORYHUB_REPLICA_CHECK_SECONDS (per process: each web process asks for itself)."""
    with _seen_lock:
        seen = _seen.get(alias)
    if seen is not None and time.monotonic() - seen[0] < settings.MEMORYHUB_REPLICA_CHECK_SECONDS:
        return seen[1]
    return _probe_now(alias)


def forget_replica_answers() -> None:
    """Probe every replica afresh at its next use (a test that moved or restarted one)."""
    with _seen_lock:
        _seen.clear()


def _probe_now(alias: str) -> bool:
    ok = _select_one(alias)
    with _seen_lock:
        before = _seen.get(alias)
        _seen[alias] = (time.monotonic(), ok)
    if before is None or before[1] != ok:
        if ok:
            logger.info("replica %s answers: reads may go to it", alias)
        else:
            logger.warning("replica %s does not answer: its reads go to the primary", alias)
    return ok


def _select_one(alias: str) -> bool:
    connection = connections[alias]
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
        return True
    except Exception:  # refused, timed out, dropped: any of them means "not now"
        # The next use connects afresh; a broken connection may fail to close, and is gone.
        with contextlib.suppress(Exception):
            connection.close()
        return False


@dataclass(frozen=True)
class ReplicaState:
    alias: str
    reachable: bool
    lag_seconds: float | None  # None when unknown (unreachable)
    detail: str


def replica_state(alias: str) -> ReplicaState:
    """A replica's state, asked now: reachable, and how far its replay is behind the
    primary's last commit (0 when it has replayed everything it received)."""
    try:
        with connections[alias].cursor() as cursor:
            cursor.execute(
                "SELECT pg_is_in_recovery(), CASE"
                " WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
                " ELSE EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()) END"
            )
            recovering, lag = cursor.fetchone()
    except Exception as exc:
        _probe_now(alias)  # the router should not wait out its cached answer either
        return ReplicaState(alias, False, None, f"{type(exc).__name__}: {exc}".strip())
    detail = "streaming replica" if recovering else "NOT in recovery (promoted?)"
    return ReplicaState(alias, True, float(lag) if lag is not None else None, detail)


def replicas_report() -> tuple[str, dict, bool]:
    """/healthz's "replicas" (MEMORYHUB_HEALTH_CHECKS when replicas are configured). A
    replica down degrades the node (200 "degraded"): its reads fall back to the primary."""
    if not settings.MEMORYHUB_REPLICA_READS:
        return "replicas", {"ok": True, "reads": "off (MEMORYHUB_REPLICA_READS)"}, True
    states = [replica_state(alias) for alias in settings.MEMORYHUB_REPLICAS]
    ok = all(s.reachable for s in states)
    body: dict = {"ok": ok, "reads": "on"}
    for s in states:
        body[s.alias] = {"reachable": s.reachable, "lag_seconds": s.lag_seconds, "detail": s.detail}
    return "replicas", body, ok


# --- A browser's own writes ------------------------------------------------------------------
def pin_primary_after_write(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """A browser that has just written reads from the primary for a few seconds: its POST's
    answer carries a short cookie, and a request carrying it reads from the primary. The
    review pages' redirect after a form then shows the form's write, whatever the lag. API
    and MCP clients send no cookies: their reads that must see a write are never wrapped."""

    def middleware(request: HttpRequest) -> HttpResponse:
        pinned = bool(request.COOKIES.get(PIN_COOKIE))
        token = _pinned.set(True) if pinned else None
        try:
            response = get_response(request)
        finally:
            if token is not None:
                _pinned.reset(token)
        if (
            settings.MEMORYHUB_REPLICAS
            and request.method not in ("GET", "HEAD", "OPTIONS", "TRACE")
            and not request.path.startswith(_API_PREFIXES)
        ):
            response.set_cookie(
                PIN_COOKIE,
                "1",
                max_age=settings.MEMORYHUB_REPLICA_PIN_SECONDS,
                httponly=True,
                samesite="Lax",
                secure=settings.SESSION_COOKIE_SECURE,
            )
        return response

    return middleware
