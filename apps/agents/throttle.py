"""API-key authentication with its rate limits: failed attempts per client address (a
guessed key is refused like any other once the address is over the limit, so guessing
cannot go on), and an optional request rate per key. Both live in the shared cache."""

from django.conf import settings

from apps.agents.models import ApiKey
from apps.agents.selectors import api_key_lookup
from apps.agents.services import api_key_touch
from apps.core.throttle import RateLimited, Window


def _failures() -> Window:
    return Window("auth-failures", settings.MEMORYHUB_AUTH_FAILURES_PER_MINUTE, 60)


def _key_rate() -> Window:
    return Window("key-rate", settings.MEMORYHUB_KEY_RATE_PER_MINUTE, 60)


def _too_many_failures(wait: int) -> RateLimited:
    return RateLimited(
        f"too many failed API-key attempts from this address; retry in {wait} s",
        retry_after=wait,
    )


def api_key_authenticate(*, raw: str, address: str) -> ApiKey | None:
    """The live key `raw` with its agent (its use recorded; `.scope` says what it may do),
    or None for a wrong key, counted against `address`. Raises RateLimited when `address` is over
    MEMORYHUB_AUTH_FAILURES_PER_MINUTE or the key over MEMORYHUB_KEY_RATE_PER_MINUTE."""
    failures = _failures()
    if wait := failures.blocked(address):
        raise _too_many_failures(wait)
    api_key = api_key_lookup(raw=raw)
    if api_key is None:
        if wait := failures.hit(address):
            raise _too_many_failures(wait)
        return None
    rate = _key_rate()
    if wait := rate.hit(str(api_key.pk)):
        raise RateLimited(
            f"this API key is over its {rate.limit} requests per minute; retry in {wait} s",
            retry_after=wait,
        )
    api_key_touch(api_key=api_key, every_seconds=settings.MEMORYHUB_KEY_TOUCH_SECONDS)
    return api_key
