"""Seed 001's learnings: errors and corrections the agent keeps, and how they get there."""

import uuid

from django.db import transaction
from django.utils import timezone

from apps.agents.models import Agent
from apps.core.errors import Conflict, InvalidInput
from apps.learnings.models import (
    ErrorRecord,
    Learning,
    LearningKind,
    LearningSource,
    LearningStatus,
    Outcome,
)
from apps.learnings.services.errors import clean_text


def _choice(value: object, choices, *, loc: list) -> str:
    if value not in choices.values:
        raise InvalidInput(f"must be one of {', '.join(choices.values)}", loc=loc)
    return str(value)


def _content(agent: Agent, value: object) -> str:
    return clean_text(
        value, loc=["body", "content"], required=True, limit=agent.config.max_content_bytes
    )


def learning_create(
    *,
    agent: Agent,
    kind: str,
    content: str,
    source: str = LearningSource.AGENT,
    status: str | None = None,
    session_id: uuid.UUID | None = None,
    session_key: str = "",
    error_record: ErrorRecord | None = None,
) -> Learning:
    """A new learning: active, or pending when consolidation proposed it."""
    kind = _choice(kind, LearningKind, loc=["body", "kind"])
    source = _choice(source, LearningSource, loc=["body", "source"])
    if status is None:
        status = LearningStatus.PENDING if source == LearningSource.CONSOLIDATION else "active"
    status = _choice(status, LearningStatus, loc=["body", "status"])
    now = timezone.now()
    return Learning.objects.create(
        agent=agent,
        kind=kind,
        content=_content(agent, content),
        source=source,
        status=status,
        session_id=session_id,
        session_key=session_key,
        error_record=error_record,
        created_at=now,
        updated_at=now,
    )


def learning_update(
    *,
    learning: Learning,
    content: str | None = None,
    kind: str | None = None,
    status: str | None = None,
) -> Learning:
    fields = ["updated_at"]
    if content is not None:
        learning.content = _content(learning.agent, content)
        fields.append("content")
    if kind is not None:
        learning.kind = _choice(kind, LearningKind, loc=["body", "kind"])
        fields.append("kind")
    if status is not None:
        learning.status = _choice(status, LearningStatus, loc=["body", "status"])
        fields.append("status")
    learning.updated_at = timezone.now()
    learning.save(update_fields=fields)
    return learning


def learnings_set_status(*, learnings, status: str) -> int:
    """Approve (active) or archive many at once (the admin's actions)."""
    status = _choice(status, LearningStatus, loc=["status"])
    return Learning.objects.filter(pk__in=[item.pk for item in learnings]).update(
        status=status, updated_at=timezone.now()
    )


def learning_delete(*, learning: Learning) -> None:
    Learning.objects.filter(pk=learning.pk).delete()


def promoted_text(record: ErrorRecord) -> str:
    first_line = record.error.strip().splitlines()[0][:300] if record.error.strip() else ""
    rule = (
        f"apply: {record.resolution}"
        if record.outcome == Outcome.RESOLVED
        else f"avoid: {record.strategy}"
    )
    return f'{record.tool_name} failed with "{first_line}"; {rule}'


@transaction.atomic
def error_record_promote(*, record: ErrorRecord, source: str = LearningSource.AGENT) -> Learning:
    """Seed 001: a resolved or failed error record becomes an active error learning."""
    if record.outcome not in (Outcome.RESOLVED, Outcome.FAILED):
        raise Conflict(
            f"only a resolved or failed error record can be promoted; this one is {record.outcome}"
        )
    return learning_create(
        agent=record.agent,
        kind=LearningKind.ERROR,
        content=promoted_text(record),
        source=source,
        status=LearningStatus.ACTIVE,
        session_id=record.session_id,
        error_record=record,
    )
