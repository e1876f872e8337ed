"""Fixtures for the fault-injection tests: services of the test's own (a redis-server on a
free port as the broker), so stopping one hurts no other test or helper."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.services import RedisServer


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[RedisServer]:
    """A private redis-server, started; the test may stop and start it."""
    server = RedisServer(tmp_path).start()
    try:
        yield server
    finally:
        server.stop()
