"""A Redis cache that a Redis outage degrades instead of failing the request.

The cache holds nothing that must survive (working-memory windows, trigger debounces,
throttle counters, cached health probes), and in production it usually shares its Redis
with the broker. Without this, Redis down made every append answer 500 after its commit.
While Redis cannot be reached, reads miss, writes are dropped, `add` reports "not added",
`incr` counts from zero (throttles fail open): each caller's no-cache path.
"""

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

T = TypeVar("T")

WARN_EVERY_SECONDS = 10.0  # one warning per interval, not one per cache call


class TolerantRedisCache(RedisCache):
    """django.core.cache.backends.redis.RedisCache whose connection errors become misses."""

    _warned_at = 0.0

    def _or(self, fallback: T, call: Callable[..., T], *args: object) -> T:
        try:
            return call(*args)
        except (RedisConnectionError, RedisTimeoutError) as exc:
            now = time.monotonic()
            if now - TolerantRedisCache._warned_at >= WARN_EVERY_SECONDS:
                TolerantRedisCache._warned_at = now
                logger.warning("cache unavailable, serving without it: %s", exc)
            return fallback

    # Keys and values are Any in BaseCache's own signatures (django-stubs); these match them.
    def add(
        self,
        key: Any,  # Any: BaseCache's key type
        value: Any,  # Any: BaseCache's value type
        timeout: float | None = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> bool:
        return self._or(False, super().add, key, value, timeout, version)

    def get(
        self,
        key: Any,  # Any: BaseCache's key type
        default: Any | None = None,  # Any: BaseCache's value type
        version: int | None = None,
    ) -> Any:  # Any: BaseCache's value type
        return self._or(default, super().get, key, default, version)

    def set(
        self,
        key: Any,  # Any: BaseCache's key type
        value: Any,  # Any: BaseCache's value type
        timeout: float | None = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> None:
        return self._or(None, super().set, key, value, timeout, version)

    def touch(
        self,
        key: Any,  # Any: BaseCache's key type
        timeout: float | None = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> bool:
        return self._or(False, super().touch, key, timeout, version)

    def delete(self, key: Any, version: int | None = None) -> bool:  # Any: BaseCache's key type
        return self._or(False, super().delete, key, version)

    def get_many(
        self,
        keys: Iterable[Any],  # Any: BaseCache's key type
        version: int | None = None,
    ) -> dict[Any, Any]:  # Any: BaseCache's key and value types
        return self._or({}, super().get_many, keys, version)

    def has_key(self, key: Any, version: int | None = None) -> bool:  # Any: BaseCache's key type
        return self._or(False, super().has_key, key, version)

    def incr(
        self,
        key: Any,  # Any: BaseCache's key type
        delta: int = 1,
        version: int | None = None,
    ) -> int:
        return self._or(delta, super().incr, key, delta, version)

    def set_many(
        self,
        data: dict[Any, Any],  # Any: BaseCache's key and value types
        timeout: float | None = DEFAULT_TIMEOUT,
        version: int | None = None,
    ) -> list[Any]:  # Any: BaseCache's key type (the keys not set)
        return self._or(list(data), super().set_many, data, timeout, version)

    def delete_many(
        self,
        keys: Iterable[Any],  # Any: BaseCache's key type
        version: int | None = None,
    ) -> None:
        return self._or(None, super().delete_many, keys, version)

    def clear(self) -> None:
        self._or(None, super().clear)
