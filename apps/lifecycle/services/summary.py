"""Seed 000's rolling summary, built incrementally from the messages that left the window.

Messages after the session's summary cursor that have left the hot window are taken in
chunks under `summary_chunk_tokens`; each chunk is one LLM call whose prompt holds the old
summary, so merging happens while the model writes. On success the summary is saved and
the cursor moves to the chunk's newest message, and the day's log (seed 001) gets a line;
on failure all stay, the run is logged and later chunks wait for the next trigger (seed 000
does not bill them). Without an LLM the summary is extractive.
"""

import functools
import re
from dataclasses import dataclass, replace

from django.db import transaction

from apps.conversations import selectors as conv
from apps.conversations.models import Message, Session, SessionMeta
from apps.conversations.services import Cursor, summary_write
from apps.lifecycle.models import APPLIED, Run, RunKind, RunStatus
from apps.lifecycle.services.calls import (
    SUMMARY_SCHEMA,
    Fitted,
    call_seconds,
    fit_prompt,
    output_tokens,
    run_lease_ttl,
)
from apps.lifecycle.services.common import (
    Skip,
    Superseded,
    expired,
    lock_session,
    skipped,
    take_chunk,
)
from apps.lifecycle.services.daylog import daily_log_append, first_sentence
from apps.lifecycle.services.echo import Instructions
from apps.lifecycle.services.extractive import extractive_summary
from apps.lifecycle.services.leases import lease_acquire, lease_extend, lease_release
from apps.lifecycle.services.llm import NO_LLM, Answer, ask, llm_configured
from apps.lifecycle.services.prompts import summary_prompt
from apps.lifecycle.services.runs import (
    ECHOED,
    MessageRange,
    fallback_reason,
    range_key,
    run_applied,
    run_record,
)
from apps.providers.llm.jsonparse import parse_llm_json_tiered
from apps.providers.tokens import count_tokens

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```\s*$", re.S)


@dataclass(frozen=True)
class _Chunk:
    messages: list[Message]
    old_summary: str
    expected: Cursor | None  # the cursor the chunk was read at (compare and set)


def pending_summary(
    *, session: Session, through: Message | None = None, meta: SessionMeta | None = None
):
    """Messages due for the rolling summary: after the cursor, out of the hot window (and
    at or before `through`, when given), oldest first. `meta`: the session's, if read."""
    meta = meta if meta is not None else conv.session_meta(session=session)
    qs = conv.messages_left_window(session=session, meta=meta)
    if through is not None:
        qs = qs.exclude(conv.after(through.created_at, through.id))
    return qs


def _next_chunk(session: Session, through: Message | None) -> _Chunk | None:
    meta = conv.session_meta(session=session)
    messages = take_chunk(
        pending_summary(session=session, through=through, meta=meta),
        budget_tokens=session.agent.config.summary_chunk_tokens,
    )
    if not messages:
        return None
    summary = conv.session_summary(session=session)
    expected = Cursor.read(meta, "summary_cursor")
    return _Chunk(messages, summary.content if summary else "", expected)


def _clean(text: str) -> str:
    text = text.strip()
    match = _FENCE.match(text)
    return (match.group(1) if match else text).strip()


def _fit(session: Session, chunk: _Chunk) -> Fitted:
    """The summary prompt cut to the model's context: fewer messages, or the old summary cut
    (in the prompt only) when it alone leaves no room."""
    limit = output_tokens(session.agent.config.summary_max_tokens)
    return fit_prompt(
        lambda old, messages: summary_prompt(old_summary=old, messages=messages, max_tokens=limit),
        messages=chunk.messages,
        reference=chunk.old_summary,
        max_tokens=limit,
    )


def _summary_text(answer: Answer) -> tuple[str, int | None]:
    """The summary in the answer: its JSON field (with the parse tier), else the prose a
    prompt-only server wrote."""
    parsed = parse_llm_json_tiered(answer.text, ("summary",))
    value = parsed.value.get("summary") if parsed else None
    if isinstance(value, str):
        return value.strip(), parsed.tier
    return ("" if parsed else _clean(answer.text)), None


@dataclass(frozen=True)
class _Generated:
    text: str  # "" when the LLM gave none
    answer: Answer
    tier: int | None
    echoed: int = 0  # lines dropped as the prompt's own instructions (echo.py)
    # Why the extractive summary stands in for an answer that held none (empty_answer,
    # echoed_instructions); "" when the text is the model's, or there was no answer.
    replaced: str = ""

    @property
    def by_model(self) -> bool:
        return self.answer.ok and not self.replaced


def _extractive(chunk: _Chunk, config) -> str:
    return extractive_summary(
        old=chunk.old_summary, messages=chunk.messages, max_tokens=config.summary_max_tokens
    )


def _generate(
    session: Session, chunk: _Chunk, deadline: float | None, trigger: str, fitted: Fitted | None
) -> _Generated:
    """The new summary, the answer behind it, its tier. An answer that holds no summary
    (empty, or only the instructions echoed) gives way to the extractive one: the model
    would most likely answer the same again, and the summary must move on."""
    config = session.agent.config
    if not llm_configured():
        return _Generated(_extractive(chunk, config), NO_LLM, None)
    answer = ask(
        fitted.prompt,
        timeout=call_seconds(config, trigger=trigger, deadline=deadline),
        schema=SUMMARY_SCHEMA,
        schema_name="summary",
        max_tokens=output_tokens(config.summary_max_tokens),
    )
    if not answer.ok:
        return _Generated("", answer, None)
    text, tier = _summary_text(answer)
    sources = [chunk.old_summary, *(m.content for m in chunk.messages)]
    text, echoed = Instructions.of(fitted.bare, sources).clean(text)
    if not text:
        why = ECHOED if echoed else "empty_answer"
        return _Generated(_extractive(chunk, config), answer, None, echoed, replaced=why)
    return _Generated(text, answer, tier, echoed)


def _summarize_chunk(session: Session, trigger: str, chunk: _Chunk, deadline) -> Run | None:
    agent = session.agent
    fitted = _fit(session, chunk) if llm_configured() else None
    if fitted is not None:  # the messages that fit the model's context; the rest wait
        chunk = replace(chunk, messages=chunk.messages[: fitted.count])
    rng = MessageRange.of(chunk.messages)
    key = range_key(agent_id=agent.pk, session_id=session.pk, kind=RunKind.SUMMARY, rng=rng)
    if run_applied(agent=agent, key=key) is not None:
        return None  # a retried task: this chunk is in the summary already
    made = _generate(session, chunk, deadline, trigger, fitted)
    text, answer = made.text, made.answer
    fit = {"fit": fitted.cut} if fitted is not None and fitted.cut else {}
    log = functools.partial(
        run_record,
        agent=agent,
        session=session,
        kind=RunKind.SUMMARY,
        trigger=trigger,
        answer=answer,
        rng=rng,
        tier=made.tier,
    )
    if not text:  # the call failed: nothing written, a later run asks again
        status = RunStatus.TIMEOUT if answer.status == "timeout" else RunStatus.FAILED
        return log(status=status, reason=answer.status, details=fit)
    try:
        with transaction.atomic():
            lock_session(session)
            if run_applied(agent=agent, key=key) is not None or not summary_write(
                session=session,
                content=text,
                cursor=Cursor.of(chunk.messages[-1]),
                expected=chunk.expected,
            ):
                raise Superseded
            daily_log_append(
                agent=agent,
                kind=RunKind.SUMMARY,
                session_key=session.key,
                text=first_sentence(text),
                once_a_day=True,
            )
            echoed = {"echoed": {"summary": made.echoed}} if made.echoed else {}
            return log(
                status=RunStatus.OK if made.by_model else RunStatus.FALLBACK,
                reason="" if made.by_model else made.replaced or fallback_reason(answer),
                key=key,
                details={"summary_tokens": count_tokens(text), **fit, **echoed},
            )
    except Superseded:
        return log(status=RunStatus.SKIPPED, reason="superseded")


def session_summarize(
    *, session: Session, trigger: str, deadline: float | None = None, through: Message | None = None
) -> list[Run]:
    """Fold what left the hot window into the rolling summary, a chunk per LLM call, until
    done, a chunk fails, or `deadline` (time.monotonic()) passes. Returns the runs."""
    agent = session.agent
    ttl = run_lease_ttl(agent.config, trigger=trigger, deadline=deadline)
    held = lease_acquire(name=f"summary:{session.pk}", ttl=ttl)
    if held is None:
        return skipped(agent, session, RunKind.SUMMARY, trigger, Skip("busy"))
    runs: list[Run] = []
    try:
        while (chunk := _next_chunk(session, through)) is not None:
            run = _summarize_chunk(session, trigger, chunk, deadline)
            if run is None:
                break
            runs.append(run)
            if run.status not in APPLIED or expired(deadline):
                break
            lease_extend(held, ttl=ttl)
    finally:
        lease_release(held)
    return runs or skipped(agent, session, RunKind.SUMMARY, trigger, Skip("nothing_to_do"))


def summary_due(*, session: Session, meta: SessionMeta | None = None) -> bool:
    """Seed 000's automatic trigger: at least max_history_messages have left the window."""
    n = session.agent.config.max_history_messages
    return pending_summary(session=session, meta=meta)[:n].count() >= n
