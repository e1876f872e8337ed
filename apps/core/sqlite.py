"""SQLite connection set-up for the embedded default: sqlite-vec loaded, FTS5 verified."""

from typing import Any

import sqlite_vec
from django.core.exceptions import ImproperlyConfigured

_fts5_checked = False


def on_connection_created(sender: Any, connection: Any, **kwargs: Any) -> None:
    """Load sqlite-vec into every new SQLite connection and check FTS5 once per process.

    Module level on purpose: signals hold weak references, a nested function would be
    garbage-collected and vec0 would vanish from later connections.
    """
    global _fts5_checked
    if connection.vendor != "sqlite":
        return
    raw = connection.connection
    raw.enable_load_extension(True)
    try:
        sqlite_vec.load(raw)
    finally:
        raw.enable_load_extension(False)
    if not _fts5_checked:
        try:
            raw.execute("CREATE VIRTUAL TABLE temp.memoryhub_fts5_probe USING fts5(x)")
            raw.execute("DROP TABLE temp.memoryhub_fts5_probe")
        except Exception as exc:  # pragma: no cover - depends on the SQLite build
            raise ImproperlyConfigured(
                "This SQLite build has no FTS5; memoryhub's keyword search needs it."
            ) from exc
        _fts5_checked = True
