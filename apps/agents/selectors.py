"""Reads for agents and keys."""

import hmac

from django.db.models import QuerySet

from apps.agents.models import Agent, ApiKey
from apps.agents.services import KEY_PREFIX, hash_key


def api_key_lookup(*, raw: str) -> ApiKey | None:
    """The active key matching `raw`, with its agent, or None (malformed, unknown, revoked)."""
    if not raw.startswith(KEY_PREFIX):
        return None
    prefix, sep, secret = raw[len(KEY_PREFIX) :].partition("_")
    if not sep or not prefix or not secret or len(raw) > 200:
        return None
    api_key = ApiKey.objects.active().select_related("agent").filter(prefix=prefix).first()
    if api_key is None or not hmac.compare_digest(api_key.hashed_key, hash_key(raw)):
        return None
    return api_key


def agents_for_user(*, user) -> QuerySet[Agent]:
    """Agents whose team the user belongs to; staff see all."""
    qs = Agent.objects.select_related("team")
    if user.is_superuser:
        return qs
    return qs.filter(team__members=user)
