"""SQLite connection set-up for the embedded default: sqlite-vec loaded, FTS5 verified."""

import signal
from typing import Any

import sqlite_vec
from django.core.exceptions import ImproperlyConfigured
from django.db.backends.base.base import BaseDatabaseWrapper

_fts5_checked = False
_STOPS = {signal.SIGINT, signal.SIGTERM}


def on_connection_created(
    sender: type[BaseDatabaseWrapper],
    connection: BaseDatabaseWrapper,
    **kwargs: Any,  # Any: a signal receiver's keyword arguments, as Django sends them
) -> None:
    """Load sqlite-vec into every new SQLite connection and check FTS5 once per process.

    Module level on purpose: signals hold weak references, a nested function would be
    garbage-collected and vec0 would vanish from later connections.
    """
    global _fts5_checked
    if connection.vendor != "sqlite":
        return
    raw = connection.connection
    # Ctrl-C waits until the extension is in: celery beat's SIGINT handler, run in this
    # thread, starts its last sync with close_old_connections(), which closed this one
    # half set up, and the stop printed a traceback (tests/core/test_make_run.py).
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    try:
        raw.enable_load_extension(True)
        try:
            sqlite_vec.load(raw)
        finally:
            raw.enable_load_extension(False)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    if not _fts5_checked:
        try:
            raw.execute("CREATE VIRTUAL TABLE temp.memoryhub_fts5_probe USING fts5(x)")
            raw.execute("DROP TABLE temp.memoryhub_fts5_probe")
        except Exception as exc:  # pragma: no cover - depends on the SQLite build
            raise ImproperlyConfigured(
                "This SQLite build has no FTS5; memoryhub's keyword search needs it."
            ) from exc
        _fts5_checked = True
