"""End users of an agent (issue 26): one agent serving many people, each person's memory kept
to their own sessions.

A user is a string the agent chooses ("telegram:42"). Memory rows carry `user`: "" for the
agent's own memory, which every session reads, or the user it belongs to, which only that
user's sessions, the calls that name that user and the calls that ask for every user
(`all_users`, issue 39) read. Error memory stays agent-wide: tools fail for everyone.
"""

from dataclasses import dataclass
from typing import Literal

from django.db import models
from django.db.models import Q

from apps.core.errors import InvalidInput
from apps.core.validation import has_control

AGENT = ""  # the owner of the agent's own memory
USER_MAX = 200  # a session key's length: "telegram:42", an email, a UUID

Scope = Literal["agent", "user"]


def user_field() -> models.CharField:
    """The `user` column of a row that belongs to the agent ("") or to one of its users."""
    return models.CharField(max_length=USER_MAX, blank=True, default=AGENT)


def user_problem(value: str) -> str:
    """Why `value` is no user name ("" when it is one, once stripped)."""
    text = value.strip()
    if not text or len(text) > USER_MAX or has_control(text):
        return f"user must be 1-{USER_MAX} printable characters"
    return ""


def clean_user(value: str | None, *, loc: list[str | int]) -> str | None:
    """`value` stripped, or None when not given; InvalidInput (422) when it is no user."""
    if value is None:
        return None
    if problem := user_problem(value):
        raise InvalidInput(problem, loc=loc)
    return value.strip()


@dataclass(frozen=True)
class Audience:
    """Whose memory a read sees: the agent's own alone (`user` ""), the agent's and one
    user's (`user` set), or every row of the agent (`user` None: an explicit `all_users`)."""

    user: str | None = None

    def q(self, field: str = "user") -> Q:
        """The rows of this audience, `field` naming the row's user column."""
        if self.user is None:
            return Q()
        return Q(**{f"{field}__in": [AGENT, self.user]})

    def sees(self, owner: str) -> bool:
        """Whether a row owned by `owner` is visible to this audience."""
        return self.user is None or owner in (AGENT, self.user)

    def owner(self, scope: Scope | None = None) -> str:
        """Who a write in this audience belongs to: the user, unless `scope` is "agent" or
        there is no user (a 422 for scope "user" then)."""
        if scope == "agent" or not self.user:
            if scope == "user":
                raise InvalidInput(
                    'scope "user" needs a session with a user, or `user`', loc=["body", "scope"]
                )
            return AGENT
        return self.user


# Every user's memory: a read that asked for it (`all_users`), or a person's review page.
EVERYONE = Audience()
# The agent's own memory alone, no user's: what an agent-wide read sees by default.
AGENT_ONLY = Audience(AGENT)


def audience_of(
    *, session_user: str | None = None, user: str | None = None, has_session: bool = False
) -> Audience:
    """The audience of a call: a session's user when it names a session (a `user` that
    differs is a 422; a session without a user is the agent's own), else the `user` it
    passes, else the agent's own memory alone (issue 39: never every user by default)."""
    if has_session:
        if user is not None and user != (session_user or AGENT):
            raise InvalidInput("user differs from the session's user", loc=["body", "user"])
        return Audience(session_user or AGENT)
    return Audience(AGENT if user is None else user)
