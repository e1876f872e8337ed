"""The run log: one Run per LLM call or fallback, and the idempotency keys that make a
retried task write nothing twice."""

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from apps.agents.models import Agent
from apps.conversations.models import Session
from apps.lifecycle.models import APPLIED, Run
from apps.lifecycle.services.llm import Answer

MAX_OUTPUT_CHARS = 64 * 1024


@dataclass(frozen=True)
class MessageRange:
    """The messages a run processed: first and last (id, time), and how many."""

    first_id: uuid.UUID
    first_at: datetime
    last_id: uuid.UUID
    last_at: datetime
    count: int

    @classmethod
    def of(cls, messages: Sequence) -> "MessageRange | None":
        if not messages:
            return None
        first, last = messages[0], messages[-1]
        return cls(first.id, first.created_at, last.id, last.created_at, len(messages))


def range_key(*, agent_id: int, session_id: object, kind: str, rng: MessageRange | None) -> str:
    """SHA-256 of (agent, session, kind, message range): a run's idempotency key. The range
    is MessageRange.of(the run's messages), of which there is at least one."""
    if rng is None:
        raise ValueError("a run's idempotency key needs at least one message")
    raw = f"{agent_id}:{session_id}:{kind}:{rng.first_id}:{rng.last_id}:{rng.count}"
    return hashlib.sha256(raw.encode()).hexdigest()


def run_applied(*, agent: Agent, key: str) -> Run | None:
    """The run that already applied this key, if any."""
    return Run.objects.filter(agent=agent, idempotency_key=key, status__in=APPLIED).first()


def run_record(
    *,
    agent: Agent,
    session: Session | None,
    kind: str,
    trigger: str,
    status: str,
    reason: str = "",
    answer: Answer | None = None,
    tier: int | None = None,
    rng: MessageRange | None = None,
    key: str = "",
    error: str = "",
    details: dict | None = None,
) -> Run:
    """Write one Run row (inside the caller's transaction when the run applied writes). A
    session removed during the run is named by its key only: the log outlives it."""
    answer = answer or Answer(status="")
    details = dict(details or {})
    if answer.structured is not None:
        details.setdefault("structured", answer.structured)
    linked = session if session is not None and _exists(session) else None
    return Run.objects.create(
        agent=agent,
        session=linked,
        session_key=session.key if session is not None else "",
        user=session.user if session is not None else "",
        kind=kind,
        trigger=trigger,
        status=status,
        reason=reason,
        parse_tier=tier,
        structured_mode=answer.mode,
        truncated=answer.truncated,
        model=answer.model,
        input_tokens=answer.input_tokens,
        output_tokens=answer.output_tokens,
        latency_ms=answer.latency_ms,
        error=(error or answer.error)[:4000],
        first_message_id=rng.first_id if rng else None,
        last_message_id=rng.last_id if rng else None,
        first_message_at=rng.first_at if rng else None,
        last_message_at=rng.last_at if rng else None,
        message_count=rng.count if rng else 0,
        idempotency_key=key,
        output=answer.text[:MAX_OUTPUT_CHARS],
        details=details,
    )


# An answer that only copied the prompt's instructions back (echo.py).
ECHOED = "echoed_instructions"


def fallback_reason(answer: Answer, *, echoed: bool = False) -> str:
    """Why a fallback was used, from the answer that was not usable."""
    if answer.ok and echoed:
        return ECHOED
    return {"ok": "unparseable", "not_configured": "not_configured", "timeout": "timeout"}.get(
        answer.status, "error"
    )


def _exists(session: Session) -> bool:
    return type(session).objects.filter(pk=session.pk).exists()
