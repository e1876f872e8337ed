"""Database maintenance that the application owns."""

from django.db import connection


def database_optimize() -> bool:
    """Refresh SQLite's planner statistics; return whether anything ran (PostgreSQL: no-op).

    Without statistics SQLite treats every equality index as equally selective and can scan
    an agent's 100k messages through the agent index instead of one session's 1k through the
    session index (87 ms against 3 ms). PostgreSQL's autovacuum keeps its own statistics.
    """
    if connection.vendor != "sqlite":
        return False
    with connection.cursor() as cursor:
        # analysis_limit bounds the cost: ANALYZE samples instead of reading whole indexes.
        cursor.execute("PRAGMA analysis_limit = 1000")
        cursor.execute("PRAGMA optimize = 0x10002")
    return True
