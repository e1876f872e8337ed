"""The Redis cache unreachable: every cache call degrades to its no-cache answer instead of
raising, and the cache works again once Redis is back (apps/core/cache.py)."""

from apps.core.cache import TolerantRedisCache
from tests.support.services import RedisServer


def test_a_redis_cache_that_is_down_misses_and_recovers(broker: RedisServer):
    cache = TolerantRedisCache(broker.url(1), {})
    assert cache.add("k", "v") is True
    assert cache.get("k") == "v"

    broker.stop()
    assert cache.get("k", "default") == "default"
    assert cache.add("other", 1) is False
    assert cache.set("k", "w") is None
    assert cache.incr("counter", 3) == 3
    assert cache.get_many(["k", "other"]) == {}
    assert cache.has_key("k") is False
    assert cache.touch("k") is False
    assert cache.delete("k") is False
    assert cache.set_many({"a": 1, "b": 2}) == ["a", "b"]
    assert cache.delete_many(["a"]) is None

    broker.start()  # empty: this Redis keeps nothing across a restart
    assert cache.get("k") is None
    assert cache.add("k", "again") is True
    assert cache.get("k") == "again"
