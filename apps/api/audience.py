"""Whose memory an endpoint reads and writes (issue 26): a session's user, else the `user`
the call names, else the whole agent."""

from apps.agents.users import Audience, Scope, audience_of
from apps.conversations.models import Session


def audience_for(session: Session | None, user: str | None) -> Audience:
    """The call's audience; a 422 when `user` differs from the session's."""
    return audience_of(
        session_user=session.user if session is not None else None,
        user=user,
        has_session=session is not None,
    )


def owner_for(session: Session | None, user: str | None, scope: Scope | None) -> str:
    """Who the call's write belongs to ("" the agent)."""
    return audience_for(session, user).owner(scope)
