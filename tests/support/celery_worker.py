"""A real Celery worker on the configured broker (filesystem embedded, Redis in production).

The worker runs in a thread of the test process so it shares the test database; tests that
use it need committed data: mark them `django_db(transaction=True)`.
"""

import pytest
from celery.contrib.testing.worker import start_worker

from memoryhub.celery import app


@pytest.fixture
def celery_worker(transactional_db):
    """Start a worker; tasks sent with .delay() go through the broker to it."""
    app.conf.task_always_eager = False
    try:
        with start_worker(
            app,
            pool="threads",
            concurrency=1,
            perform_ping_check=False,
            shutdown_timeout=30,
            loglevel="WARNING",
        ) as worker:
            yield worker
    finally:
        app.conf.task_always_eager = True
