"""Whose memory a call reads or writes (issue 39: reads are safe by default): the one place
that decides it. A scoped key's limits are applied before parsing (apps/api/scopes.py), so
a user-bound key's call arrives here naming its user."""

from typing import Literal

from apps.agents.schemas import ForUser, ReadFor
from apps.agents.users import AGENT, EVERYONE, Audience, audience_of
from apps.conversations.models import Session
from apps.core.errors import InvalidInput

Where = Literal["body", "query"]


def read_audience(
    *,
    session: Session | None = None,
    user: str | None = None,
    all_users: bool = False,
    where: Where = "body",
) -> Audience:
    """A user's memory is read only in their session, by naming them (`user`), or by asking
    for every user (`all_users`); else the agent's own memory alone. `all_users` with `user`
    or with a session, or a `user` other than the session's, is a 422 (`where` the call sent
    them: its body or its query)."""
    if all_users:
        if user is not None:
            raise InvalidInput("all_users and user exclude each other", loc=[where, "all_users"])
        if session is not None:
            raise InvalidInput(
                "all_users cannot be used with a session: a session reads its own user's memory",
                loc=[where, "all_users"],
            )
        return EVERYONE
    if session is not None:
        if user is not None and user != session.user:
            raise InvalidInput("user differs from the session's user", loc=[where, "user"])
        return Audience(session.user)
    return Audience(AGENT if user is None else user)


def query_audience(query: ForUser) -> Audience:
    """Whose row a call on one row may reach, from its query: a read's (`ReadFor`: its
    `all_users` too) or a write's (`ForUser`: the agent's own, or `user`'s)."""
    every = isinstance(query, ReadFor) and query.all_users
    return read_audience(user=query.user, all_users=every, where="query")


def session_audience(session: Session | None, user: str | None) -> Audience:
    """Whose memory a write belongs to: the session's user, else `user`, else the agent's
    own; a 422 when `user` differs from the session's."""
    return audience_of(
        session_user=session.user if session is not None else None,
        user=user,
        has_session=session is not None,
    )
