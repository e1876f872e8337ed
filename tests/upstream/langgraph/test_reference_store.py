"""The deselected upstream tests (deselected.py) fail on langgraph's own reference store,
InMemoryStore, too: the condition under which the issue lets them be deselected."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from tests.upstream.langgraph.checkpoint_sqlite import test_async_store as async_suite
from tests.upstream.langgraph.checkpoint_sqlite import test_store as suite
from tests.upstream.langgraph.deselected import DESELECTED


def test_the_deselected_tests_are_the_three_checked_here() -> None:
    assert sorted(name.split("::")[1] for name in DESELECTED) == [
        "test_no_running_loop",
        "test_sql_injection_vulnerability",
        "test_vector_store_initialization",
    ]


def test_in_memory_store_has_no_conn_for_the_vector_table_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    @contextmanager
    def in_memory(
        embeddings: Any,
        conn_string: str = ":memory:",
        text_fields: Any = None,  # Any: upstream's
    ) -> Iterator[InMemoryStore]:
        index = {"dims": embeddings.dims, "embed": embeddings, "text_fields": text_fields}
        yield InMemoryStore(index=index)

    monkeypatch.setattr(suite, "create_vector_store", in_memory)
    with pytest.raises(AttributeError, match="'InMemoryStore' object has no attribute 'conn'"):
        suite.test_vector_store_initialization(suite.CharacterEmbeddings(dims=500))


def test_in_memory_store_refuses_no_filter_key() -> None:
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        suite.test_sql_injection_vulnerability(InMemoryStore())


async def test_in_memory_store_sync_calls_work_inside_an_event_loop() -> None:
    with pytest.raises(pytest.fail.Exception, match="DID NOT RAISE"):
        await async_suite.test_no_running_loop(InMemoryStore())
