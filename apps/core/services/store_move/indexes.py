# ruff: noqa: S608 - the bookkeeping table is a constant; values are parameters.
"""Vector indexes are built after the rows are in, not maintained row by row.

Inserting into an HNSW index costs about 4.5 ms a row on two cores (a 2,000-row chunk of
messages took 9.8 s with the index and 1.2 s without it); pgvector builds the same index
over loaded rows much faster. A table's HNSW indexes are dropped before its rows are copied
and created again when every table is in. Their definitions wait in a bookkeeping table on
the target, so a move interrupted in between still rebuilds them on the next run.
"""

from django.db import connections, transaction
from django.db.backends.utils import CursorWrapper

PENDING = "memoryhub_move_pending_index"
# Room for the graph while it is built; more than PostgreSQL's default (64 MB) so a large
# index is built in memory rather than row by row on disk.
BUILD_MEMORY = "1GB"


def _pending_table(cursor: CursorWrapper) -> None:
    cursor.execute(
        f"CREATE TABLE IF NOT EXISTS {PENDING} (name text PRIMARY KEY, definition text NOT NULL)"
    )


def defer_vector_indexes(alias: str, table: str) -> list[str]:
    """Drop `table`'s HNSW indexes, remembering their definitions; returns their names."""
    connection = connections[alias]
    with transaction.atomic(using=alias), connection.cursor() as cursor:
        _pending_table(cursor)
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() "
            "AND tablename = %s AND indexdef ILIKE %s",
            [table, "% USING hnsw %"],
        )
        found = cursor.fetchall()
        for name, definition in found:
            cursor.execute(
                f"INSERT INTO {PENDING} (name, definition) VALUES (%s, %s) "
                "ON CONFLICT (name) DO NOTHING",
                [name, definition],
            )
            cursor.execute(f"DROP INDEX {connection.ops.quote_name(name)}")
    return [name for name, _ in found]


def build_deferred_indexes(alias: str) -> list[str]:
    """Create every index a move dropped (one transaction each); returns their names."""
    connection = connections[alias]
    with connection.cursor() as cursor:
        _pending_table(cursor)
        cursor.execute(f"SELECT name, definition FROM {PENDING} ORDER BY name")
        pending = cursor.fetchall()
    for name, definition in pending:
        with transaction.atomic(using=alias), connection.cursor() as cursor:
            cursor.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
            cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [name])
            if cursor.fetchone() is None:
                cursor.execute(definition)
            cursor.execute(f"DELETE FROM {PENDING} WHERE name = %s", [name])
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {PENDING}")
    return [name for name, _ in pending]
