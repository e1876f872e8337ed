"""Counters in Django's cache for rate limits and lockouts, shared by every worker process
(a file cache on the embedded default, Redis in production), and the client's address.

A window opens at the first counted event and lasts `seconds`: at most `limit` events are
allowed in it, and the caller is told how long until it closes (Retry-After).
"""

import ipaddress
import logging
import math
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

logger = logging.getLogger(__name__)

_PREFIX = "memoryhub:throttle:"


class RateLimited(Exception):
    """Over a limit; `retry_after` is whole seconds until the window closes (at least 1)."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


@dataclass(frozen=True)
class Window:
    """`limit` events per `seconds`, counted per key under `scope` (limit 0: no limit).

    A cache that is down limits nothing (a warning is logged): every request failing
    because Redis is away would be worse than a minute without a limit.
    """

    scope: str
    limit: int
    seconds: int

    def _start_key(self, key: str) -> str:
        return f"{_PREFIX}{self.scope}:{key}:start"

    def _count_key(self, key: str, start: str) -> str:
        # The count lives under a key naming its window's start: when the window closes, a
        # new start means a fresh count even if the old count's entry outlives it.
        return f"{_PREFIX}{self.scope}:{key}:{start}"

    def _closed(self, start: str, now: float) -> bool:
        return now >= float(start) + self.seconds

    def _remaining(self, start: str, now: float) -> int:
        return max(1, math.ceil(float(start) + self.seconds - now))

    def blocked(self, key: str) -> int:
        """Seconds to wait when `key` has used up its window (0: it may go on)."""
        if self.limit <= 0:
            return 0
        now = time.time()
        try:
            start = cache.get(self._start_key(key))
            if start is None or self._closed(start, now):
                return 0
            used = int(cache.get(self._count_key(key, start)) or 0)
        except Exception:
            logger.warning("throttle %s: cache unavailable", self.scope, exc_info=True)
            return 0
        return self._remaining(start, now) if used >= self.limit else 0

    def hit(self, key: str) -> int:
        """Count one event; the seconds to wait when it is over the limit (0: allowed)."""
        if self.limit <= 0:
            return 0
        now = time.time()
        try:
            cache.add(self._start_key(key), f"{now:.6f}", timeout=self.seconds)  # first wins
            start = cache.get(self._start_key(key)) or f"{now:.6f}"  # expired in between
            if self._closed(start, now):  # the clock says so before the backend's expiry
                start = f"{now:.6f}"
                cache.set(self._start_key(key), start, timeout=self.seconds)
            count_key = self._count_key(key, start)
            cache.add(count_key, 0, timeout=self.seconds + 5)
            try:
                used = cache.incr(count_key)  # atomic on Redis; the file cache may lose a race
                # The file cache's incr rewrites the entry with the default timeout (300 s),
                # which would end a longer window early.
                cache.touch(count_key, timeout=self._remaining(start, now) + 5)
            except ValueError:  # the count expired between add and incr
                cache.set(count_key, 1, timeout=self.seconds + 5)
                used = 1
        except Exception:
            logger.warning("throttle %s: cache unavailable", self.scope, exc_info=True)
            return 0
        return self._remaining(start, now) if used > self.limit else 0

    def reset(self, key: str) -> None:
        """Forget `key`'s window (a successful login clears its failures)."""
        cache.delete(self._start_key(key))


def client_address(request: HttpRequest) -> str:
    """Who is asking: REMOTE_ADDR, or, behind MEMORYHUB_TRUSTED_PROXIES proxies, the address
    the outermost trusted proxy put in X-Forwarded-For. Entries left of it are the client's
    own and could be forged, so they are never used; with 0 proxies the header is ignored."""
    remote = request.META.get("REMOTE_ADDR", "") or "unknown"
    proxies = settings.MEMORYHUB_TRUSTED_PROXIES
    if proxies <= 0:
        return remote
    header = request.META.get("HTTP_X_FORWARDED_FOR", "")
    forwarded = [part.strip() for part in header.split(",") if part.strip()]
    if not forwarded:
        return remote
    # Each proxy appends the peer it saw: the n-th entry from the right was written by the
    # outermost of our n proxies. Fewer entries: the client met fewer proxies, none forged.
    candidate = forwarded[-proxies] if len(forwarded) >= proxies else forwarded[0]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote  # not an address: a misconfigured proxy; the peer is still real
