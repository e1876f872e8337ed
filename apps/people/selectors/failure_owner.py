"""Whose a tool failure is (issue 39), and what of them the scrubber masks in it."""

from apps.agents.models import Agent
from apps.conversations.models import Session
from apps.core.scrub import person_terms
from apps.facts.selectors import facts_values
from apps.learnings.services import Origin


def failure_origin(*, agent: Agent, user: str, session: Session | None = None) -> Origin:
    """Whose failure a call records (issue 39): the session's user, or `user` ("" the
    agent's), with the terms the scrubber masks for them: their identifier and every value
    their facts hold."""
    terms = person_terms(user=user, values=facts_values(agent=agent, user=user)) if user else []
    return Origin(
        user=user,
        terms=terms,
        session_id=session.pk if session else None,
        session_key=session.key if session else "",
    )
