"""What the framework adapters (langchain, langgraph, agents) share: the client they talk
through, and the session a framework's session id names.

An adapter takes one `client`:
- None: its own, from the environment (MEMORYHUB_URL, MEMORYHUB_KEY) as `MemoryHub()` reads
  it; the async one is made once per event loop, because an httpx connection pool belongs
  to the loop that opened it and frameworks run an adapter under several loops;
- a MemoryHub: sync methods use it, async ones run it in a worker thread;
- an AsyncMemoryHub: async methods use it; sync methods raise TypeError.
"""

from __future__ import annotations

import asyncio
import inspect
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from memoryhub_client import AsyncMemoryHub, MemoryHub


class Clients:
    """The adapter's client (see the module docstring) and how to call it."""

    def __init__(self, client: MemoryHub | AsyncMemoryHub | None = None) -> None:
        if client is not None and not isinstance(client, (MemoryHub, AsyncMemoryHub)):
            raise TypeError(f"client must be a MemoryHub or an AsyncMemoryHub, not {client!r}")
        self._given = client
        self._sync: MemoryHub | None = client if isinstance(client, MemoryHub) else None
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncMemoryHub] = (
            weakref.WeakKeyDictionary()
        )

    @property
    def sync(self) -> MemoryHub:
        """The blocking client (made from the environment when none was given)."""
        if self._sync is None:
            if isinstance(self._given, AsyncMemoryHub):
                raise TypeError(
                    "this adapter was given an AsyncMemoryHub: use its async methods, or give "
                    "it a MemoryHub"
                )
            self._sync = MemoryHub()
        return self._sync

    def _async(self) -> AsyncMemoryHub:
        if isinstance(self._given, AsyncMemoryHub):
            return self._given
        loop = asyncio.get_running_loop()
        hub = self._by_loop.get(loop)
        if hub is None:
            hub = self._by_loop[loop] = AsyncMemoryHub()
        return hub

    async def run(
        self, method: Callable[[Any], Any], *, stop: Callable[[list], bool] | None = None
    ) -> Any:
        """`method(hub)` awaited; a listing is read into a list (up to where `stop(items)`
        first holds). A given MemoryHub runs in a worker thread."""
        if isinstance(self._given, MemoryHub):
            sync = self._given
            return await asyncio.to_thread(lambda: read(method(sync), stop=stop))
        result = method(self._async())
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
    created on the first write (get-or-create by key), never by a read."""

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

    def ensure(self, hub: MemoryHub) -> None:
        if not self._ready:
            hub.sessions.create(key=self.session_id, **self._create)
            self._ready = True

    async def aensure(self, clients: Clients) -> None:
        if not self._ready:
            await clients.run(lambda hub: hub.sessions.create(key=self.session_id, **self._create))
            self._ready = True

    def forget(self) -> None:
        """The session is gone (deleted elsewhere): the next write creates it again."""
        self._ready = False
