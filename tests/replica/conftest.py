"""A real streaming replica (.ci/start-replica.sh, port 5433), named by DATABASE_REPLICA_URL
in the PostgreSQL CI run. Its alias reads the primary's test database (TEST MIRROR): rows
reach it only once committed and streamed, so its tests are transactional and wait for it.
"""

import time

import pytest
from django.conf import settings
from django.db import connections

from apps.core.replicas import forget_replica_answers
from tests.review.conftest import editor, editor_client  # noqa: F401 - fixtures used here

REPLICA = "replica1"
HAS_REPLICA = REPLICA in settings.DATABASES

# The tests that read from the real replica: PostgreSQL run with DATABASE_REPLICA_URL.
with_replica = [
    pytest.mark.skipif(not HAS_REPLICA, reason="needs DATABASE_REPLICA_URL (PostgreSQL run)"),
    pytest.mark.django_db(transaction=True, databases=["default", REPLICA]),
]
# The tests of a deployment without replicas: the SQLite run (and any run without one).
without_replica = [
    pytest.mark.skipif(HAS_REPLICA, reason="DATABASE_REPLICA_URL is set"),
    pytest.mark.django_db,
]


@pytest.fixture
def replica_reads_on(settings):
    """Replica reads as a deployment has them (the test settings turn them off), every
    replica probed afresh."""
    settings.MEMORYHUB_REPLICA_READS = True
    forget_replica_answers()
    yield
    forget_replica_answers()


def caught_up(timeout: float = 10.0) -> None:
    """Wait until the replica has replayed everything the primary has written so far."""
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()")
        (lsn,) = cursor.fetchone()
    deadline = time.monotonic() + timeout
    with connections[REPLICA].cursor() as cursor:
        while True:
            cursor.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [lsn])
            if cursor.fetchone()[0]:
                return
            assert time.monotonic() < deadline, f"the replica did not replay {lsn} in {timeout}s"
            time.sleep(0.02)
