# ruff: noqa: S608 - table names come from model metadata and the catalog, never from input.
"""Making deleted rows unreadable on disk (an erasure's `vacuum`), one function per backend.

A DELETE only marks rows dead: SQLite keeps their bytes in free pages, in the FTS5 segments
that still list their tokens, and in the WAL file; PostgreSQL keeps the dead tuples in the
table's pages until VACUUM. What each step leaves is in docs/memory.md ("Erasing a user").
Nothing here runs inside a transaction: VACUUM cannot.
"""

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from django.db import DatabaseError, connection

logger = logging.getLogger(__name__)


@contextmanager
def secure_delete() -> Iterator[None]:
    """On SQLite, deletes made inside overwrite the freed bytes with zeros (PRAGMA
    secure_delete, for this connection, restored afterwards); elsewhere nothing."""
    if connection.vendor != "sqlite":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA secure_delete")
        (was,) = cursor.fetchone()
        cursor.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA secure_delete = {int(was)}")


def vacuum_tables(tables: Sequence[str], *, rewritten: Callable[[], object] = lambda: None) -> bool:
    """Rewrite the storage of `tables` so no deleted row is left in it; False (nothing run)
    inside a transaction, on a backend without a vacuum, when the database was locked, or
    when SQLite's WAL could not be emptied (a reader held it). SQLite rewrites the whole
    file, then calls `rewritten` (rowids may have moved: the search side tables are rebuilt
    there). Never raises for a lock: what it follows (an erasure) has committed."""
    if connection.in_atomic_block:
        return False
    try:
        if connection.vendor == "sqlite":
            return _sqlite_vacuum(rewritten)
        if connection.vendor == "postgresql":
            return _postgres_vacuum(tables)
    except DatabaseError as exc:  # locked by another writer past the busy timeout
        logger.warning("vacuum did not run: %s", exc)
    return False


def fts5_tables() -> list[str]:
    """SQLite: every FTS5 table of the database (keyword and trigram side tables)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' "
            "AND sql LIKE 'CREATE VIRTUAL TABLE % USING fts5(%' ORDER BY name"
        )
        return [name for (name,) in cursor.fetchall()]


def _sqlite_vacuum(rewritten: Callable[[], object]) -> bool:
    """Merge every FTS5 index (a delete leaves its tokens in old segments), VACUUM (the file
    is rewritten from the live rows), rebuild what is keyed by rowid, then copy the WAL into
    the file and truncate it (it holds every page as it was written)."""
    with secure_delete():
        with connection.cursor() as cursor:
            for table in fts5_tables():
                quoted = connection.ops.quote_name(table)
                cursor.execute(f"INSERT INTO {quoted}({quoted}) VALUES ('optimize')")
            cursor.execute("VACUUM")
        rewritten()
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            busy, _, _ = cursor.fetchone()
    return busy == 0


def _postgres_vacuum(tables: Sequence[str]) -> bool:
    """Plain VACUUM of `tables` and of the tables named after them (search side tables,
    many-to-many tables): dead tuples leave every index and their space is reusable."""
    with connection.cursor() as cursor:
        existing = connection.introspection.table_names(cursor)
        named = sorted(
            {t for t in existing for base in tables if t == base or t.startswith(f"{base}_")}
        )
        if named:
            cursor.execute("VACUUM " + ", ".join(connection.ops.quote_name(t) for t in named))
    return True
