"""Print each framework's own suite's counts (tests/upstream) in each CI run's JUnit file:
`<backend>  <framework's file>: N passed, N failed, N skipped (N on memoryhub)`, then every
skip's reason, and the tests deselected (tests/upstream/langgraph/deselected.py). "On
memoryhub": the tests whose body builds a memoryhub history or session (a
`# memoryhub:` line, or LangChain's history factory); the others test the framework's own
code (its SQLite sessions' storage, its base classes) and run unchanged. Exits non-zero when
a suite is missing, a test failed, or a skip gives no reason."""

import ast
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository: tests.*
from tests.upstream.langgraph.deselected import DESELECTED

# JUnit classname prefix -> the upstream file it was adapted from (tests/upstream/README.md).
SUITES = {
    "tests.upstream.langchain.test_chat_history": (
        "langchain-core 1.8.3 tests/unit_tests/chat_history/test_chat_history.py"
    ),
    "tests.upstream.langchain.test_history": (
        "langchain-core 1.8.3 tests/unit_tests/runnables/test_history.py"
    ),
    "tests.upstream.agents.test_session": "openai-agents 0.24.0 tests/memory/test_session.py",
    "tests.upstream.agents.test_session_limit": (
        "openai-agents 0.24.0 tests/memory/test_session_limit.py"
    ),
    "tests.upstream.agents.test_async_sqlite_session": (
        "openai-agents 0.24.0 tests/extensions/memory/test_async_sqlite_session.py"
    ),
    "tests.upstream.langgraph.checkpoint.test_store": (
        "langgraph-checkpoint 4.3.2 tests/test_store.py"
    ),
    "tests.upstream.langgraph.checkpoint_sqlite.test_store": (
        "langgraph-checkpoint-sqlite 3.1.2 tests/test_store.py"
    ),
    "tests.upstream.langgraph.checkpoint_sqlite.test_async_store": (
        "langgraph-checkpoint-sqlite 3.1.2 tests/test_async_store.py"
    ),
}
# What builds a memoryhub object in a test's body: LangChain's history factory, or one of
# the LangGraph suites' stores (their `store` fixture is a MemoryHubStore too).
BUILDS = ("_get_get_session_history(", "InMemoryStore(", "create_vector_store(", "_store(")


def on_memoryhub(module: str) -> set[str]:
    """The test functions of `module` that build a memoryhub history or session."""
    source = Path(module.replace(".", "/") + ".py").read_text()
    lines = source.splitlines()
    found = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = "\n".join(lines[node.lineno - 1 : node.end_lineno])
            takes_store = any(a.arg == "store" for a in node.args.args)
            if "# memoryhub:" in body or takes_store or any(b in body for b in BUILDS):
                found.add(node.name)
    return found


def suite_of(classname: str) -> str | None:
    # A test in a class has the class after the module: match the module exactly.
    for module in SUITES:
        if classname == module or classname.startswith(module + "."):
            return module
    return None


def report(path: str) -> int:
    """Print one run's counts per suite; the number of problems found."""
    backend = Path(path).stem
    counts = {module: [0, 0, 0] for module in SUITES}
    live = {module: on_memoryhub(module) for module in SUITES}
    ran_live = dict.fromkeys(SUITES, 0)
    reasons: list[str] = []
    problems = 0
    for case in ET.parse(path).iter("testcase"):
        module = suite_of(case.get("classname", ""))
        if module is None:
            continue
        ran_live[module] += case.get("name", "").split("[")[0] in live[module]
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            counts[module][1] += 1
        elif skipped is not None:
            counts[module][2] += 1
            reason = (skipped.get("message") or "").strip()
            reasons.append(f"  skipped {case.get('classname')}::{case.get('name')}: {reason}")
            problems += not reason
        else:
            counts[module][0] += 1
    for module, (passed, failed, skipped) in counts.items():
        print(
            f"{backend:9} {SUITES[module]}: {passed} passed, {failed} failed, {skipped} skipped"
            f" ({ran_live[module]} on memoryhub)"
        )
        problems += failed + (passed + failed + skipped == 0)
    print("\n".join(reasons) if reasons else f"{backend:9} no test skipped")
    return problems


def deselected() -> None:
    """Print the upstream tests deselected, with why (InMemoryStore fails them too)."""
    for name, reason in DESELECTED.items():
        print(f"deselected tests/upstream/langgraph/{name}: {reason}")


if __name__ == "__main__":
    problems = sum(report(p) for p in sys.argv[1:])
    deselected()
    sys.exit(1 if problems else 0)
