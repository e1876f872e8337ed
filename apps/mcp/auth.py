"""Who an MCP connection acts for: the agent behind an API key (HTTP, `--key`) or a slug
(`--agent`), resolved exactly as the JSON API's bearer auth does."""

from django.conf import settings

from apps.agents.models import Agent, ApiKey
from apps.agents.selectors import api_key_lookup
from apps.agents.services import api_key_touch


def key_for(raw: str) -> ApiKey | None:
    """The live key with its agent and scope (its use recorded); None otherwise."""
    api_key = api_key_lookup(raw=raw)
    if api_key is None:
        return None
    api_key_touch(api_key=api_key, every_seconds=settings.MEMORYHUB_KEY_TOUCH_SECONDS)
    return api_key


def agent_for_slug(slug: str) -> Agent | None:
    """The agent with this slug, or None."""
    return Agent.objects.filter(slug=slug).first()


def bearer_token(header: str) -> str | None:
    """The token of an `Authorization: Bearer <token>` header value, or None."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
