from datetime import datetime
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import AfterValidator, Field

from apps.agents.users import user_problem
from apps.core.schemas import Input


class AgentOut(Schema):
    slug: str
    name: str
    team: str
    created_at: datetime
    settings: dict[str, Any]  # Any: a setting's value is JSON (AgentConfig's fields)
    overrides: dict[str, Any]  # Any: Agent.settings, a JSONField's value
    ceilings: dict[str, int | float] = Field(
        description="The team's ceiling of each limit that protects the service: a setting "
        "may be lowered, never raised past it."
    )


class SettingsPatch(Input):
    """Partial update of the agent's settings; a null value restores the default."""

    settings: dict[str, Any]  # Any: JSON values, checked by validate_overrides


class TeamDocumentOut(Schema):
    team: str
    name: str = Field(description="The document's name in the agent's system prompt.")
    content: str


def _user(value: str) -> str:
    if problem := user_problem(value):
        raise ValueError(problem)
    return value.strip()


# An end user of the agent (issue 26), as a call names them: "telegram:42".
UserRef = Annotated[
    str,
    AfterValidator(_user),
    Field(
        description="The end user the call acts for: reads see the agent's memory and this "
        'user\'s, writes belong to this user (unless scope is "agent"). Without it (and '
        "without a session or all_users) a read sees the agent's own memory alone."
    ),
]
AllUsers = Annotated[
    bool,
    Field(
        description="Read every end user's memory as well as the agent's. Without it, `user` "
        "or a session, a read sees the agent's own memory alone. Not with `user` or a "
        "session (422)."
    ),
]
ScopeName = Annotated[
    Literal["agent", "user"],
    Field(
        description='Who a write belongs to: "user" (the session\'s or `user`; the default '
        'when there is one) or "agent" (every user of the agent sees it).'
    ),
]


class Owned(Schema):
    """An output row's owner: the end user it belongs to, null for the agent's own."""

    user: str | None = Field(None, description="The end user it belongs to; null: the agent's.")

    @staticmethod
    def resolve_user(obj: object) -> str | None:
        value = obj.get("user") if isinstance(obj, dict) else getattr(obj, "user", "")
        return value or None


class ForUser(Input):
    """A body's `user`: act for one end user of the agent (reads see the agent's memory and
    theirs; writes are theirs)."""

    user: UserRef | None = None


class ReadFor(ForUser):
    """A read's audience: `user` (the agent's memory and theirs), or `all_users` (every
    user's); neither: the agent's own memory alone."""

    all_users: AllUsers = False


class ScopedWrite(ForUser):
    """A write's owner: `user`, or the session's user, unless `scope` is "agent"."""

    scope: ScopeName | None = None
