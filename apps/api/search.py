"""/search (the agent's messages: semantic, keyword, hybrid or contains) and /search/status
(the embedding backlog of every corpus)."""

from apps.api.registry import Router, access
from apps.api.request import AuthedRequest
from apps.api.sessions import session_of
from apps.conversations.models import Message
from apps.conversations.schemas import (
    ChatSearchHitOut,
    ChatSearchIn,
    ChatSearchMessageOut,
    ChatSearchOut,
    ChatSearchWindowOut,
    LegOut,
    quoted,
)
from apps.conversations.selectors import SearchHit, as_utc, message_search
from apps.people.selectors import read_audience
from apps.providers.embeddings import vector_label
from apps.search.corpora import all_corpora
from apps.search.schemas import CorpusBacklogOut, EmbeddingStatusOut, TokenStatesOut
from apps.search.selectors import Backlog, backlog
from apps.search.token_states import TokenBacklog, token_backlog

router = Router(tags=["search"])


def _search_message(m: Message) -> ChatSearchMessageOut:
    return ChatSearchMessageOut(**quoted(m).model_dump(), metadata=m.metadata)


def _hit_out(h: SearchHit) -> ChatSearchHitOut:
    return ChatSearchHitOut(
        **dict(_search_message(h.message)),
        score=h.score,
        legs={leg: LegOut(rank=r.rank, score=r.score) for leg, r in h.legs.items()},
        window=h.window,
    )


@router.post("/search", response=ChatSearchOut)
@access(read=True)
def search_chat_history(request: AuthedRequest, payload: ChatSearchIn) -> ChatSearchOut:
    """Search the agent's messages: semantic (default), keyword, hybrid or contains.

    When the query cannot be embedded, semantic and hybrid answer from BM25 with
    `degraded: ["semantic"]`."""
    roles = [payload.role] if isinstance(payload.role, str) else payload.role
    session = session_of(request, payload.session_id)
    result = message_search(
        audience=read_audience(session=session, user=payload.user, all_users=payload.all_users),
        agent=request.auth,
        query=payload.query,
        mode=payload.mode,
        k=payload.k,
        session=session,
        roles=roles,
        after=as_utc(payload.after) if payload.after else None,
        before=as_utc(payload.before) if payload.before else None,
        metadata=payload.metadata,
        min_score=payload.min_score,
    )
    return ChatSearchOut(
        query=result.query,
        mode=payload.mode,  # the mode searched (result.mode echoes it)
        degraded=result.degraded,
        hits=[_hit_out(h) for h in result.hits],
        windows=[
            ChatSearchWindowOut(
                session_id=w.session_id, messages=[_search_message(m) for m in w.messages]
            )
            for w in result.windows
        ],
    )


@router.get("/search/status", response=EmbeddingStatusOut)
def search_status(request: AuthedRequest) -> EmbeddingStatusOut:
    """Per corpus, how many of the agent's rows are embedded, stale, pending or failed, and
    for corpora that keep token states, how many have them and how many wait for them.

    The top-level counts are the messages corpus's (kept from the first version of this
    endpoint). Keyword-only corpora are listed with `vectors: false` and zero counts.
    """
    corpora: dict[str, CorpusBacklogOut] = {}
    for corpus in all_corpora():
        if corpus.embeds:
            counts = backlog(corpus=corpus.name, agent_id=request.auth.id)
            tokens = token_backlog(
                corpus=corpus.name, agent_id=request.auth.id, embedded=counts.embedded
            )
            corpora[corpus.name] = _corpus_out(counts, tokens)
        else:
            corpora[corpus.name] = CorpusBacklogOut(
                vectors=False, embedded=0, stale=0, pending=0, failed=0, token_states=None
            )
    messages = corpora["messages"]
    return EmbeddingStatusOut(
        model=vector_label(),
        embedded=messages.embedded,
        stale=messages.stale,
        pending=messages.pending,
        failed=messages.failed,
        token_states=messages.token_states,
        corpora=corpora,
    )


def _corpus_out(b: Backlog, tokens: TokenBacklog | None) -> CorpusBacklogOut:
    return CorpusBacklogOut(
        vectors=True,
        embedded=b.embedded,
        stale=b.stale,
        pending=b.pending,
        failed=b.failed,
        token_states=TokenStatesOut.model_validate(tokens) if tokens else None,
    )
