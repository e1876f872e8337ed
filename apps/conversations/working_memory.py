"""Working memory (seed 002): the last N hot-window messages of a session, in Django's cache.

Web and workers are separate processes, so the cache is shared (file cache embedded, Redis in
production). Freshness comes from a per-session token: every write sets a new random token
after its transaction commits, and readers store what they read under the token they saw
*before* reading the database. A reader racing a writer can only fill a key nobody will
read again, so a read that starts after a write has returned is never stale.
"""

import uuid
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.db import transaction

TTL_SECONDS = 60 * 60


def _token_key(session_id: uuid.UUID) -> str:
    return f"mh:wm:token:{session_id}"


def _data_key(session_id: uuid.UUID, token: str) -> str:
    return f"mh:wm:data:{session_id}:{token}"


def invalidate(session_id: uuid.UUID) -> None:
    """Mark the session's cached window stale, once the current transaction commits."""
    transaction.on_commit(lambda: cache.set(_token_key(session_id), uuid.uuid4().hex, TTL_SECONDS))


def forget(session_id: uuid.UUID) -> None:
    """Drop the session's cached window, its messages with it, once the current transaction
    commits: for a session erased for good, whose window must not outlive it in the cache."""

    def drop() -> None:
        token = cache.get(_token_key(session_id))
        keys = [_token_key(session_id)]
        if token is not None:
            keys.append(_data_key(session_id, token))
        cache.delete_many(keys)

    transaction.on_commit(drop)


T = TypeVar("T")


def read_through(session_id: uuid.UUID, load: Callable[[], list[T]]) -> list[T]:
    """The cached list for the session, loading it with `load()` on a miss."""
    token = cache.get(_token_key(session_id))
    if token is None:
        token = uuid.uuid4().hex
        if not cache.add(_token_key(session_id), token, TTL_SECONDS):
            token = cache.get(_token_key(session_id)) or token
    key = _data_key(session_id, token)
    cached = cache.get(key)
    if cached is not None:
        return cached
    value = load()
    cache.set(key, value, TTL_SECONDS)
    return value
