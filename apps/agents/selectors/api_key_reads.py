"""Reads of API keys: the key a request presents, and an agent's keys."""

import hmac

from apps.agents.models import Agent, ApiKey
from apps.agents.services import KEY_PREFIX, hash_key
from apps.core.errors import NotFound


def api_key_lookup(*, raw: str) -> ApiKey | None:
    """The active key matching `raw`, with its agent, or None (malformed, unknown, revoked)."""
    if not raw.startswith(KEY_PREFIX):
        return None
    prefix, sep, secret = raw[len(KEY_PREFIX) :].partition("_")
    if not sep or not prefix or not secret or len(raw) > 200:
        return None
    api_key = ApiKey.objects.active().select_related("agent__team").filter(prefix=prefix).first()
    if api_key is None or not hmac.compare_digest(api_key.hashed_key, hash_key(raw)):
        return None
    return api_key


def api_keys(*, agent: Agent) -> list[ApiKey]:
    """The agent's keys, revoked ones too, newest first."""
    return list(ApiKey.objects.filter(agent=agent).order_by("-created_at", "-id"))


def api_key_get(*, agent: Agent, key_id: int) -> ApiKey:
    """The agent's key `key_id`; NotFound for another agent's or none."""
    api_key = ApiKey.objects.filter(agent=agent, pk=key_id).first()
    if api_key is None:
        raise NotFound("no such API key", loc=["path", "key_id"])
    return api_key
