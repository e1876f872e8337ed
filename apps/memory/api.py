"""Seed 001's memory tools as JSON endpoints, and seed 002's get_context."""

from ninja import Router

from apps.conversations.selectors import session_get
from apps.facts.schemas import save_out
from apps.memory import selectors, services
from apps.memory.context import Context, get_context
from apps.memory.schemas import (
    ContextIn,
    ContextOut,
    RecallIn,
    RecallOut,
    SaveIn,
    SaveOut,
    SearchIn,
    SearchOut,
)

router = Router(tags=["memory"])

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
    )
    return {**save_out(result.saved), "log": result.log_name}


@router.post("/memory/recall", response=RecallOut)
def memory_recall(request, payload: RecallIn):
    """Semantic recall over facts: matching categories, scoped search, flat fallback."""
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
    }


@router.post("/memory/search", response=SearchOut)
def memory_search(request, payload: SearchIn):
    """Hybrid search over workspace documents, entries and facts in one ranked list."""
    hits = selectors.memory_search(agent=request.auth, query=payload.query, k=payload.k)
    return {"items": hits}


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
        "role": c.message.role,
        "name": c.message.name,
        "content": c.content,
        "created_at": c.message.created_at,
        "importance": c.message.importance,
        "tokens": c.tokens,
        "legs": c.legs,
        "similarity": c.similarity,
        "truncated": c.truncated,
    }


def context_out(ctx: Context) -> dict:
    """A Context as the ContextOut body."""
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
        "tokens": {
            "system": system_tokens,
            "facts": fact_tokens,
            "messages": ctx.message_tokens,
            "total": ctx.used_tokens,
        },
        "usage": {
            "max_tokens": request.max_tokens,
            "used_tokens": ctx.used_tokens,
            "required_tokens": ctx.required_tokens,
            "ratio": ctx.ratio,
            "flush_ratio": request.config.flush_ratio,
            "compact_ratio": request.config.compact_ratio,
            "flush_recommended": ctx.flush_recommended,
            "compact_required": ctx.compact_required,
        },
        "dropped": ctx.dropped,
        "warnings": ctx.warnings,
        "token_counter": COUNTER_NAME,
    }


@router.post("/context", response=ContextOut)
def context(request, payload: ContextIn):
    """get_context: system part, tri-hybrid messages and token figures within a budget."""
    session = session_get(agent=request.auth, ref=payload.session_id)
    ctx = get_context(
        agent=request.auth, session=session, query=payload.query, max_tokens=payload.max_tokens
    )
    return context_out(ctx)
