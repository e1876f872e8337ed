"""Erasing one end user's learnings (issues 26 and 39): their corrections, and their raw
texts of failures (ErrorDetail). Error memory and error learnings belong to the agent (tools
fail for everyone) and stay, de-identified: the ones that came from the user lose the link
to their sessions and are scrubbed again with the user's terms as they are now (a fact
written after the failure). A lesson whose only source was this user stays too: it holds
nothing of them once scrubbed, and the other users keep the lesson."""

import uuid
from collections import Counter
from collections.abc import Sequence

from django.db import transaction
from django.db.models import Q

from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.core.scrub import Scrubber
from apps.learnings.models import ErrorDetail, ErrorRecord, Learning, LearningKind
from apps.learnings.services.error_records import error_key
from apps.search.embedding_queue import schedule_embedding

RECORD_TEXT = ("error", "strategy", "resolution", "arguments", "context")


def _came_from(agent: Agent, user: str, sessions: Sequence[uuid.UUID]) -> tuple[Q, Q]:
    """The error records and error learnings that came from `user`: first recorded from
    them, made in one of their sessions, or holding a raw text of theirs."""
    details = ErrorDetail.objects.filter(agent=agent, user=user)
    records = Q(origin_user=user) | Q(session_id__in=sessions)
    records |= Q(pk__in=details.filter(record__isnull=False).values("record_id"))
    learnings = Q(origin_user=user) | Q(session_id__in=sessions)
    learnings |= Q(pk__in=details.filter(learning__isnull=False).values("learning_id"))
    return Q(agent=agent) & records, Q(agent=agent, kind=LearningKind.ERROR) & learnings


def _linked(records: list[ErrorRecord], lessons: list[Learning]) -> int:
    """How many of these rows name a session (their link to it is about to be cleared)."""
    found = [r.session_id is not None for r in records]
    found += [row.session_id is not None or bool(row.session_key) for row in lessons]
    return sum(found)


def _rescrub_records(rows: list[ErrorRecord], scrub: Scrubber) -> int:
    """Scrub each record again; one whose text changes is embedded again."""
    changed = 0
    for row in rows:
        before = [getattr(row, name) for name in RECORD_TEXT]
        for name in RECORD_TEXT:
            setattr(row, name, scrub.value(getattr(row, name)))
        fields = ["session", "origin_user"]
        if [getattr(row, name) for name in RECORD_TEXT] != before:
            row.normalized, row.embedding = error_key(row.error), None
            row.embedding_model, row.embedding_attempts = "", 0
            fields += [*RECORD_TEXT, "normalized", "embedding", "embedding_model"]
            fields.append("embedding_attempts")
            changed += 1
        row.session, row.origin_user = None, AGENT
        row.save(update_fields=fields)
    return changed


def _rescrub_learnings(rows: list[Learning], scrub: Scrubber) -> None:
    for row in rows:
        row.content = scrub.text(row.content)
        row.session, row.session_key, row.origin_user = None, "", AGENT
        row.save(update_fields=["content", "session", "session_key", "origin_user"])


@transaction.atomic
def learnings_erase_user(
    *,
    agent: Agent,
    user: str,
    sessions: Sequence[uuid.UUID] = (),
    terms: Sequence[str] = (),
) -> dict[str, int]:
    """Delete every learning of one end user of the agent and their raw texts of failures;
    the error records and error learnings that came from them (or their `sessions`) are
    unlinked and scrubbed again with `terms`. The rows deleted per model label, and
    "provenance_cleared": how many of those kept lost a session link. The caller holds the
    agent's lock."""
    if user == AGENT:
        raise ValueError("the agent's own learnings are not a user's")
    records_q, learnings_q = _came_from(agent, user, list(sessions))
    records = list(ErrorRecord.objects.filter(records_q).order_by("pk"))
    lessons = list(Learning.objects.filter(learnings_q).exclude(user=user).order_by("pk"))
    deleted: Counter[str] = Counter()
    deleted["provenance_cleared"] = _linked(records, lessons)
    deleted.update(ErrorDetail.objects.filter(agent=agent, user=user).delete()[1])
    deleted.update(Learning.objects.filter(agent=agent, user=user).delete()[1])
    scrub = Scrubber(user=user, terms=tuple(terms))
    if _rescrub_records(records, scrub):
        schedule_embedding(corpus="errors", agent_id=agent.pk)
    _rescrub_learnings(lessons, scrub)
    # The agent's other learnings written in their sessions (scope "agent") stay, unlinked.
    others = Learning.objects.filter(agent=agent, session_id__in=list(sessions)).exclude(
        pk__in=[row.pk for row in lessons]
    )
    deleted["provenance_cleared"] += others.update(session=None, session_key="")
    return dict(deleted)
