"""What the framework adapters (langchain, langgraph, agents) share: the client they talk
through, and the session a framework's session id names.

An adapter takes one `client`:
- None: the client of the environment (MEMORYHUB_URL, MEMORYHUB_KEY, as `MemoryHub()` reads
  them), one per URL and key in the process, shared by every adapter built without a client
  (frameworks make one per call: LangChain's RunnableWithMessageHistory asks its factory
  for a history on every run); the async one is one per event loop as well, because an
  httpx connection pool belongs to the loop that opened it, and it is closed as its loop
  shuts down (asyncio.run's shutdown of async generators);
- a MemoryHub: sync methods use it, async ones run it in a worker thread;
- an AsyncMemoryHub: async methods use it; sync methods raise TypeError.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from memoryhub_client import AsyncMemoryHub, MemoryHub

_Env = tuple[str | None, str | None]
_lock = threading.Lock()
_shared: dict[_Env, MemoryHub] = {}
# Per loop: (the client, the async generator whose finalization closes it). The loop holds
# its async generators weakly, so this entry keeps the generator alive until then.
_shared_async: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[_Env, tuple[AsyncMemoryHub, AsyncIterator[None]]]
] = weakref.WeakKeyDictionary()


def _env() -> _Env:
    return os.environ.get("MEMORYHUB_URL"), os.environ.get("MEMORYHUB_KEY")


def shared_client() -> MemoryHub:
    """The process's MemoryHub for the environment's URL and key."""
    with _lock:
        hub = _shared.get(_env())
        if hub is None:
            hub = _shared[_env()] = MemoryHub()
        return hub


async def shared_async_client() -> AsyncMemoryHub:
    """The running loop's AsyncMemoryHub for the environment's URL and key."""
    loop = asyncio.get_running_loop()
    env = _env()
    hubs = _shared_async.setdefault(loop, {})
    if env not in hubs:
        hub = AsyncMemoryHub()
        closer = _closed_with_loop(hub, loop, env)
        await closer.__anext__()  # started here, so this loop finalizes it when shutting down
        hubs[env] = (hub, closer)
    return hubs[env][0]


async def _closed_with_loop(
    hub: AsyncMemoryHub, loop: asyncio.AbstractEventLoop, env: _Env
) -> AsyncIterator[None]:
    try:
        yield
    finally:
        _shared_async.get(loop, {}).pop(env, None)
        await hub.aclose()


def close_shared() -> None:
    """Close the shared blocking clients (the async ones go with their loops)."""
    with _lock:
        hubs = list(_shared.values())
        _shared.clear()
    for hub in hubs:
        hub.close()


class Clients:
    """The adapter's client (see the module docstring) and how to call it."""

    def __init__(self, client: MemoryHub | AsyncMemoryHub | None = None) -> None:
        if client is not None and not isinstance(client, (MemoryHub, AsyncMemoryHub)):
            raise TypeError(f"client must be a MemoryHub or an AsyncMemoryHub, not {client!r}")
        self._given = client

    @property
    def sync(self) -> MemoryHub:
        """The blocking client: the given one, or the environment's."""
        if isinstance(self._given, MemoryHub):
            return self._given
        if isinstance(self._given, AsyncMemoryHub):
            raise TypeError(
                "this adapter was given an AsyncMemoryHub: use its async methods, or give it "
                "a MemoryHub"
            )
        return shared_client()

    async def _async(self) -> AsyncMemoryHub:
        if isinstance(self._given, AsyncMemoryHub):
            return self._given
        return await shared_async_client()

    async def run(
        self, method: Callable[[Any], Any], *, stop: Callable[[list], bool] | None = None
    ) -> Any:
        """`method(hub)` awaited; a listing is read into a list (up to where `stop(items)`
        first holds). A given MemoryHub runs in a worker thread."""
        if isinstance(self._given, MemoryHub):
            sync = self._given
            return await asyncio.to_thread(lambda: read(method(sync), stop=stop))
        result = method(await self._async())
        if inspect.isawaitable(result):
            result = await result
        if isinstance(result, AsyncIterator):
            found: list = []
            async for item in result:
                found.append(item)
                if stop is not None and stop(found):
                    break
            return found
        return result


def read(result: Any, *, stop: Callable[[list], bool] | None = None) -> Any:
    """A sync call's answer; a listing read into a list (up to where `stop(items)` holds)."""
    if not isinstance(result, Iterator):
        return result
    found: list = []
    for item in result:
        found.append(item)
        if stop is not None and stop(found):
            break
    return found


class SessionRef:
    """The memoryhub session a framework's session id names (a session key, or an id):
    created on the first write (get-or-create by key), and before each write when it has a
    user or a title; never by a read."""

    def __init__(
        self, session_id: str, *, user: str | None = None, title: str | None = None
    ) -> None:
        if not isinstance(session_id, str) or not session_id:
            raise ValueError("session_id must be a non-empty string")
        self.session_id = session_id
        self._create: dict[str, Any] = {
            name: value for name, value in {"user": user, "title": title}.items() if value
        }
        self._ready = False

    # A session with a user (or a title) is created before every write: an append to a key
    # that is gone (its user erased, the session deleted) would start it again as the
    # agent's own, without its user (POST /sessions/{key}/messages creates a new key's).
    def ensure(self, hub: MemoryHub) -> None:
        if not self._ready:
            hub.sessions.create(key=self.session_id, **self._create)
            self._ready = not self._create

    async def aensure(self, clients: Clients) -> None:
        if not self._ready:
            await clients.run(lambda hub: hub.sessions.create(key=self.session_id, **self._create))
            self._ready = not self._create

    def forget(self) -> None:
        """The session is gone (deleted elsewhere): the next write creates it again."""
        self._ready = False
