"""/context: get_context, with its context manager."""

from apps.agents.config import within_ceiling
from apps.api.registry import Router, access
from apps.api.request import AuthedRequest
from apps.conversations.schemas import LegOut, quoted
from apps.conversations.selectors import session_get
from apps.lifecycle.schemas import RunOut
from apps.memory import services
from apps.memory.context.types import Candidate, MemoryWindow, Part
from apps.memory.schemas import (
    ContextFactOut,
    ContextIn,
    ContextMessageOut,
    ContextOut,
    DroppedOut,
    MemoryMessageOut,
    MemoryWindowOut,
    PartOut,
    SystemOut,
    TokensOut,
    UsageCountedOut,
    UsageOut,
)
from apps.people.selectors import read_audience

router = Router(tags=["memory"])

COUNTER_NAME = "all-MiniLM-L6-v2 WordPiece (offline)"


def _fact_out(part: Part) -> ContextFactOut:
    fact = part.fact
    assert fact is not None  # get_context's "fact" parts carry their fact
    return ContextFactOut(
        id=fact.pk,
        category=fact.category.name,
        key=fact.key,
        value=fact.value,
        importance=fact.importance,
        salience=fact.salience,
        tokens=part.counted,
    )


def _message_out(c: Candidate) -> ContextMessageOut:
    return ContextMessageOut(
        # The content cut to the budget, or with its dates resolved.
        **quoted(c.message, content=c.content).model_dump(),
        importance=c.message.importance,
        metadata=c.message.metadata,
        tokens=c.tokens,
        legs=c.legs,
        similarity=c.similarity,
        truncated=c.truncated,
    )


def _memory_message_out(c: Candidate) -> MemoryMessageOut:
    hit = c.rank is not None
    legs = c.search_legs or {}
    return MemoryMessageOut(
        **dict(_message_out(c)),
        hit=hit,
        rank=c.rank,
        score=c.score,
        search_legs={leg: LegOut(rank=r.rank, score=r.score) for leg, r in legs.items()}
        if hit
        else None,
    )


def _window_out(w: MemoryWindow) -> MemoryWindowOut:
    return MemoryWindowOut(
        session_id=w.session.id,
        session_key=w.session.key,
        session_title=w.session.title,
        date=w.date,
        header=w.header,
        rank=w.rank,
        tokens=w.tokens,
        messages=[_memory_message_out(c) for c in w.messages],
    )


def _usage_out(turn: services.ContextTurn) -> UsageOut:
    ctx, usage = turn.context, turn.usage
    return UsageOut(
        max_tokens=ctx.request.max_tokens,
        used_tokens=ctx.used_tokens,
        required_tokens=ctx.required_tokens,
        ratio=ctx.ratio,
        flush_ratio=usage.flush_ratio,
        compact_ratio=usage.compact_ratio,
        flush_recommended=usage.flush_recommended,
        compact_required=usage.compact_required,
        context_window_tokens=usage.window,
        usage_ratio=usage.ratio,
        usage_tokens=usage.tokens,
        measured_by=usage.measured_by,
        counted=UsageCountedOut(
            system=usage.system,
            summary=usage.summary,
            messages=usage.messages,
            message_count=usage.message_count,
            estimate=usage.estimate,
            observed=usage.observed,
        ),
        action=usage.action,
        action_status=turn.status,
        runs=[RunOut.model_validate(run) for run in turn.runs],
    )


def context_out(turn: services.ContextTurn) -> ContextOut:
    """A ContextTurn as the ContextOut body."""
    ctx = turn.context
    system_parts = [p for p in ctx.parts if p.kind != "fact"]
    fact_parts = [p for p in ctx.parts if p.kind == "fact"]
    system_tokens = sum(p.counted for p in system_parts)
    fact_tokens = sum(p.counted for p in fact_parts)
    return ContextOut(
        session_id=ctx.request.session.id,
        query=ctx.request.query,
        system=SystemOut(
            parts=[PartOut.model_validate(p) for p in system_parts],
            facts=[_fact_out(p) for p in fact_parts],
            tokens=system_tokens + fact_tokens,
        ),
        messages=[_message_out(c) for c in ctx.messages],
        memory=[_window_out(w) for w in ctx.memory],
        tokens=TokensOut(
            system=system_tokens,
            facts=fact_tokens,
            messages=ctx.message_tokens,
            memory=ctx.memory_tokens,
            total=ctx.used_tokens,
        ),
        usage=_usage_out(turn),
        dropped=[DroppedOut.model_validate(d) for d in ctx.dropped],
        warnings=ctx.warnings,
        degraded=ctx.degraded,
        token_counter=COUNTER_NAME,
    )


# The summary as first published (ninja derives it from the name the endpoint had).
@router.post("/context", response=ContextOut, summary="Context")
@access(read=True)
def get_context(request: AuthedRequest, payload: ContextIn) -> ContextOut:
    """get_context: system part, tri-hybrid messages of the session, the memory leg's
    dated windows from the agent's whole history (ranked as /search ranks them) and token
    figures within a budget, with the context manager: usage is what the agent's
    model holds (documents, summary, every message after the latest compact marker, or the
    agent's observed_tokens) against context_window_tokens; at flush_ratio it flushes
    facts, at compact_ratio it writes, then compacts. A `max_tokens` over the team's
    context_max_tokens ceiling is 422. With a read-only key the lifecycle is off: a read
    flushes and compacts nothing."""
    if request.key_scope.read_only:
        payload = payload.model_copy(update={"lifecycle": "off"})
    within_ceiling(
        request.auth, "context_max_tokens", payload.max_tokens, loc=["body", "max_tokens"]
    )
    session = session_get(agent=request.auth, ref=payload.session_id)
    read_audience(session=session, user=payload.user)  # 422 for another user than its own
    turn = services.context_turn(
        agent=request.auth, session=session, **payload.dict(exclude={"session_id", "user"})
    )
    return context_out(turn)
