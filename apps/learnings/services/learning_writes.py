"""Seed 001's learnings: errors and corrections the agent keeps, and how they get there."""

import hashlib
import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import models, transaction
from django.db.models import F
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.core.errors import Conflict, InvalidInput
from apps.core.validation import clean_text
from apps.learnings.models import (
    ErrorRecord,
    Learning,
    LearningKind,
    LearningSource,
    LearningStatus,
    Outcome,
)
from apps.learnings.services.error_details import Origin, detail_keep
from apps.learnings.services.error_records import AGENT_ORIGIN, MAX_TOOL_CHARS, normalize_error

# A captured failure's learning is one line in get_context: each part of it is bounded.
MAX_ERROR_CHARS = 300
MAX_ARGUMENTS_CHARS = 300
MAX_REQUEST_CHARS = 300


def _choice(value: object, choices: type[models.TextChoices], *, loc: list[str | int]) -> str:
    if value not in choices.values:
        raise InvalidInput(f"must be one of {', '.join(choices.values)}", loc=loc)
    return str(value)


def _content(agent: Agent, value: object) -> str:
    return clean_text(
        value,
        label="content",
        loc=["body", "content"],
        required=True,
        max_bytes=agent.config.max_content_bytes,
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
    user: str = AGENT,
    origin_user: str = AGENT,
    terms: Sequence[str] = (),
) -> Learning:
    """A new learning: active, or pending when consolidation proposed it. A correction
    belongs to `user`; an error is the agent's whatever `user` says (tools fail for all),
    so it is stored de-identified (`origin_user`, the user it came from, and their `terms`
    masked too) and their raw text is their ErrorDetail."""
    kind = _choice(kind, LearningKind, loc=["body", "kind"])
    source = _choice(source, LearningSource, loc=["body", "source"])
    if status is None:
        status = LearningStatus.PENDING if source == LearningSource.CONSOLIDATION else "active"
    status = _choice(status, LearningStatus, loc=["body", "status"])
    content = _content(agent, content)
    error = kind == LearningKind.ERROR
    origin = Origin(origin_user if error else AGENT, terms, session_id, session_key)
    now = timezone.now()
    with transaction.atomic():
        learning = Learning.objects.create(
            agent=agent,
            user=AGENT if error else user,
            origin_user=origin.user,
            kind=kind,
            content=origin.scrubber.text(content) if error else content,
            source=source,
            status=status,
            session_id=session_id,
            session_key=origin.shared_session_key,
            error_record=error_record,
            created_at=now,
            updated_at=now,
        )
        detail_keep(agent=agent, origin=origin, learning=learning, content=content)
    return learning


def review_status(agent: Agent) -> str:
    """The status of a learning the lifecycle proposes (a correction found by consolidation,
    a captured failure): pending with the agent's fact_review on, else active."""
    return LearningStatus.PENDING if agent.config.fact_review else LearningStatus.ACTIVE


@dataclass(frozen=True)
class Failure:
    """A failing tool call and what surrounded it: the call's arguments and the user's
    request before it (the composition layer reads them from the session)."""

    tool_name: str
    error: str
    arguments: object = None  # as the call sent them: parsed JSON, or the raw text
    request: str = ""


def clip(text: str, limit: int) -> str:
    """`text` on one line (whitespace collapsed, NULs dropped), at most `limit` characters."""
    line = " ".join(text.replace("\x00", "").split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def failure_text(failure: Failure) -> str:
    """`<tool> failed with "<error>"; arguments: <JSON>; user request: "<text>"`, each part
    bounded, the last two only when known."""
    tool, error = clip(failure.tool_name, MAX_TOOL_CHARS), clip(failure.error, MAX_ERROR_CHARS)
    text = f'{tool} failed with "{error}"'
    if failure.arguments not in (None, {}, [], ""):
        shown = json.dumps(failure.arguments, ensure_ascii=False, sort_keys=True, default=str)
        text += f"; arguments: {clip(shown, MAX_ARGUMENTS_CHARS)}"
    if failure.request.strip():
        text += f'; user request: "{clip(failure.request, MAX_REQUEST_CHARS)}"'
    return text


def failure_key(*, tool_name: str, error: str) -> str:
    """The dedup key of a captured failure: its tool and normalised error (as error memory)."""
    raw = f"{tool_name}\n{normalize_error(error)}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def _shared_failure(failure: Failure, origin: Origin) -> Failure:
    """The failure as every reader sees it: its error de-identified; from a user's session
    without their arguments and request (free text no pattern reliably cleans), from the
    agent's with them de-identified."""
    scrub = origin.scrubber
    return Failure(
        tool_name=failure.tool_name,
        error=scrub.text(failure.error),
        arguments=None if origin.personal else scrub.value(failure.arguments),
        request="" if origin.personal else scrub.text(failure.request),
    )


def learning_capture(
    *,
    agent: Agent,
    failure: Failure,
    error_record: ErrorRecord | None = None,
    origin: Origin = AGENT_ORIGIN,
) -> tuple[Learning, bool]:
    """Seed 001's learnings/errors.md from a failing tool message: a new error learning,
    de-identified (pending with fact_review on), or, for the same tool and normalised
    de-identified error again, the existing one touched (seen_count + 1, last_seen_at);
    its text and status are kept. The origin user's raw text is their ErrorDetail."""
    shared = _shared_failure(failure, origin)
    key = failure_key(tool_name=shared.tool_name, error=shared.error)
    with transaction.atomic():
        lock_agent(agent)
        now = timezone.now()
        learning = Learning.objects.filter(agent=agent, dedup_key=key).first()
        created = learning is None
        if learning is not None:
            Learning.objects.filter(pk=learning.pk).update(
                seen_count=F("seen_count") + 1, last_seen_at=now, updated_at=now
            )
            learning.refresh_from_db(fields=["seen_count", "last_seen_at", "updated_at"])
        else:
            learning = Learning.objects.create(
                agent=agent,
                kind=LearningKind.ERROR,
                origin_user=origin.user,
                content=failure_text(shared),
                source=LearningSource.CAPTURE,
                status=review_status(agent),
                session_id=origin.session_id,
                session_key=origin.shared_session_key,
                error_record=error_record,
                dedup_key=key,
                seen_count=1,
                last_seen_at=now,
                created_at=now,
                updated_at=now,
            )
        detail_keep(agent=agent, origin=origin, learning=learning, content=failure_text(failure))
    return learning, created


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


def learnings_set_status(*, learnings: Iterable[Learning], status: str) -> int:
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
