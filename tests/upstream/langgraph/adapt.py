# ruff: noqa: E501  (the reasons and lines it writes are as long as the lines they mark)
"""Rebuild the adapted copies (checkpoint/, checkpoint_sqlite/) from upstream/: every
changed or added line ends with `# memoryhub: <why>` (README.md). Run from this directory:
`python adapt.py`."""

import re
from pathlib import Path

M = "  # memoryhub: "
# Both params of upstream's stores ("memory", "file") name a SQLite file: each builds the
# same MemoryHubStore here, so one of them runs.
ONE_PARAM = (r'params=\["memory", "file"\]', 'params=["memory"]')
ONE_PARAM_WHY = "one param: both build the same MemoryHubStore (memoryhub has no file)"
# Tests one CI run runs (tests/conftest.py's backend markers): the other skips them.
MARKS = {
    "test_large_batches_async": (
        "@pytest.mark.postgres",
        "a load test of 6,000 requests (minutes): the PostgreSQL run runs it, the SQLite run skips it",
    ),
}


def adapt(src: str, dst: str, rules: list) -> None:
    out = []
    used = dict.fromkeys(range(len(rules)), 0)
    lines = Path(src).read_text().split("\n")
    for n, line in enumerate(lines):
        nxt = lines[n + 1] if n + 1 < len(lines) else ""
        test = re.match(r"(async )?def (test_\w+)\(", line)
        if test and test.group(2) in MARKS:
            mark, why = MARKS[test.group(2)]
            out.append(mark + M + why)
        if line.startswith("@pytest.fixture") and nxt.startswith("async def "):
            why = "an async fixture: pytest-asyncio's decorator (strict mode here, auto upstream)"
            if re.search(ONE_PARAM[0], line):
                line, why = re.sub(*ONE_PARAM, line), f"{why}; {ONE_PARAM_WHY}"
            out.append(line.replace("@pytest.fixture", "@pytest_asyncio.fixture") + M + why)
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
            (*ONE_PARAM, ONE_PARAM_WHY),
            (
                r"^(\s*)store\.setup\(\)$",
                r"\1pass",
                "a MemoryHubStore has nothing to set up (was: store.setup())",
            ),
        ],
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
            (*ONE_PARAM, ONE_PARAM_WHY),
            (
                r"^(\s*)await store\.setup\(\)$",
                r"\1pass",
                "a MemoryHubStore has nothing to set up (was: await store.setup())",
            ),
        ],
    )


if __name__ == "__main__":
    main()
