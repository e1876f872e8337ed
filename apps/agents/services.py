"""The one write path for teams, agents and API keys."""

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from apps.agents.config import FIELD_NAMES, validate_overrides
from apps.agents.models import Agent, ApiKey, Team
from apps.core.errors import Conflict, InvalidInput

KEY_PREFIX = "mh_"


@dataclass(frozen=True)
class IssuedKey:
    """A key as issued: `raw` is shown once and never stored."""

    api_key: ApiKey
    raw: str


def hash_key(raw: str) -> str:
    # Keys carry 256 bits of randomness, so a fast hash is enough (no key stretching needed).
    return hashlib.sha256(raw.encode()).hexdigest()


def team_get_or_create(*, name: str) -> Team:
    team, _ = Team.objects.get_or_create(name=name)
    return team


@transaction.atomic
def agent_create(*, slug: str, team_name: str = "default", name: str = "") -> Agent:
    """Create an agent in a team (created if needed); raise Conflict if the slug is taken."""
    if not slug or slugify(slug) != slug:
        raise InvalidInput("slug must be lower-case letters, digits, '-' or '_'", loc=["slug"])
    team = team_get_or_create(name=team_name)
    if Agent.objects.filter(slug=slug).exists():
        raise Conflict(f"agent '{slug}' already exists", loc=["slug"])
    return Agent.objects.create(slug=slug, team=team, name=name or slug)


def api_key_issue(*, agent: Agent, name: str = "") -> IssuedKey:
    """Issue a new key for the agent; the raw key is returned once."""
    for _ in range(5):
        prefix = secrets.token_hex(4)
        raw = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
        try:
            with transaction.atomic():
                api_key = ApiKey.objects.create(
                    agent=agent, name=name, prefix=prefix, hashed_key=hash_key(raw)
                )
        except IntegrityError:  # prefix collision: 1 in 4 billion, draw again
            continue
        return IssuedKey(api_key=api_key, raw=raw)
    raise Conflict("could not allocate a unique key prefix")


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    """Revoke a key; revoking twice keeps the first revocation time."""
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


def api_key_touch(*, api_key: ApiKey, every_seconds: int) -> None:
    """Record use, at most once per `every_seconds`, so reads don't all become writes."""
    now = timezone.now()
    last = api_key.last_used_at
    if last is None or (now - last).total_seconds() >= every_seconds:
        ApiKey.objects.filter(pk=api_key.pk).update(last_used_at=now)
        api_key.last_used_at = now


def agent_update_settings(*, agent: Agent, changes: dict[str, Any]) -> Agent:
    """Merge validated overrides into the agent's settings; a None value restores the default."""
    for key in changes:
        if key not in FIELD_NAMES:
            raise InvalidInput(f"unknown setting '{key}'", loc=["body", "settings", key])
    values = validate_overrides({k: v for k, v in changes.items() if v is not None})
    with transaction.atomic():
        agent = Agent.objects.select_for_update().get(pk=agent.pk)
        merged = {**agent.settings, **values}
        for key in (k for k, v in changes.items() if v is None):
            merged.pop(key, None)
        agent.settings = merged
        agent.save(update_fields=["settings", "updated_at"])
    return agent
