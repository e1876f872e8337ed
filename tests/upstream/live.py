"""The live server of the frameworks' own test suites (tests/upstream/README.md): each
test gets pytest-django's live server on its own transactional test database, and
MEMORYHUB_URL and MEMORYHUB_KEY name it, so the adapters built without a client use it.
tests/upstream/langchain's and agents' conftests import `memoryhub_env`.
"""

from collections.abc import Iterator

import pytest
from memoryhub_client._adapters import close_shared

from tests.factories import AgentFactory, issue_key


@pytest.fixture(autouse=True)
def memoryhub_env(monkeypatch, transactional_db, live_server) -> Iterator[None]:
    """Every upstream test runs with a live memoryhub server and an agent's key; its shared
    clients are closed after the test. (Not tests/support/live's fixtures: the upstream
    tests have an `agent` fixture of their own.)"""
    monkeypatch.setenv("MEMORYHUB_URL", live_server.url)
    monkeypatch.setenv("MEMORYHUB_KEY", issue_key(AgentFactory(slug="alice-bot")))
    yield
    close_shared()
