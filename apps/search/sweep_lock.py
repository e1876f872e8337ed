"""One embedding sweep of an agent at a time: a lock that dies with its holder.

A lock in the cache would outlive a worker killed mid-sweep (kill -9, OOM): the task the
broker delivers again would find it held and leave the rows until it expired. So the lock
is the database's, per backend. PostgreSQL: a session advisory lock on the sweep's
connection, released when the sweep ends or the connection closes (a dead worker's closes at
once). SQLite (one machine): `flock` on a per-agent file in the data directory, released
when the file is closed or its process dies; each try opens its own file, so threads of one
process exclude each other too.
"""

import fcntl
import os
from collections.abc import Callable

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

# The first key of PostgreSQL's two-key advisory lock ("mh", memoryhub's embedding sweeps);
# the agent's id is the second.
ADVISORY_NAMESPACE = 0x6D68

Release = Callable[[], None]


def try_lock(agent_id: int) -> Release | None:
    """Take the agent's sweep lock without waiting: the function that releases it, or None
    when another sweep holds it."""
    connection = connections[DEFAULT_DB_ALIAS]
    if connection.vendor == "postgresql":
        return _advisory(connection, agent_id)
    return _flock(agent_id)


def _advisory(connection: BaseDatabaseWrapper, agent_id: int) -> Release | None:
    key = [ADVISORY_NAMESPACE, agent_id]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
        if not cursor.fetchone()[0]:
            return None

    def release() -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s, %s)", key)
        except DatabaseError:
            pass  # the connection is gone, and its session's locks with it

    return release


def _flock(agent_id: int) -> Release | None:
    folder = settings.DATA_DIR / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / f"embed-agent-{agent_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return lambda: os.close(fd)  # closing the file releases its lock
