"""memoryhub's Python client: `MemoryHub` (blocking) and `AsyncMemoryHub` (asyncio) over
every agent-facing endpoint of the API, typed with pydantic models."""

from memoryhub_client._version import API_VERSION, __version__
from memoryhub_client.client import AsyncMemoryHub, MemoryHub
from memoryhub_client.errors import (
    Conflict,
    Forbidden,
    InvalidInput,
    MemoryHubError,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
)
from memoryhub_client.models import (
    AppendResult,
    Context,
    Entry,
    Fact,
    Message,
    NewMessage,
    SearchResult,
    Session,
    Window,
)

__all__ = [
    "API_VERSION",
    "AppendResult",
    "AsyncMemoryHub",
    "Conflict",
    "Context",
    "Entry",
    "Fact",
    "Forbidden",
    "InvalidInput",
    "MemoryHub",
    "MemoryHubError",
    "Message",
    "NewMessage",
    "NotFound",
    "RateLimited",
    "SearchResult",
    "Session",
    "Unauthorized",
    "Unavailable",
    "Window",
    "__version__",
]
