"""Seed 001's context manager: a proactive flush of facts at 60% usage, and write-then-
compact at 70%. Nothing is discarded before its facts are stored.

A flush asks the LLM for the durable facts in the oldest window messages (those before the
newest compact_keep_last, after the session's flush cursor) and stores each through the
facts' own save (dedup, versions, source "agent", linked to the run) and as a line of
MEMORY.md; with the agent's fact_review on they wait as pending facts instead (not in
MEMORY.md), for an editor to approve on the review pages. Without an LLM, or when it fails,
the user's first-person statements are kept instead. The same step with kind EXTRACT
takes everything up to a message (`through`): every compaction runs it first on what it
will archive (compaction.py), so the flush cursor bounds what may leave the hot window.
"""

import time
from dataclasses import dataclass, replace

from django.db.models import QuerySet

from apps.agents.models import Agent
from apps.conversations import selectors as conv
from apps.conversations.models import Message, Session
from apps.conversations.services import Cursor, flush_cursor_write
from apps.core.errors import ApplicationError
from apps.entries import names
from apps.entries.selectors import documents
from apps.entries.services import entry_put
from apps.facts.models import Fact, FactStatus
from apps.facts.services import FactDraft, clean_category, fact_prepare, fact_write
from apps.lifecycle.models import Run, RunKind
from apps.lifecycle.services.calls import (
    EXTRACTION_SCHEMA,
    Fitted,
    call_seconds,
    fit_chunk,
    fit_prompt,
    output_tokens,
)
from apps.lifecycle.services.echo import Instructions
from apps.lifecycle.services.extractive import heuristic_facts
from apps.lifecycle.services.leases import agent_lease
from apps.lifecycle.services.llm import NO_LLM, Answer, ask, llm_configured
from apps.lifecycle.services.prompts import extraction_prompt
from apps.lifecycle.services.step import LeaseTerms, LifecycleStep, run_chunks
from apps.lifecycle.services.step_parts import RunLog, Superseded, take_chunk
from apps.providers.llm.jsonparse import extract_all, parse_llm_json_tiered


@dataclass(frozen=True)
class Found:
    content: str
    category: str | None = None
    importance: float | None = None


def pending_flush(*, session: Session, through: Message | None = None) -> QuerySet[Message]:
    """Hot messages whose facts no flush has taken, after the flush cursor, oldest first:
    up to `through` (an extraction before a compaction), else all but the newest
    compact_keep_last (a flush: those are still in the model's context)."""
    meta = conv.session_meta(session=session)
    qs = conv.hot_messages(session=session).order_by("created_at", "id")
    # The cursor's time and id are set together.
    if meta is not None and meta.flush_cursor is not None and meta.flush_cursor_id is not None:
        qs = qs.filter(conv.after(meta.flush_cursor, meta.flush_cursor_id))
    if through is not None:
        return qs.exclude(conv.after(through.created_at, through.id))
    keep = session.agent.config.compact_keep_last
    newest = list(conv.hot_messages(session=session).order_by("-created_at", "-id")[:keep])
    if len(newest) < keep:
        return qs.none()
    return qs.filter(conv.before(newest[-1].created_at, newest[-1].id))


def _importance(value: object) -> float | None:
    """The model's importance if it is a number in [0, 1]; else the default applies."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


def _parse(text: str) -> tuple[list[Found], int | None]:
    parsed = parse_llm_json_tiered(text, ())
    items = parsed.value.get("facts") if parsed is not None else None
    if parsed is not None and isinstance(items, list):
        found = []
        for item in items:
            if isinstance(item, str):
                found.append(Found(item))
            elif isinstance(item, dict) and isinstance(item.get("content"), str):
                category = item.get("category")
                found.append(
                    Found(
                        item["content"],
                        category if isinstance(category, str) else None,
                        _importance(item.get("importance")),
                    )
                )
        return found, parsed.tier
    contents = extract_all(text, "content")  # tier 3: each fact's text, one by one
    return [Found(c) for c in contents], (3 if contents else None)


@dataclass(frozen=True)
class _Chunk:
    messages: list[Message]
    fitted: Fitted | None  # its prompt, with an LLM configured
    expected: Cursor | None  # the flush cursor it was read at (compare and set)

    @property
    def details(self) -> dict:
        return {}


@dataclass(frozen=True)
class _Extracted:
    found: list[Found]
    answer: Answer
    tier: int | None
    by_model: bool
    drafts: tuple[FactDraft, ...] = ()  # the found facts, validated and embedded
    why: str = ""  # a fallback's reason is the answer's own
    failure: str = ""  # the first-person fallback stands in for any answer


def _fit(session: Session, messages: list[Message]) -> Fitted:
    """The extraction prompt with the messages that fit the model's context."""
    config = session.agent.config
    return fit_prompt(
        lambda _, shown: extraction_prompt(messages=shown, max_facts=config.flush_max_facts),
        messages=messages,
        reference="",
        max_tokens=output_tokens(config.extraction_max_tokens),
    )


def _extract(
    session: Session,
    messages: list[Message],
    deadline: float | None,
    trigger: str,
    fitted: Fitted | None,
) -> _Extracted:
    """The facts found, the answer, the parse tier, and whether the LLM found them."""
    config = session.agent.config
    answer = NO_LLM
    if llm_configured() and fitted is not None:
        answer = ask(
            fitted.prompt,
            timeout=call_seconds(config, trigger=trigger, deadline=deadline),
            schema=EXTRACTION_SCHEMA,
            schema_name="extraction",
            max_tokens=output_tokens(config.extraction_max_tokens),
        )
        if answer.ok:
            found, tier = _parse(answer.text)
            # A "fact" copied from the instructions is none (echo.py).
            instructions = Instructions.of(fitted.bare, [m.content for m in messages])
            found = [f for f in found if not instructions.is_echo(f.content)]
            if tier is not None:
                return _Extracted(found[: config.flush_max_facts], answer, tier, True)
    facts = heuristic_facts(messages=messages, limit=config.flush_max_facts)
    return _Extracted([Found(text) for text in facts], answer, None, False)


def _drafts(session: Session, found: list[Found]) -> list[FactDraft]:
    """Validated, embedded saves (outside any transaction); unusable facts are dropped."""
    drafts = []
    for fact in found:
        category = fact.category
        try:
            category = clean_category(category, loc=["category"]) if category else None
        except ApplicationError:
            category = None
        try:
            drafts.append(
                fact_prepare(
                    agent=session.agent,
                    content=fact.content,
                    category=category,
                    importance=fact.importance,
                    session_id=session.pk,
                    user=session.user,  # a user's session: their facts (issue 26)
                    # Proposed by the lifecycle, not saved by the agent: reviewed when asked.
                    pending=session.agent.config.fact_review,
                )
            )
        except ApplicationError:
            continue  # empty, too long or NUL: nothing to keep
    return drafts


def _memory_lines(memory: str, values: list[str]) -> str:
    present = {line.strip() for line in memory.splitlines()}
    new = [f"- {v}" for v in dict.fromkeys(" ".join(v.split()) for v in values)]
    new = [line for line in new if line not in present]
    if not new:
        return memory
    head = memory.rstrip("\n") + "\n" if memory.strip() else "# Memory\n\n"
    return head + "\n".join(new) + "\n"


def _memory_write(session: Session, kind: str, saved: list[Fact]) -> str:
    """Add the active facts to MEMORY.md as lines (a pending fact waits for its approval:
    get_context reads MEMORY.md); says whether it changed."""
    found = documents(agent=session.agent, names=[names.MEMORY], owner=session.user)
    memory = found.get(names.MEMORY)
    before = memory.content if memory is not None else ""
    after = _memory_lines(before, [f.value for f in saved if f.status == FactStatus.ACTIVE])
    if after == before:
        return "unchanged"
    entry_put(
        agent=session.agent,
        name=names.MEMORY,
        content=after,
        changed_by=kind,
        reason=f"{kind} of {session.key}",
        owner=session.user,
    )
    return "updated"


@dataclass(frozen=True)
class _Flush(LifecycleStep[_Chunk, _Extracted]):
    """Seed 001's flush (or the extraction before a compaction), a chunk per run."""

    through: Message | None = None

    def plan(self) -> _Chunk | None:
        session = self.session
        budget = session.agent.config.summary_chunk_tokens
        messages = take_chunk(
            pending_flush(session=session, through=self.through), budget_tokens=budget
        )
        if not messages:
            return None
        fitted = None
        if llm_configured():  # the rest: the next chunk
            messages, fitted = fit_chunk(lambda head: _fit(session, head), messages)
        expected = Cursor.read(conv.session_meta(session=session), "flush_cursor")
        return _Chunk(messages, fitted, expected)

    def prepare(self, plan: _Chunk) -> _Extracted:
        got = _extract(self.session, plan.messages, self.deadline, self.log.trigger, plan.fitted)
        return replace(got, drafts=tuple(_drafts(self.session, got.found)))

    def write(self, plan: _Chunk, made: _Extracted, run: Run) -> dict:
        session, cursor = self.session, Cursor.of(plan.messages[-1])
        if not flush_cursor_write(session=session, cursor=cursor, expected=plan.expected):
            raise Superseded
        saved = [fact_write(draft=d).fact for d in made.drafts]
        memory = _memory_write(session, self.log.kind, saved)
        run.facts.set(saved)
        return {"facts": [f.pk for f in saved], "memory": memory}


def session_flush(
    *,
    session: Session,
    trigger: str,
    kind: str = RunKind.FLUSH,
    through: Message | None = None,
    deadline: float | None = None,
) -> list[Run]:
    """Store the facts of the oldest window messages (FLUSH), or of everything up to
    `through` (EXTRACT, before a compaction); in sequence with consolidation."""
    agent = session.agent
    log = RunLog(agent, session, kind, trigger)
    wait_until = deadline if deadline is not None else _soon(agent)
    lease = LeaseTerms.of(log, agent_lease(agent.pk), deadline=deadline, wait_until=wait_until)
    return run_chunks(_Flush(log, deadline, through=through), lease)


def _soon(agent: Agent) -> float:
    return time.monotonic() + agent.config.consolidation_timeout_seconds
