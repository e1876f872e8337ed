"""The upstream store tests deselected here: each one langgraph's own reference store,
InMemoryStore, fails too (the issue allows these, stated), each with why.
test_reference_store.py runs them on InMemoryStore and checks that each fails there."""

DESELECTED = {
    "checkpoint_sqlite/test_store.py::test_vector_store_initialization": (
        "reads SqliteStore's own vector tables through store.conn: MemoryHubStore keeps items "
        "as memoryhub entries and has no conn, and neither has InMemoryStore"
    ),
    "checkpoint_sqlite/test_store.py::test_sql_injection_vulnerability": (
        "expects SqliteStore's 'Invalid filter key' refusal of keys unsafe in its SQL: "
        "MemoryHubStore filters in the client, where any JSON key is a filter key, as "
        "InMemoryStore does"
    ),
    "checkpoint_sqlite/test_async_store.py::test_no_running_loop": (
        "expects AsyncSqliteStore's InvalidStateError from a sync call inside an event loop: "
        "MemoryHubStore's sync methods block and work there (its docstring: 'Sync and "
        "async'), as InMemoryStore's do"
    ),
}


def reason_for(nodeid: str) -> str | None:
    """The reason a test is deselected (None: it runs); `nodeid` as pytest names it."""
    path, _, name = nodeid.partition("::")
    return DESELECTED.get(f"{path.split('tests/upstream/langgraph/')[-1]}::{name.split('[')[0]}")
