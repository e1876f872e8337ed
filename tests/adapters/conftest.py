"""The framework adapters (memoryhub_client.langchain, .langgraph, .agents) against the real
server: pytest-django's live server on the test database (transactional, so the server
thread sees what a test wrote), with a real key, each framework's real package.

Adapters built without a client read MEMORYHUB_URL and MEMORYHUB_KEY, as the client does:
the `env` fixture points both at the live server.
"""

from collections.abc import Iterator

import pytest
from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client._adapters import close_shared

from tests.support.live import agent, key, live_url  # noqa: F401  (shared fixtures)


@pytest.fixture
def env(monkeypatch, live_url, key) -> Iterator[None]:
    """MEMORYHUB_URL and MEMORYHUB_KEY name the live server and the agent's key; the
    adapters' shared clients of them are closed after the test."""
    monkeypatch.setenv("MEMORYHUB_URL", live_url)
    monkeypatch.setenv("MEMORYHUB_KEY", key)
    yield
    close_shared()


@pytest.fixture
def hub(live_url, key) -> Iterator[MemoryHub]:
    """A blocking client of the agent, to give an adapter and to check what it stored."""
    with MemoryHub(live_url, key) as client:
        yield client


@pytest.fixture
def async_hub_factory(live_url, key):
    """Makes an AsyncMemoryHub of the agent (inside the loop that will use it)."""
    return lambda: AsyncMemoryHub(live_url, key)
