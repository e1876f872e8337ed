"""Issuing, revoking and touching an agent's API keys."""

import hashlib
import secrets
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.agents.models import Agent, ApiKey
from apps.agents.users import AGENT, clean_user
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


def api_key_issue(
    *, agent: Agent, name: str = "", user: str | None = None, read_only: bool = False
) -> IssuedKey:
    """Issue a new key for the agent, bound to one end user (`user`) and/or read-only
    (issue 39); the raw key is returned once. InvalidInput for a `user` that is no user, or a
    `name` over ApiKey.name's length."""
    bound = clean_user(user, loc=["user"]) or AGENT
    limit = ApiKey._meta.get_field("name").max_length or 0
    if len(name) > limit:
        raise InvalidInput(f"name must be at most {limit} characters", loc=["name"])
    for _ in range(5):
        prefix = secrets.token_hex(4)
        raw = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
        try:
            with transaction.atomic():
                api_key = ApiKey.objects.create(
                    agent=agent,
                    name=name,
                    prefix=prefix,
                    hashed_key=hash_key(raw),
                    user=bound,
                    read_only=read_only,
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
