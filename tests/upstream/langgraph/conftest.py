"""LangGraph's own store tests (tests/upstream/langgraph/README.md) against memoryhub: each
test's store is a MemoryHubStore of a fresh agent on pytest-django's live server (SQLite or
PostgreSQL, as the run's DATABASE_URL says). The untouched upstream files under upstream/
are not collected; the adapted copies beside them are."""

import inspect
import itertools
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import pytest
from memoryhub_client._adapters import close_shared
from memoryhub_client.langgraph import MemoryHubStore

from tests.support.live import agent, key, live_url  # noqa: F401  (shared fixtures)
from tests.upstream.langgraph.deselected import reason_for

collect_ignore = ["upstream"]
_stores = itertools.count(1)


@pytest.fixture(autouse=True)
def memoryhub_env(monkeypatch, live_url, key) -> Iterator[None]:
    """Every store a test builds (MemoryHubStore() without a client) is the live server's,
    as the test's agent: MEMORYHUB_URL and MEMORYHUB_KEY name them."""
    monkeypatch.setenv("MEMORYHUB_URL", live_url)
    monkeypatch.setenv("MEMORYHUB_KEY", key)
    yield
    close_shared()


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Upstream runs pytest-asyncio in auto mode: its `async def` tests carry no marker, so
    they get one here (before pytest-asyncio collects them), in this directory only."""
    if name.startswith("test") and inspect.iscoroutinefunction(obj):
        pytest.mark.asyncio(obj)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the upstream tests InMemoryStore fails too (deselected.py, with why)."""
    dropped = [i for i in items if reason_for(i.nodeid)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = [i for i in items if not reason_for(i.nodeid)]


class UpstreamStore(MemoryHubStore):
    """The store an upstream test builds: a MemoryHubStore whose namespaces name no end user
    (user_from_namespace=None): upstream's namespaces such as ("users", "123") are plain
    labels there, and its listings across them (prefix=("users", "*")) expect every item,
    where memoryhub's default rule would make each one user's and list no user's items
    without that user (docs: memoryhub_client.langgraph, "Whose an item is"). Each store
    keeps its items in an entry folder of its own, so two stores of one test are apart, as
    two InMemoryStores (or two ":memory:" SqliteStores) are. A class, so upstream's
    `mocker.spy(InMemoryStore, "batch")` spies the store's batch."""

    def __init__(self, **options: Any) -> None:  # Any: LangGraph's store options
        super().__init__(user_from_namespace=None, prefix=f"store{next(_stores)}", **options)


@contextmanager
def memoryhub_store(**options: Any) -> Iterator[MemoryHubStore]:  # Any: LangGraph's options
    """What `with SqliteStore.from_conn_string(...) as store` becomes: a MemoryHubStore."""
    yield UpstreamStore(**options)


@asynccontextmanager
async def amemoryhub_store(**options: Any) -> AsyncIterator[MemoryHubStore]:  # Any: as above
    """What `async with AsyncSqliteStore.from_conn_string(...) as store` becomes."""
    yield UpstreamStore(**options)
