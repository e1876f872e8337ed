"""Seed 004's consolidation: one LLM call turns messages and MEMORY.md into a history entry
and an updated MEMORY.md; on any failure a [raw-fallback] entry keeps the last messages.

One agent's consolidations never interleave: each holds the agent's lease (leases.py) from
reading MEMORY.md to writing it, and every other MEMORY.md writer (flush) takes the same
lease. The LLM call is bounded by consolidation_timeout_seconds. A run's idempotency key
makes a retried task write nothing twice.
"""

from dataclasses import dataclass, field, replace

from apps.conversations import selectors as conv
from apps.conversations.models import Consolidation, Message, Session
from apps.conversations.services import messages_mark_consolidated
from apps.entries import names
from apps.entries.selectors import documents
from apps.entries.services import entry_put
from apps.learnings.models import LearningKind, LearningSource
from apps.learnings.services import learning_create, review_status
from apps.lifecycle.models import HistoryEntry, HistoryKind, Run, RunKind
from apps.lifecycle.services.calls import (
    CONSOLIDATION_SCHEMA,
    Fitted,
    call_seconds,
    fit_chunk,
    fit_prompt,
    is_background,
    output_tokens,
)
from apps.lifecycle.services.daylog import daily_log_append, first_line
from apps.lifecycle.services.echo import Instructions
from apps.lifecycle.services.extractive import (
    extractive_history,
    heuristic_facts,
    memory_with_facts,
    raw_fallback,
)
from apps.lifecycle.services.leases import agent_lease
from apps.lifecycle.services.llm import NO_LLM, Answer, ask, llm_configured
from apps.lifecycle.services.prompts import consolidation_prompt
from apps.lifecycle.services.run_log import ECHOED
from apps.lifecycle.services.step import LeaseTerms, LifecycleStep, run_chunks, run_step
from apps.lifecycle.services.step_parts import RunLog, take_chunk
from apps.providers.llm.jsonparse import parse_llm_json_tiered
from apps.search.embedding_queue import schedule_embedding

FIELDS = ("history_entry", "memory_update")
MAX_CORRECTIONS = 20


@dataclass(frozen=True)
class _Result:
    """What one chunk's call produced: the entry to append and MEMORY.md to write. `ok`:
    the entry is the model's (else a [raw-fallback] one); `memory_update`: the model's new
    MEMORY.md, None when it gave none."""

    answer: Answer
    history: str
    memory_update: str | None
    tier: int | None
    ok: bool
    corrections: tuple[str, ...] = ()
    echoed: dict = field(default_factory=dict)  # lines dropped as echoed instructions, by field
    failure: str = ""  # a retried half the model did not answer: "given_up", nothing written

    @property
    def by_model(self) -> bool:
        """The model's answer is applied (seed 004: each field when present)."""
        return self.answer.ok and (self.ok or self.memory_update is not None)

    @property
    def why(self) -> str:
        return ECHOED if self.answer.ok and self.echoed else ""


@dataclass(frozen=True)
class _Chunk:
    messages: list[Message]
    memory: str  # MEMORY.md as it was read for the prompt
    fitted: Fitted | None  # its prompt, with an LLM configured
    retry: dict = field(default_factory=dict)  # a retried half: its fallback run and part

    @property
    def details(self) -> dict:
        if self.retry:
            return self.retry
        return {"fit": self.fitted.cut} if self.fitted is not None and self.fitted.cut else {}


def _chunk(session: Session, keep: int) -> list[Message]:
    config = session.agent.config
    qs = conv.unconsolidated_messages(session=session)
    available = qs.count() - keep
    if available <= 0:
        return []
    return take_chunk(qs, budget_tokens=config.consolidation_chunk_tokens, limit=available)


def _read_memory(session: Session) -> str:
    # A user's session consolidates into that user's MEMORY.md (issue 26).
    own = documents(agent=session.agent, names=[names.MEMORY], owner=session.user)
    found = own.get(names.MEMORY)
    return found.content if found is not None else ""


def _extractive(session: Session, messages: list[Message], memory: str) -> _Result:
    """Without a model: the salient sentences as the history entry (a fallback kind, so a
    reset still archives the messages whole) and the user's first-person facts in MEMORY.md."""
    config = session.agent.config
    history = extractive_history(messages=messages, max_tokens=config.summary_max_tokens)
    facts = heuristic_facts(messages=messages, limit=config.flush_max_facts)
    update = memory_with_facts(memory=memory, facts=facts, max_bytes=config.max_memory_bytes)
    return _Result(NO_LLM, history, update, None, False)


def _fit(session: Session, messages: list[Message], memory: str) -> Fitted:
    """Seed 004's prompt cut to the model's context: fewer messages (the rest wait for the
    next chunk), or MEMORY.md cut in the prompt when it alone leaves no room."""
    config = session.agent.config

    def build(reference: str, shown: list) -> list:
        return consolidation_prompt(
            memory=reference,
            messages=shown,
            compress=len(memory.encode("utf-8")) > config.max_memory_bytes,
            max_bytes=config.max_memory_bytes,
        )

    limit = output_tokens(config.consolidation_max_tokens)
    return fit_prompt(build, messages=messages, reference=memory, max_tokens=limit)


def _call(
    session: Session,
    messages: list[Message],
    memory: str,
    deadline: float | None,
    trigger: str,
    fitted: Fitted | None,
) -> _Result:
    config = session.agent.config
    if not llm_configured() or fitted is None:
        return _extractive(session, messages, memory)
    answer = ask(
        fitted.prompt,
        timeout=call_seconds(config, trigger=trigger, deadline=deadline),
        schema=CONSOLIDATION_SCHEMA,
        schema_name="consolidation",
        max_tokens=output_tokens(config.consolidation_max_tokens),
    )
    parsed = parse_llm_json_tiered(answer.text, FIELDS) if answer.ok else None
    value, tier = (parsed.value, parsed.tier) if parsed else ({}, None)
    instructions = Instructions.of(fitted.bare, [memory, *(m.content for m in messages)])
    history, update, echoed = _unechoed(instructions, value)
    if update is not None and len(fitted.reference) < len(memory):
        # The model saw only the head of MEMORY.md: the tail it never saw stays as it was.
        update = update + "\n" + memory[len(fitted.reference) :].strip()
    if history is None:
        # Seed 004 applies each field when present: a memory_update alone still updates
        # MEMORY.md, and the messages get a [raw-fallback] entry so none is lost.
        history = raw_fallback(
            messages=messages, last=config.raw_fallback_messages, chars=config.raw_fallback_chars
        )
        if update is None:
            return _Result(answer, history, None, None, False, echoed=echoed)
        return _Result(answer, history, update, tier, False, _corrections(value), echoed)
    return _Result(answer, history, update, tier, True, _corrections(value), echoed)


def _unechoed(instructions: Instructions, value: dict) -> tuple[str | None, str | None, dict]:
    """history_entry and memory_update without the lines that copy the prompt's own
    instructions (echo.py); a field left empty counts as absent. Says what went, by field."""
    out, echoed = [], {}
    for name in ("history_entry", "memory_update"):
        text = _text(value.get(name))
        if text is not None:
            text, dropped = instructions.clean(text)
            if dropped:
                echoed[name] = dropped
        out.append(text or None)
    return out[0], out[1], echoed


def _text(value: object) -> str | None:
    """A field's text, stripped; None when absent, not a string or blank (seed 004 applies
    a field only when present: a blank memory_update must not empty MEMORY.md)."""
    return value.strip() if isinstance(value, str) and value.strip() else None


def _corrections(answer: dict) -> tuple[str, ...]:
    """Seed 001's corrections from the answer: non-empty strings, at most MAX_CORRECTIONS."""
    value = answer.get("corrections")
    if not isinstance(value, list):
        return ()
    found = [" ".join(v.split())[:2000] for v in value if isinstance(v, str) and v.strip()]
    return tuple(v for v in dict.fromkeys(found) if "\x00" not in v)[:MAX_CORRECTIONS]


def _apply_memory(session: Session, result: _Result, memory: str, run_ref: str) -> str:
    """Write MEMORY.md if the update changes it and nobody wrote it meanwhile; says what."""
    if result.memory_update is None or result.memory_update.strip() == memory.strip():
        return "unchanged"
    if _read_memory(session) != memory:
        # An agent or admin wrote MEMORY.md during the call: theirs stays; the model's
        # proposal is kept in the run's output.
        return "conflict"
    entry_put(
        agent=session.agent,
        name=names.MEMORY,
        content=result.memory_update.strip() + "\n",
        changed_by="consolidation",
        reason=run_ref,
        owner=session.user,
    )
    return "updated"


def _propose_corrections(session: Session, corrections: tuple[str, ...]) -> None:
    """Seed 001's corrections.md: each correction a learning, active unless the agent's
    fact_review is on (then pending until an editor approves it)."""
    for correction in corrections:
        learning_create(
            agent=session.agent,
            kind=LearningKind.CORRECTION,
            content=correction,
            source=LearningSource.CONSOLIDATION,
            status=review_status(session.agent),
            session_id=session.pk,
            session_key=session.key,
            user=session.user,
        )


def _applied(result: _Result, memory_state: str) -> list[str]:
    """What of the model's answer was written: its history_entry, its memory_update."""
    applied = ["history_entry"] if result.ok else []
    by_model = memory_state == "updated" and result.answer.ok  # not the extractive lines
    return applied + (["memory_update"] if by_model else [])


def _history_add(
    session: Session, messages: list[Message], result: _Result, run: Run
) -> HistoryEntry:
    """The run's history entry (a [raw-fallback] one unless the model wrote it); its
    messages are marked consolidated."""
    entry = HistoryEntry.objects.create(
        agent=session.agent,
        session=session,
        session_key=session.key,
        user=session.user,
        content=result.history,
        kind=HistoryKind.OK if result.ok else HistoryKind.RAW_FALLBACK,
        run=run,
        first_message_at=messages[0].created_at,
        last_message_at=messages[-1].created_at,
    )
    kind = Consolidation.OK if result.ok else Consolidation.FALLBACK
    messages_mark_consolidated(ids=[m.pk for m in messages], kind=kind, at=entry.created_at)
    return entry


@dataclass(frozen=True)
class _Consolidation(LifecycleStep[_Chunk, _Result]):
    """Seed 004's consolidation of one session, a chunk of messages per run."""

    keep: int = 0

    def plan(self) -> _Chunk | None:
        session = self.session
        messages = _chunk(session, self.keep)
        if not messages:
            return None
        memory = _read_memory(session)
        if not llm_configured():
            return _Chunk(messages, memory, None)
        messages, fitted = fit_chunk(lambda head: _fit(session, head, memory), messages)
        return _Chunk(messages, memory, fitted)

    def prepare(self, plan: _Chunk) -> _Result:
        session, trigger = self.session, self.log.trigger
        result = _call(session, plan.messages, plan.memory, self.deadline, trigger, plan.fitted)
        return replace(result, failure="given_up") if plan.retry and not result.by_model else result

    def write(self, plan: _Chunk, made: _Result, run: Run) -> dict:
        session = self.session
        memory = _apply_memory(session, made, plan.memory, f"consolidation of {session.key}")
        entry = _history_add(session, plan.messages, made, run)
        _propose_corrections(session, made.corrections)
        daily_log_append(
            agent=session.agent,
            kind=RunKind.CONSOLIDATE,
            session_key=session.key,
            text=first_line(made.history),
            owner=session.user,
        )
        schedule_embedding(corpus="history", agent_id=entry.agent_id)
        return {
            "history_entry_id": entry.pk,
            "memory": memory,
            "corrections": len(made.corrections),
            "applied": _applied(made, memory),
            **({"echoed": made.echoed} if made.echoed else {}),
        }

    def after(self, plan: _Chunk, run: Run) -> None:
        background = is_background(self.log.trigger, self.deadline)
        if run.reason == "timeout" and background and len(plan.messages) > 1:
            self.retry_in_halves(plan.messages, run)

    def retry_in_halves(self, messages: list[Message], fallback: Run) -> None:
        """A background call that timed out left a [raw-fallback] entry (nothing lost); each
        half of its range is asked once more. A half the model answers gets its own entry and
        its messages become `ok`; the fallback entry stays (HISTORY is append-only). A half
        that fails again is given up: its raw fallback is what HISTORY keeps."""
        session, step, middle = self.session, replace(self, deadline=None), len(messages) // 2
        for part, half in enumerate((messages[:middle], messages[middle:]), start=1):
            memory = _read_memory(session)
            retry = {"retry_of": fallback.pk, "part": f"{part}/2"}
            if run_step(step, _Chunk(half, memory, _fit(session, half, memory), retry)) is None:
                return  # superseded


def session_consolidate(
    *,
    session: Session,
    trigger: str,
    keep: int = 0,
    deadline: float | None = None,
    wait_until: float | None = None,
    raise_busy: bool = False,
) -> list[Run]:
    """Consolidate the session's unconsolidated messages but the newest `keep`, a chunk per
    call, in sequence with the agent's other consolidations: waiting for its turn until
    `wait_until` (time.monotonic(); None: not at all). When the turn does not come: Busy
    with `raise_busy`, else a skipped run. Calls stop at `deadline`."""
    agent = session.agent
    log = RunLog(agent, session, RunKind.CONSOLIDATE, trigger)
    busy = f"agent {agent.pk} is consolidating" if raise_busy else ""
    lease = LeaseTerms.of(
        log, agent_lease(agent.pk), deadline=deadline, wait_until=wait_until, busy=busy
    )
    return run_chunks(_Consolidation(log, deadline, keep=keep), lease)


def consolidation_due(*, session: Session) -> bool:
    """Seed 004's automatic trigger: more than memory_window unconsolidated messages."""
    window = session.agent.config.memory_window
    return conv.unconsolidated_messages(session=session)[: window + 1].count() > window
