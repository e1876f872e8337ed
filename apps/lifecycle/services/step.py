"""The lifecycle-run template that summary, compaction, consolidation and flush fill in.

A step is a LifecycleStep with three hooks: `plan` reads what one run covers (no model
call), `prepare` asks the LLM or falls back (outside any transaction), `write` changes the
rows inside the transaction, after the agent's lock (the first lock of every write).
`run_step` owns the rest: the run's idempotency key, checked before the call and again under
the lock; the Run it records (ok, fallback, failed); Superseded. `run_chunks` and `run_once`
hold the step's lease around it, and say "busy" when someone else holds it.
"""

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import ClassVar, Generic, Protocol, TypeVar

from django.db import transaction

from apps.conversations.models import Message, Session
from apps.lifecycle.models import APPLIED, Run, RunStatus
from apps.lifecycle.services.calls import run_lease_ttl
from apps.lifecycle.services.leases import (
    Held,
    lease_acquire,
    lease_extend,
    lease_release,
    lease_wait,
)
from apps.lifecycle.services.llm import TIMEOUT, Answer
from apps.lifecycle.services.run_log import MessageRange, fallback_reason, range_key, run_applied
from apps.lifecycle.services.step_parts import RunLog, Skip, Superseded, expired, lock_session
from apps.providers.guard import check_outside_transaction

# The reasons after which the model is not asked again for the next chunk now: the next
# trigger continues (each chunk still got its fallback).
GAVE_UP = ("timeout", "error")


class Busy(Exception):
    """Another run holds the lease: try again later."""


class Planned(Protocol):
    """What one run covers: its messages (the run's range and idempotency key), and what
    the run's details say of the plan (how its prompt was cut; a retry's origin)."""

    @property
    def messages(self) -> Sequence[Message]: ...

    @property
    def details(self) -> dict: ...


class Prepared(Protocol):
    """What `prepare` made outside the transaction, as far as the run log is concerned."""

    @property
    def answer(self) -> Answer: ...  # the model's (NO_LLM when none is configured)

    @property
    def tier(self) -> int | None: ...  # the JSON parse tier that read it

    @property
    def by_model(self) -> bool: ...  # what is written is the model's, not a fallback

    @property
    def why(self) -> str: ...  # a fallback's reason, when not the answer's (fallback_reason)

    @property
    def failure(self) -> str: ...  # not "": nothing is written, the run failed for this


PlanT = TypeVar("PlanT", bound=Planned)
MadeT = TypeVar("MadeT", bound=Prepared)
# log.record with the answer, tier and range of the run already given.
Recorder = Callable[..., Run]


@dataclass(frozen=True)
class LifecycleStep(ABC, Generic[PlanT, MadeT]):
    """One kind of lifecycle run for one session: what it covers, how it asks, what it
    writes. `deadline` (time.monotonic()) bounds its calls."""

    log: RunLog
    deadline: float | None

    # What a plan whose range has applied already leaves: None stops quietly (a retried
    # task); a Skip is said to a caller who asked.
    already_applied: ClassVar[Skip | None] = None

    @property
    def session(self) -> Session:
        if self.log.session is None:
            raise TypeError("a lifecycle step runs for a session")
        return self.log.session

    @abstractmethod
    def plan(self) -> PlanT | Skip | None:
        """What the next run covers (reads only); a Skip says why not; None: nothing left."""

    @abstractmethod
    def prepare(self, plan: PlanT) -> MadeT:
        """The LLM's answer or the fallback for `plan`; outside any transaction."""

    @abstractmethod
    def write(self, plan: PlanT, made: MadeT, run: Run) -> dict:
        """Apply `made` under the agent's lock, raising Superseded when the state it was
        computed from moved; returns what to add to the run's details."""

    def superseded(self, record: Recorder) -> Run | Skip | None:
        """What a run superseded under the lock leaves: nothing, by default."""
        return None

    def after(self, plan: PlanT, run: Run) -> None:
        """Called after each run, outside any transaction: nothing, by default."""


def run_step(step: LifecycleStep[PlanT, MadeT], plan: PlanT) -> Run | Skip | None:
    """One run of `step` over `plan`: the Run recorded, a Skip to say, or None (its range
    applied already, or it was superseded quietly)."""
    log = step.log
    rng = MessageRange.of(plan.messages)
    if rng is None:
        raise ValueError("a lifecycle run covers at least one message")
    key = range_key(agent_id=log.agent.pk, session_id=step.session.pk, kind=log.kind, rng=rng)
    if run_applied(agent=log.agent, key=key) is not None:
        return step.already_applied
    check_outside_transaction(f"the {log.kind} step's model call")
    made = step.prepare(plan)
    record = partial(log.record, answer=made.answer, tier=made.tier, rng=rng)
    if made.failure:  # nothing to write: a later run asks again
        status = RunStatus.TIMEOUT if made.answer.status == TIMEOUT else RunStatus.FAILED
        return record(status=status, reason=made.failure, details=plan.details)
    try:
        return _applied(step, plan, made, record, key)
    except Superseded:
        return step.superseded(record)


def _applied(step: LifecycleStep, plan: Planned, made: Prepared, record: Recorder, key: str) -> Run:
    """The run and its writes, in one transaction under the agent's lock."""
    with transaction.atomic():
        lock_session(step.session)
        if run_applied(agent=step.log.agent, key=key) is not None:
            raise Superseded  # a run of the same range applied during the call
        if _lost(plan.messages):
            raise Superseded  # one of its messages was popped during the call
        reason = "" if made.by_model else made.why or fallback_reason(made.answer)
        status = RunStatus.OK if made.by_model else RunStatus.FALLBACK
        run = record(status=status, reason=reason, key=key, details=plan.details)
        written = step.write(plan, made, run)
        if written:
            run.details = {**run.details, **written}
            run.save(update_fields=["details"])
    return run


def _lost(messages: Sequence[Message]) -> bool:
    """Whether any of `messages` is gone (conversations' message_pop removed it)."""
    ids = {m.pk for m in messages}
    return Message.objects.filter(pk__in=ids).count() != len(ids)


@dataclass(frozen=True)
class LeaseTerms:
    """The lease a step holds across its calls, for `ttl` seconds: taken now or never, or
    waited for until `wait_until` (time.monotonic()). Taken by someone else: Busy(`busy`)
    when `busy` is set, else a "busy" skipped run."""

    name: str
    ttl: float
    wait_until: float | None = None
    busy: str = ""

    @classmethod
    def of(
        cls,
        log: RunLog,
        name: str,
        *,
        deadline: float | None,
        wait_until: float | None = None,
        busy: str = "",
    ) -> "LeaseTerms":
        """The terms of a lease held across the calls of `log`'s runs (calls.run_lease_ttl)."""
        ttl = run_lease_ttl(log.agent.config, trigger=log.trigger, deadline=deadline)
        return cls(name=name, ttl=ttl, wait_until=wait_until, busy=busy)

    def take(self) -> Held | None:
        if self.wait_until is None:
            return lease_acquire(name=self.name, ttl=self.ttl)
        return lease_wait(name=self.name, ttl=self.ttl, deadline=self.wait_until)


def run_leased(log: RunLog, lease: LeaseTerms, work: Callable[[Held], list[Run]]) -> list[Run]:
    """`work(held)` while holding the lease, released after; Busy or a skipped run when
    someone else holds it."""
    held = lease.take()
    if held is None:
        if lease.busy:
            raise Busy(lease.busy)
        return log.skip(Skip("busy"))
    try:
        return work(held)
    finally:
        lease_release(held)


def run_once(step: LifecycleStep, lease: LeaseTerms) -> list[Run]:
    """One run of `step` under its lease: the run, or the skipped run saying why not."""

    def once(_: Held) -> list[Run]:
        plan = step.plan()
        outcome = plan if plan is None or isinstance(plan, Skip) else run_step(step, plan)
        if outcome is None:
            return []
        return step.log.skip(outcome) if isinstance(outcome, Skip) else [outcome]

    return run_leased(step.log, lease, once)


def run_chunks(step: LifecycleStep, lease: LeaseTerms) -> list[Run]:
    """Runs of `step`, a planned chunk each, under its lease (extended after each), until
    nothing is left, a run does not apply or gave up on the model, or the deadline passes."""

    def chunks(held: Held) -> list[Run]:
        runs: list[Run] = []
        while (plan := step.plan()) is not None and not isinstance(plan, Skip):
            run = run_step(step, plan)
            if not isinstance(run, Run):
                break
            step.after(plan, run)
            runs.append(run)
            if run.status not in APPLIED or run.reason in GAVE_UP or expired(step.deadline):
                break
            lease_extend(held, ttl=lease.ttl)
        return runs or step.log.skip(Skip("nothing_to_do"))

    return run_leased(step.log, lease, chunks)
