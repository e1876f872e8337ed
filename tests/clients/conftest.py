"""memoryhub_client against the real server: pytest-django's live server on the test
database (transactional, so the server thread sees what a test wrote), with a real key.

A scenario is written once, as `async def scenario(hub)`, and `run(scenario)` runs it on
MemoryHub and on AsyncMemoryHub (the `run` fixture is parametrized): `await settle(call)`
takes a call's value whichever the hub, `await collect(listing)` a listing's items. Every
request either hub sends is recorded, so the last test of the directory can check that
every client method was called with success on both (test_every_method.py, moved last).
"""

import asyncio
import inspect
import re
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import httpx
import pytest
from memoryhub_client import AsyncMemoryHub, MemoryHub
from memoryhub_client._call import OPERATIONS

from tests.clients.loopback import loopback  # noqa: F401  (a fixture of this directory)
from tests.support.live import agent, key, live_url  # noqa: F401  (shared fixtures)

HUBS = ["sync", "async"]
# (hub kind, METHOD, OpenAPI path) of every 2xx answer a test's hub received.
CALLED: set[tuple[str, str, str]] = set()
_TEMPLATES = [
    (method, path, re.compile("^" + re.sub(r"\{\w+\}", ".+", path) + "$"))
    for method, path in OPERATIONS
]


def operation_of(method: str, url_path: str) -> tuple[str, str] | None:
    """The (METHOD, OpenAPI path) a request was for: of the templates matching, the one with
    the most literal segments (/entries/search, not /entries/{name})."""
    found = [(m, p) for m, p, rx in _TEMPLATES if m == method and rx.match(url_path)]
    literal = lambda op: sum(1 for part in op[1].split("/") if "{" not in part)  # noqa: E731
    return max(found, key=literal) if found else None


def _record(kind: str, response: httpx.Response) -> None:
    if response.is_success:
        op = operation_of(response.request.method, response.request.url.path)
        if op is not None:
            CALLED.add((kind, *op))


def recording_hub(kind: str, url: str, key: str, **options: Any) -> MemoryHub | AsyncMemoryHub:
    """A hub of `kind` whose successful calls are recorded in CALLED."""
    if kind == "sync":
        hub: MemoryHub | AsyncMemoryHub = MemoryHub(url, key, **options)
        hub._transport.client.event_hooks["response"].append(lambda r: _record(kind, r))
        return hub

    async def hook(response: httpx.Response) -> None:
        _record(kind, response)

    hub = AsyncMemoryHub(url, key, **options)
    hub._transport.client.event_hooks["response"].append(hook)
    return hub


async def settle(value: Any) -> Any:
    """A call's value on either hub: the async hub's coroutine awaited, the sync hub's as is."""
    return await value if inspect.isawaitable(value) else value


async def collect(listing: Iterable[Any] | AsyncIterable[Any]) -> list[Any]:
    """Every item of a listing, from an iterator or an async iterator."""
    if isinstance(listing, AsyncIterable):
        return [item async for item in listing]
    return list(listing)


Scenario = Callable[[Any], Awaitable[Any]]


@pytest.fixture(params=HUBS)
def hub_kind(request) -> str:
    return request.param


@pytest.fixture
def run(hub_kind, live_url, key) -> Callable[..., Any]:
    """run(scenario, key=..., url=..., **options): the scenario on a fresh hub of this
    test's kind, on the live server unless `url` says otherwise."""

    def run(
        scenario: Scenario, *, key: str | None = key, url: str | None = None, **options: Any
    ) -> Any:
        async def main() -> Any:
            if url is None:
                hub = recording_hub(hub_kind, live_url, key or "", **options)
            else:  # a loopback server's canned answers are no proof a method works
                hub = (MemoryHub if hub_kind == "sync" else AsyncMemoryHub)(url, key, **options)
            try:
                return await scenario(hub)
            finally:
                if isinstance(hub, AsyncMemoryHub):
                    await hub.aclose()
                else:
                    hub.close()

        return asyncio.run(main())

    return run


HERE = Path(__file__).parent
LAST = "test_every_method.py::test_every_client_method_was_called_on_both_hubs"
RUN: dict[str, bool] = {"whole": False, "deselected": False}


def _here(item: pytest.Item) -> bool:
    return Path(str(item.path)).parent == HERE


def pytest_deselected(items):
    RUN["deselected"] = RUN["deselected"] or any(_here(i) for i in items)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The check over every test's calls runs after them, and only when every test of this
    directory runs (no -k, no file::test, every file); otherwise it is deselected."""
    for item in [i for i in items if i.nodeid.endswith(LAST)]:
        items.remove(item)
        items.append(item)
    files = {p.name for p in HERE.glob("test_*.py")}
    present = {Path(str(i.path)).name for i in items if _here(i)}
    picked = any("::" in arg and Path(arg.split("::")[0]).parent.name == HERE.name
                 for arg in config.args)  # fmt: skip
    RUN["whole"] = files == present and not RUN["deselected"] and not picked
    if not RUN["whole"]:
        # A partial run cannot judge "every method was called": the check is deselected
        # (reported as such), never run to skip; a whole run, as CI's, always has it.
        last = [i for i in items if i.nodeid.endswith(LAST)]
        if last:
            items.remove(last[0])
            config.hook.pytest_deselected(items=last)
