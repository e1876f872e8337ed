"""Database maintenance that the application owns."""

from django.db import connection


def database_optimize() -> bool:
    """Refresh the planner's statistics, and on PostgreSQL the BM25 side tables' visibility
    maps; return whether anything ran (on PostgreSQL nothing inside a transaction, where
    VACUUM cannot run).

    Without statistics SQLite treats every equality index as equally selective and can scan
    an agent's 100k messages through the agent index instead of one session's 1k through the
    session index (87 ms against 3 ms). PostgreSQL's BM25 reads postings by index-only scans,
    which visit the heap for every row of a page VACUUM has not marked all-visible: at 1M
    messages a question took ~1 s so against ~0.15 s after it, and autovacuum may be off or
    behind. VACUUM only reads the pages changed since the last one.
    """
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            # analysis_limit bounds the cost: ANALYZE samples instead of reading whole indexes.
            cursor.execute("PRAGMA analysis_limit = 1000")
            cursor.execute("PRAGMA optimize = 0x10002")
        return True
    if connection.in_atomic_block:
        return False
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "AND right(tablename, 9) IN ('_bm25post', '_bm25doc')"
        )
        for (table,) in cursor.fetchall():
            cursor.execute(f"VACUUM (ANALYZE) {connection.ops.quote_name(table)}")
    return True
