"""The agent-facing composition endpoints: appends (with their lifecycle triggers), seed
001's memory tools, seed 002's get_context with seed 001's context manager, and the
workspace archive."""

from django.conf import settings
from django.http import HttpResponse
from ninja import Query, Router, Schema, Status

from apps.agents.config import within_ceiling
from apps.conversations.schemas import MessagePage, MessageQuery
from apps.conversations.selectors import messages_page, session_get
from apps.conversations.services import NewMessage
from apps.facts.schemas import save_out
from apps.learnings.schemas import hint_out
from apps.memory import selectors, services
from apps.memory.schemas import (
    AppendOut,
    ContextIn,
    ContextOut,
    ImportOut,
    MessagesIn,
    RecallIn,
    RecallOut,
    SaveIn,
    SaveOut,
    SearchIn,
    SearchOut,
)

router = Router(tags=["memory"])
sessions_router = Router(tags=["sessions"])


class ImportQuery(Schema):
    force: bool = False


# Both methods of /sessions/{id}/messages live on one router: Django resolves a path to the
# first router that declares it.
@sessions_router.get("/sessions/{session_id}/messages", response=MessagePage)
def list_messages(request, session_id: str, query: Query[MessageQuery]):
    """Every message of the session (compaction deletes none), filtered and paginated."""
    session = session_get(agent=request.auth, ref=session_id)
    page = messages_page(
        session=session,
        after=query.after,
        before=query.before,
        roles=query.role,
        cursor=query.cursor,
        limit=query.limit,
        descending=query.order == "desc",
    )
    return {"items": page.items, "next_cursor": page.next_cursor}


@sessions_router.post("/sessions/{session_id}/messages", response={201: AppendOut})
def append_messages(request, session_id: str, payload: MessagesIn):
    """Append one or many messages atomically: all are stored, or none. `lifecycle` names
    what the append set off in the background (summary, consolidate, compact)."""
    session = session_get(agent=request.auth, ref=session_id)
    done = services.messages_append_turn(
        session=session,
        messages=[
            NewMessage(
                role=m.role,
                content=m.content,
                name=m.name,
                tool_call_id=m.tool_call_id,
                tool_name=m.tool_name,
                tool_calls=m.tool_calls,
                created_at=m.created_at,
                importance=m.importance,
                metadata=m.metadata,
                idempotency_key=m.idempotency_key,
                is_error=m.is_error,
            )
            for m in payload.messages
        ],
        max_batch=min(
            settings.MEMORYHUB_MAX_BATCH_MESSAGES, session.agent.config.max_batch_messages
        ),
    )
    result = done.result
    return Status(
        201,
        {
            "created": result.created,
            "deduplicated": result.deduplicated,
            "messages": result.messages,
            "lifecycle": done.lifecycle,
            "hints": [hint_out(h) for h in done.hints],
        },
    )


COUNTER_NAME = "all-MiniLM-L6-v2 WordPiece (offline)"


@router.post("/memory/save", response=SaveOut)
def memory_save(request, payload: SaveIn):
    """Store a fact (dedup on write) and append it to today's log memory/YYYY-MM-DD.md."""
    result = services.memory_save(
        agent=request.auth,
        content=payload.content,
        category=payload.category,
        key=payload.key,
        importance=payload.importance,
        session_ref=payload.session_id,
        review=payload.review,
    )
    return {**save_out(result.saved), "log": result.log_name}


@router.post("/memory/recall", response=RecallOut)
def memory_recall(request, payload: RecallIn):
    """Semantic recall over facts: matching categories, scoped search, flat fallback.
    A `k` over the team's recall_k ceiling is 422."""
    within_ceiling(request.auth, "recall_k", payload.k, loc=["body", "k"])
    result = services.memory_recall(
        agent=request.auth, query=payload.query, category=payload.category, k=payload.k
    )
    return {
        "items": [
            {"fact": h.fact, "similarity": h.similarity, "score": h.score, "tier": h.tier}
            for h in result.hits
        ],
        "categories": result.categories,
        "fell_back": result.fell_back,
        "degraded": result.degraded,
    }


@router.post("/memory/search", response=SearchOut)
def memory_search(request, payload: SearchIn):
    """Hybrid search over workspace documents, entries, facts, learnings and HISTORY entries
    in one ranked list, each hit labelled with its `source`; keyword only, with `degraded:
    ["semantic"]`, when the query cannot be embedded. A `k` over the team's memory_search_k
    ceiling is 422."""
    within_ceiling(request.auth, "memory_search_k", payload.k, loc=["body", "k"])
    result = selectors.memory_search(agent=request.auth, query=payload.query, k=payload.k)
    return {"items": result.items, "degraded": result.degraded}


def _fact_out(part) -> dict:
    fact = part.fact
    return {
        "id": fact.pk,
        "category": fact.category.name,
        "key": fact.key,
        "value": fact.value,
        "importance": fact.importance,
        "salience": fact.salience,
        "tokens": part.tokens,
    }


def _message_out(c) -> dict:
    return {
        "id": c.message.id,
        "session_id": c.message.session_id,
        "role": c.message.role,
        "name": c.message.name,
        "content": c.content,
        "created_at": c.message.created_at,
        "importance": c.message.importance,
        "metadata": c.message.metadata,
        "tokens": c.tokens,
        "legs": c.legs,
        "similarity": c.similarity,
        "truncated": c.truncated,
    }


def _memory_message_out(c) -> dict:
    legs = c.search_legs or {}
    return {
        **_message_out(c),
        "hit": c.rank is not None,
        "rank": c.rank,
        "score": c.score,
        "search_legs": {leg: {"rank": r.rank, "score": r.score} for leg, r in legs.items()}
        if c.rank is not None
        else None,
    }


def _window_out(w) -> dict:
    return {
        "session_id": w.session.id,
        "session_key": w.session.key,
        "session_title": w.session.title,
        "date": w.date,
        "header": w.header,
        "rank": w.rank,
        "tokens": w.tokens,
        "messages": [_memory_message_out(c) for c in w.messages],
    }


def context_out(turn: services.ContextTurn) -> dict:
    """A ContextTurn as the ContextOut body."""
    ctx, usage = turn.context, turn.usage
    request = ctx.request
    system_parts = [p for p in ctx.parts if p.kind != "fact"]
    fact_parts = [p for p in ctx.parts if p.kind == "fact"]
    system_tokens = sum(p.tokens for p in system_parts)
    fact_tokens = sum(p.tokens for p in fact_parts)
    return {
        "session_id": request.session.id,
        "query": request.query,
        "system": {
            "parts": system_parts,
            "facts": [_fact_out(p) for p in fact_parts],
            "tokens": system_tokens + fact_tokens,
        },
        "messages": [_message_out(c) for c in ctx.messages],
        "memory": [_window_out(w) for w in ctx.memory],
        "tokens": {
            "system": system_tokens,
            "facts": fact_tokens,
            "messages": ctx.message_tokens,
            "memory": ctx.memory_tokens,
            "total": ctx.used_tokens,
        },
        "usage": {
            "max_tokens": request.max_tokens,
            "used_tokens": ctx.used_tokens,
            "required_tokens": ctx.required_tokens,
            "ratio": ctx.ratio,
            "flush_ratio": usage.flush_ratio,
            "compact_ratio": usage.compact_ratio,
            "flush_recommended": usage.flush_recommended,
            "compact_required": usage.compact_required,
            "context_window_tokens": usage.window,
            "usage_ratio": usage.ratio,
            "usage_tokens": usage.tokens,
            "measured_by": usage.measured_by,
            "counted": {
                "system": usage.system,
                "summary": usage.summary,
                "messages": usage.messages,
                "message_count": usage.message_count,
                "estimate": usage.estimate,
                "observed": usage.observed,
            },
            "action": usage.action,
            "action_status": turn.status,
            "runs": turn.runs,
        },
        "dropped": ctx.dropped,
        "warnings": ctx.warnings,
        "degraded": ctx.degraded,
        "token_counter": COUNTER_NAME,
    }


@router.post("/context", response=ContextOut)
def context(request, payload: ContextIn):
    """get_context: system part, tri-hybrid messages of the session, the memory leg's
    dated windows from the agent's whole history (ranked as /search ranks them) and token
    figures within a budget, with seed 001's context manager: usage is what the agent's
    model holds (documents, summary, every message after the latest compact marker, or the
    agent's observed_tokens) against context_window_tokens; at flush_ratio it flushes
    facts, at compact_ratio it writes, then compacts. A `max_tokens` over the team's
    context_max_tokens ceiling is 422."""
    within_ceiling(
        request.auth, "context_max_tokens", payload.max_tokens, loc=["body", "max_tokens"]
    )
    session = session_get(agent=request.auth, ref=payload.session_id)
    turn = services.context_turn(
        agent=request.auth,
        session=session,
        query=payload.query,
        max_tokens=payload.max_tokens,
        lifecycle=payload.lifecycle,
        observed_tokens=payload.observed_tokens,
    )
    return context_out(turn)


@router.get("/workspace/export")
def export_workspace(request):
    """The workspace folder (entries as files, seeds 001/004, with the generated HISTORY
    files) as a deterministic .tar.gz."""
    data = services.workspace_archive(agent=request.auth)
    response = HttpResponse(data, content_type="application/gzip")
    response["Content-Disposition"] = f'attachment; filename="{request.auth.slug}-workspace.tar.gz"'
    return response


def _content_length(request) -> int | None:
    try:
        return int(request.META.get("CONTENT_LENGTH") or "")
    except ValueError:
        return None


@router.post("/workspace/import", response={201: ImportOut})
def import_workspace(request, query: Query[ImportQuery]):
    """Load an exported archive (the raw request body); 409 on existing names unless force.
    History and learnings files become rows again (one already present is not doubled).
    413 past an import limit (the import_max_* settings), 422 for a malformed archive."""
    # Streamed from the request (never request.body): the limits apply as it is read.
    loaded = services.workspace_load(
        agent=request.auth, data=request, force=query.force, declared_size=_content_length(request)
    )
    result = loaded.entries
    return Status(
        201,
        {
            "created": result.created,
            "overwritten": result.overwritten,
            "names": result.names,
            "history_entries": loaded.history_entries,
            "learnings": loaded.learnings,
        },
    )
