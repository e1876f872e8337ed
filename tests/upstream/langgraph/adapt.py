# ruff: noqa: E501  (the reasons and lines it writes are as long as the lines they mark)
"""Rebuild the adapted copies (checkpoint/, checkpoint_sqlite/) from upstream/: every
changed or added line ends with `# memoryhub: <why>` (README.md). Run from this directory:
`python adapt.py`."""

import re
from pathlib import Path

M = "  # memoryhub: "
SKIPS = {
    "test_sql_injection_vulnerability": "expects SqliteStore's refusal of filter keys unsafe in its SQL: MemoryHubStore filters in the client, where any JSON key is a filter key (langgraph docstring: search, `filter`)",
    "test_no_running_loop": "MemoryHubStore is one store for sync and async use: its sync methods block and work inside an event loop (langgraph docstring: 'Sync and async'), where AsyncSqliteStore's raise InvalidStateError",
    "test_large_batches_async": "a load test of 6000 ops: every MemoryHubStore op is its own HTTP request (langgraph docstring: 'Ops are separate requests'), minutes on the live test server",
    "test_vector_store_initialization": "reads SqliteStore's own vector tables through store.conn: MemoryHubStore keeps items as memoryhub entries, in no client-side database (langgraph docstring)",
}


def adapt(src: str, dst: str, rules: list, skips: tuple = ()) -> None:
    out = []
    used = dict.fromkeys(range(len(rules)), 0)
    lines = Path(src).read_text().split("\n")
    for n, line in enumerate(lines):
        nxt = lines[n + 1] if n + 1 < len(lines) else ""
        test = re.match(r"(async )?def (test_\w+)\(", line)
        if test and test.group(2) in skips:
            out.append(
                f"@pytest.mark.skip(reason={SKIPS[test.group(2)]!r})"
                + M
                + "skipped: see the reason"
            )
        if line.startswith("@pytest.fixture") and nxt.startswith("async def "):
            out.append(
                line.replace("@pytest.fixture", "@pytest_asyncio.fixture")
                + M
                + "an async fixture: pytest-asyncio's decorator (strict mode here, auto upstream)"
            )
            continue
        for i, (pat, rep, why) in enumerate(rules):
            if re.search(pat, line):
                new = re.sub(pat, rep, line).split("\n")
                if len(new) > 1:  # the line kept, lines added after it
                    out.append(new[0])
                    out.extend(x + M + why for x in new[1:])
                else:
                    out.append(new[0] + M + why)
                used[i] += 1
                break
        else:
            out.append(line)
    Path(dst).write_text("\n".join(out))


def main() -> None:
    adapt(
        "upstream/checkpoint/test_store.py",
        "checkpoint/test_store.py",
        [
            (
                r"^from langgraph\.store\.memory import InMemoryStore$",
                "from tests.upstream.langgraph.conftest import UpstreamStore as InMemoryStore",
                "every store these tests build is a MemoryHubStore of the live server",
            ),
            (
                r"^from tests\.embed_test_utils import",
                "from tests.upstream.langgraph.checkpoint.embed_test_utils import",
                "upstream's tests/ package is this directory",
            ),
        ],
    )
    adapt(
        "upstream/checkpoint_sqlite/test_store.py",
        "checkpoint_sqlite/test_store.py",
        [
            (
                r"^from langgraph\.store\.sqlite import SqliteStore$",
                "from langgraph.store.sqlite import SqliteStore\nfrom tests.upstream.langgraph.conftest import memoryhub_store",
                "the stores are MemoryHubStores (SqliteStore stays for its MIGRATIONS test)",
            ),
            (
                r"SqliteStore\.from_conn_string\([^)]*index=index_config\)",
                "memoryhub_store(index=index_config)",
                "a MemoryHubStore of the live server",
            ),
            (
                r"SqliteStore\.from_conn_string\([^)]*\)",
                "memoryhub_store()",
                "a MemoryHubStore of the live server",
            ),
            (
                r"^(\s*)store\.setup\(\)$",
                r"\1pass",
                "a MemoryHubStore has nothing to set up (was: store.setup())",
            ),
        ],
        skips=("test_vector_store_initialization", "test_sql_injection_vulnerability"),
    )
    adapt(
        "upstream/checkpoint_sqlite/test_async_store.py",
        "checkpoint_sqlite/test_async_store.py",
        [
            (
                r"^from langgraph\.store\.sqlite import AsyncSqliteStore$",
                "from langgraph.store.sqlite import AsyncSqliteStore\nimport pytest_asyncio\nfrom tests.upstream.langgraph.conftest import amemoryhub_store",
                "the stores are MemoryHubStores; async fixtures need pytest-asyncio's decorator here (strict mode)",
            ),
            (
                r"^from tests\.test_store import",
                "from tests.upstream.langgraph.checkpoint_sqlite.test_store import",
                "upstream's tests/ package is this directory",
            ),
            (
                r"AsyncSqliteStore\.from_conn_string\([^)]*\)",
                "amemoryhub_store()",
                "a MemoryHubStore of the live server",
            ),
            (
                r"AsyncSqliteStore\.from_conn_string\($",
                "amemoryhub_store(",
                "a MemoryHubStore of the live server",
            ),
            (
                r"^(\s*)conn_string, index=index_config$",
                r"\1index=index_config",
                "memoryhub has no connection string",
            ),
            (
                r"^(\s*)await store\.setup\(\)$",
                r"\1pass",
                "a MemoryHubStore has nothing to set up (was: await store.setup())",
            ),
        ],
        skips=("test_no_running_loop", "test_large_batches_async"),
    )


if __name__ == "__main__":
    main()
