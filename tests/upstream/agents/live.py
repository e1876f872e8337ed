"""How the adapted Agents SDK tests build their session (tests/upstream/README.md)."""

from typing import Any

from memoryhub_client.agents import MemoryHubSession


class LiveSession(MemoryHubSession):
    """A MemoryHubSession with SQLiteSession's `close()`, which the tests call when done:
    memoryhub holds no connection of one session's, so it has nothing to close."""

    def __init__(self, session_id: str, **settings: Any) -> None:
        super().__init__(session_id, **settings)

    def close(self) -> None:
        pass


class AsyncLiveSession(LiveSession):
    """The same, with AsyncSQLiteSession's awaited `close()`."""

    async def close(self) -> None:  # type: ignore[override]
        pass
