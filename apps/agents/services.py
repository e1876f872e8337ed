"""The one write path for teams, agents and API keys."""

import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from apps.agents.config import FIELD_NAMES, validate_ceilings, validate_overrides
from apps.agents.models import Agent, ApiKey, AuditEvent, MemberRole, Membership, Team
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


def agent_update_settings(*, agent: Agent, changes: dict[str, Any]) -> Agent:
    """Merge validated overrides into the agent's settings; a None value restores the default.
    InvalidInput names the first unknown key, bad value or value over the team's ceiling."""
    for key in changes:
        if key not in FIELD_NAMES:
            raise InvalidInput(f"unknown setting '{key}'", loc=["body", "settings", key])
    with transaction.atomic():
        agent = (
            Agent.objects.select_for_update(of=("self",)).select_related("team").get(pk=agent.pk)
        )
        values = validate_overrides(
            {k: v for k, v in changes.items() if v is not None}, agent.team.ceilings
        )
        merged = {**agent.settings, **values}
        for key in (k for k, v in changes.items() if v is None):
            merged.pop(key, None)
        agent.settings = merged
        agent.save(update_fields=["settings", "updated_at"])
    return agent


def team_set_ceilings(*, team: Team, ceilings: dict[str, Any]) -> Team:
    """Replace the team's ceilings (setting -> ceiling, at most the global maximum); they
    bound its agents' effective settings at once. InvalidInput names the first bad key."""
    team.ceilings = validate_ceilings(ceilings)
    team.save(update_fields=["ceilings"])
    return team


def membership_set(*, team: Team, user: User, role: str) -> Membership:
    """Make `user` a member of `team` with `role` (viewer or editor); idempotent."""
    if role not in MemberRole.values:
        raise InvalidInput(f"unknown role '{role}'", loc=["role"])
    membership, _ = Membership.objects.update_or_create(
        team=team, user=user, defaults={"role": role}
    )
    return membership


@dataclass(frozen=True)
class CreatedUser:
    user: User
    password: str
    generated: bool  # True: the password was drawn here and must be shown once


def user_create(
    *, username: str, team_name: str, role: str, staff: bool = False, password: str = ""
) -> CreatedUser:
    """Create a user who reviews `team_name` (created if needed) with `role`; a password is
    generated when none is given. Conflict if the username is taken."""
    User = get_user_model()
    if not username or len(username) > 150:
        raise InvalidInput("username must be 1 to 150 characters", loc=["username"])
    generated = not password
    password = password or secrets.token_urlsafe(12)
    with transaction.atomic():
        if User.objects.filter(username=username).exists():
            raise Conflict(f"user '{username}' already exists", loc=["username"])
        user = User.objects.create_user(username=username, password=password, is_staff=staff)
        membership_set(team=team_get_or_create(name=team_name), user=user, role=role)
    return CreatedUser(user=user, password=password, generated=generated)


class _AuditEncoder(DjangoJSONEncoder):
    """Django's encoder, with full microseconds and str() for anything else (a related row)."""

    def default(self, o: Any) -> Any:
        if isinstance(o, datetime):
            return o.isoformat()
        try:
            return super().default(o)
        except TypeError:
            return str(o)


def json_safe(values: dict[str, Any]) -> dict[str, Any]:
    """`values` as JSON would store them (ISO times, str() for anything else)."""
    return json.loads(json.dumps(values, cls=_AuditEncoder))


def snapshot(obj: Any, fields: list[str]) -> dict[str, Any]:
    """The named fields of `obj` as JSON-safe values, for an audit event's before/after."""
    return json_safe({name: getattr(obj, name) for name in fields})


def audit_record(
    *,
    user: User | AnonymousUser,
    agent: Agent | None,
    source: str,
    action: str,
    target: Any,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    username: str = "",
) -> AuditEvent:
    """Record a change made to `target` (`source`: "review" or "admin"; "api" or "cli" too
    for an erasure), with JSON-safe snapshots before and after; `username` names who it was
    when no person did it (an API key, a command). Joins the caller's transaction."""
    return AuditEvent.objects.create(
        agent=agent,
        user=user if isinstance(user, User) and user.pk else None,
        username=getattr(user, "username", "") or username,
        source=source,
        action=action,
        object_type=target._meta.model_name if hasattr(target, "_meta") else str(target),
        object_id=str(getattr(target, "pk", "") or ""),
        before=before,
        after=after,
    )
