"""Seed 004's MEMORY.md compression: past the agent's max_memory_bytes, the LLM rewrites
MEMORY.md shorter, pruning stale, low-value facts.

Queued by every write that leaves MEMORY.md over the limit (apps.entries announces it by task
name, apps.core.tasknames) and by the lifecycle.compress_due sweep. Like every MEMORY.md
writer it holds the agent's lease from reading MEMORY.md to writing it, and calls the LLM
outside any transaction. It writes only an answer that is non-empty and smaller, and only if
nobody wrote MEMORY.md during the call; entry_put keeps the text it replaces as a version
(EntryChange.previous_content). No LLM, a failure or a bad answer: MEMORY.md stays, the run
says why, and nothing retries until MEMORY.md is written again.
"""

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Exists, OuterRef

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.entries import names
from apps.entries.models import Entry, EntryChange
from apps.entries.services import entry_put
from apps.lifecycle.models import Run, RunKind, RunStatus
from apps.lifecycle.services.calls import (
    COMPRESSION_SCHEMA,
    call_seconds,
    compression_tokens,
    fit_prompt,
)
from apps.lifecycle.services.echo import Instructions
from apps.lifecycle.services.leases import agent_lease
from apps.lifecycle.services.llm import Answer, ask
from apps.lifecycle.services.run_log import fallback_reason
from apps.lifecycle.services.step import LeaseTerms, run_leased
from apps.lifecycle.services.step_parts import RunLog, Skip
from apps.providers.llm import ChatMessage
from apps.providers.llm.jsonparse import parse_llm_json_tiered

# `changed_by` of its writes: a MEMORY.md compression wrote last is not compressed again
# until someone else writes it (no compression of its own output in a loop).
COMPRESSOR = "compression"
FIELDS = ("memory",)


@dataclass(frozen=True)
class _Proposal:
    """The model's answer and, when usable, the compressed MEMORY.md; else why not."""

    answer: Answer
    memory: str | None
    tier: int | None
    reason: str = ""


def compression_prompt(*, memory: str, max_bytes: int) -> list[ChatMessage]:
    """Seed 004's compression instruction, on its own: MEMORY.md back under max_bytes."""
    user = (
        f"The agent's long-term memory below is {_size(memory)} bytes, over its limit of "
        f"{max_bytes} bytes. Rewrite it in under {max_bytes} bytes: keep the durable facts "
        "(the user's preferences, project context, relationships, technical decisions), "
        "merge duplicates, and prune stale or low-value facts. Keep its markdown form. "
        'Return JSON: {"memory": "<the compressed long-term memory>"}\n\n'
        f"## Current Long-term Memory\n{memory.strip()}\n\n"
        "Return only the JSON object."
    )
    return [
        ChatMessage("system", "You compress an AI agent's long-term memory. You answer in JSON."),
        ChatMessage("user", user),
    ]


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _memory_entry(agent: Agent) -> Entry | None:
    return Entry.objects.filter(agent=agent, user=AGENT, name=names.MEMORY).first()


def _why_not(agent: Agent, entry: Entry | None) -> str:
    """Why MEMORY.md needs no compressing (a skip reason), or "" when it does."""
    if entry is None or _size(entry.content) <= agent.config.max_memory_bytes:
        return "under_limit"
    last = EntryChange.objects.filter(entry=entry).order_by("-id").first()
    return "nothing_to_do" if last is not None and last.changed_by == COMPRESSOR else ""


def _call(agent: Agent, memory: str, trigger: str) -> _Proposal:
    config = agent.config
    limit = compression_tokens(config.max_memory_bytes)
    fitted = fit_prompt(
        lambda head, _: compression_prompt(memory=head, max_bytes=config.max_memory_bytes),
        messages=[],
        reference=memory,
        max_tokens=limit,
    )
    answer = ask(
        fitted.prompt,
        timeout=call_seconds(config, trigger=trigger, deadline=None),
        schema=COMPRESSION_SCHEMA,
        schema_name="compression",
        max_tokens=limit,
    )
    if not answer.ok:
        return _Proposal(answer, None, None, fallback_reason(answer))
    parsed = parse_llm_json_tiered(answer.text, FIELDS)
    text = parsed.value.get("memory") if parsed is not None else None
    if parsed is None or not isinstance(text, str) or not text.strip() or "\x00" in text:
        return _Proposal(answer, None, parsed.tier if parsed else None, "unparseable")
    text, echoed = Instructions.of(fitted.bare, [memory]).clean(text)
    if not text:
        return _Proposal(answer, None, parsed.tier, fallback_reason(answer, echoed=bool(echoed)))
    # A MEMORY.md over the model's context was shown by its head: the tail stays as it was.
    text = (text.strip() + "\n" + memory[len(fitted.reference) :]).strip() + "\n"
    if _size(text) >= _size(memory):
        return _Proposal(answer, None, parsed.tier, "not_smaller")
    return _Proposal(answer, text, parsed.tier)


def _write(log: RunLog, memory: str, proposal: _Proposal) -> Run:
    """Under the agent's lock: the proposal if it is usable and MEMORY.md is still what the
    model was shown; the run either way."""
    agent = log.agent
    details = {
        "memory": "unchanged",
        "bytes_before": _size(memory),
        "max_memory_bytes": agent.config.max_memory_bytes,
    }
    with transaction.atomic():
        lock_agent(agent.pk)
        current = _memory_entry(agent)
        if proposal.memory is None:
            status, reason = RunStatus.FALLBACK, proposal.reason
        elif current is None or current.content != memory:
            # Written during the call (agent, admin, consolidation): theirs stays, and that
            # write queued a compression of its own. The proposal is in the run's output.
            status, reason = RunStatus.SKIPPED, "superseded"
            details["memory"] = "conflict"
        else:
            details.update(_replace_memory(agent, proposal.memory))
            status, reason = RunStatus.OK, ""
        return log.record(
            status=status,
            reason=reason,
            answer=proposal.answer,
            tier=proposal.tier,
            details=details,
        )


def _replace_memory(agent: Agent, text: str) -> dict:
    """Write the compressed MEMORY.md; what the run's details say of it."""
    entry = entry_put(
        agent=agent,
        name=names.MEMORY,
        content=text,
        changed_by=COMPRESSOR,
        reason=f"compressed: over {agent.config.max_memory_bytes} bytes",
    )
    version = EntryChange.objects.filter(entry=entry).order_by("-id").first()
    assert version is not None  # entry_put recorded the change
    # previous_version: the EntryChange holding the text it replaced
    return {"memory": "updated", "bytes_after": _size(text), "previous_version": version.pk}


def memory_compress(
    *, agent: Agent, trigger: str, wait_until: float | None = None, raise_busy: bool = False
) -> list[Run]:
    """Compress the agent's MEMORY.md if it is over max_memory_bytes, in sequence with its
    other MEMORY.md writers (waiting for the lease until `wait_until`, time.monotonic()).
    Lease taken: Busy with `raise_busy`, else a skipped run (when someone asked)."""
    log = RunLog(agent, None, RunKind.COMPRESS, trigger)
    busy = f"agent {agent.pk} is writing MEMORY.md" if raise_busy else ""
    lease = LeaseTerms.of(
        log, agent_lease(agent.pk), deadline=None, wait_until=wait_until, busy=busy
    )

    def compress(_: object) -> list[Run]:
        entry = _memory_entry(agent)
        why = _why_not(agent, entry)
        if why or entry is None:  # no entry: "under_limit"
            return log.skip(Skip(why))
        return [_write(log, entry.content, _call(agent, entry.content, trigger))]

    return run_leased(log, lease, compress)


def compression_due(*, limit: int) -> list[int]:
    """Agents whose MEMORY.md is flagged over its limit with no compression run since its
    last write: the sweep's backstop for writes whose task never ran (broker down). A run
    that failed is not retried here; the next write queues one."""
    run_since = Run.objects.filter(
        agent=OuterRef("agent"), kind=RunKind.COMPRESS, created_at__gte=OuterRef("updated_at")
    )
    return list(
        Entry.objects.filter(name=names.MEMORY, needs_compression=True)
        .exclude(Exists(run_since))
        .order_by("updated_at")
        .values_list("agent_id", flat=True)[:limit]
    )
