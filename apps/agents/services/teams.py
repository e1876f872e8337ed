"""Teams, agents, their settings and ceilings, and the people who review them."""

import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.utils.text import slugify

from apps.agents.config import FIELD_NAMES, validate_ceilings, validate_overrides
from apps.agents.models import Agent, MemberRole, Membership, Team
from apps.core.errors import Conflict, InvalidInput


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


# Any: settings arrive as JSON (a request body's, stored in a JSONField) and are checked here.
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


# Any: as agent_update_settings's changes.
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
