"""Seed 000's rolling summary, built incrementally from the messages that left the window.

Messages after the session's summary cursor that have left the hot window are taken in
chunks under `summary_chunk_tokens`; each chunk is one LLM call whose prompt holds the old
summary, so merging happens while the model writes. On success the summary is saved and
the cursor moves to the chunk's newest message, and the day's log (seed 001) gets a line;
on failure all stay, the run is logged and later chunks wait for the next trigger (seed 000
does not bill them). Without an LLM the summary is extractive.
"""

import re
from dataclasses import dataclass, replace

from django.db.models import QuerySet

from apps.agents.config import AgentConfig
from apps.conversations import selectors as conv
from apps.conversations.models import Message, Session, SessionMeta
from apps.conversations.services import Cursor, summary_write
from apps.lifecycle.models import Run, RunKind, RunStatus
from apps.lifecycle.services.calls import (
    SUMMARY_SCHEMA,
    Fitted,
    call_seconds,
    fit_prompt,
    output_tokens,
)
from apps.lifecycle.services.daylog import daily_log_append, first_sentence
from apps.lifecycle.services.echo import Instructions
from apps.lifecycle.services.extractive import extractive_summary
from apps.lifecycle.services.llm import NO_LLM, Answer, ask, llm_configured
from apps.lifecycle.services.prompts import summary_prompt
from apps.lifecycle.services.run_log import ECHOED
from apps.lifecycle.services.step import LeaseTerms, LifecycleStep, Recorder, run_chunks
from apps.lifecycle.services.step_parts import RunLog, Superseded, take_chunk
from apps.providers.llm.jsonparse import parse_llm_json_tiered
from apps.providers.token_counts import count_tokens

_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```\s*$", re.S)


@dataclass(frozen=True)
class _Chunk:
    messages: list[Message]
    old_summary: str
    expected: Cursor | None  # the cursor the chunk was read at (compare and set)
    fitted: Fitted | None = None  # its prompt, with an LLM configured

    @property
    def details(self) -> dict:
        return {"fit": self.fitted.cut} if self.fitted is not None and self.fitted.cut else {}


def pending_summary(
    *, session: Session, through: Message | None = None, meta: SessionMeta | None = None
) -> QuerySet[Message]:
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
    if parsed is not None and isinstance(value, str):
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

    @property
    def why(self) -> str:
        return self.replaced

    @property
    def failure(self) -> str:
        """The call failed: nothing is written, a later run asks again."""
        return "" if self.text else self.answer.status


def _extractive(chunk: _Chunk, config: AgentConfig) -> str:
    return extractive_summary(
        old=chunk.old_summary, messages=chunk.messages, max_tokens=config.summary_max_tokens
    )


def _generate(session: Session, chunk: _Chunk, deadline: float | None, trigger: str) -> _Generated:
    """The new summary, the answer behind it, its tier. An answer that holds no summary
    (empty, or only the instructions echoed) gives way to the extractive one: the model
    would most likely answer the same again, and the summary must move on."""
    config, fitted = session.agent.config, chunk.fitted
    if not llm_configured() or fitted is None:
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


@dataclass(frozen=True)
class _Summary(LifecycleStep[_Chunk, _Generated]):
    """Seed 000's rolling summary, a chunk of what left the window per run."""

    through: Message | None = None

    def plan(self) -> _Chunk | None:
        chunk = _next_chunk(self.session, self.through)
        if chunk is None or not llm_configured():
            return chunk
        fitted = _fit(self.session, chunk)  # the messages that fit the model's context
        return replace(chunk, messages=chunk.messages[: fitted.count], fitted=fitted)

    def prepare(self, plan: _Chunk) -> _Generated:
        return _generate(self.session, plan, self.deadline, self.log.trigger)

    def write(self, plan: _Chunk, made: _Generated, run: Run) -> dict:
        session, text = self.session, made.text
        cursor = Cursor.of(plan.messages[-1])
        if not summary_write(session=session, content=text, cursor=cursor, expected=plan.expected):
            raise Superseded
        daily_log_append(
            agent=session.agent,
            kind=RunKind.SUMMARY,
            session_key=session.key,
            text=first_sentence(text),
            once_a_day=True,
            owner=session.user,
        )
        echoed = {"echoed": {"summary": made.echoed}} if made.echoed else {}
        return {"summary_tokens": count_tokens(text), **echoed}

    def superseded(self, record: Recorder) -> Run:
        return record(status=RunStatus.SKIPPED, reason="superseded")


def session_summarize(
    *, session: Session, trigger: str, deadline: float | None = None, through: Message | None = None
) -> list[Run]:
    """Fold what left the hot window into the rolling summary, a chunk per LLM call, until
    done, a chunk fails, or `deadline` (time.monotonic()) passes. Returns the runs."""
    log = RunLog(session.agent, session, RunKind.SUMMARY, trigger)
    lease = LeaseTerms.of(log, f"summary:{session.pk}", deadline=deadline)
    return run_chunks(_Summary(log, deadline, through=through), lease)


def summary_due(*, session: Session, meta: SessionMeta | None = None) -> bool:
    """Seed 000's automatic trigger: at least max_history_messages have left the window."""
    n = session.agent.config.max_history_messages
    return pending_summary(session=session, meta=meta)[:n].count() >= n
