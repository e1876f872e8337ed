"""The frameworks' own test suites (tests/upstream/README.md), run against the live server:
each test gets pytest-django's live server on its own transactional test database, and
MEMORYHUB_URL and MEMORYHUB_KEY name it, so the adapters built without a client use it.

The untouched upstream copies (each framework's `upstream/` folder) are kept for the diff,
not collected.
"""

from collections.abc import Iterator

import pytest
from memoryhub_client._adapters import close_shared

from tests.factories import AgentFactory, issue_key

collect_ignore = ["langchain/upstream", "agents/upstream"]


@pytest.fixture(autouse=True)
def memoryhub_env(monkeypatch, transactional_db, live_server) -> Iterator[None]:
    """Every upstream test runs with a live memoryhub server and an agent's key; its shared
    clients are closed after the test. (Not tests/support/live's fixtures: the upstream
    tests have an `agent` fixture of their own.)"""
    monkeypatch.setenv("MEMORYHUB_URL", live_server.url)
    monkeypatch.setenv("MEMORYHUB_KEY", issue_key(AgentFactory(slug="alice-bot")))
    yield
    close_shared()
