"""GET /search/status: the embedding backlog of every corpus, for the calling agent."""

from ninja import Router

from apps.providers.embeddings import vector_label
from apps.search.corpora import all_corpora
from apps.search.embedding import backlog
from apps.search.schemas import EmbeddingStatusOut
from apps.search.tokens import token_backlog

router = Router(tags=["search"])


@router.get("/search/status", response=EmbeddingStatusOut)
def search_status(request):
    """Per corpus, how many of the agent's rows are embedded, stale, pending or failed, and
    for corpora that keep token states, how many have them and how many wait for them.

    The top-level counts are the messages corpus's (kept from the first version of this
    endpoint). Keyword-only corpora are listed with `vectors: false` and zero counts.
    """
    corpora = {}
    for corpus in all_corpora():
        if corpus.embeds:
            counts = backlog(corpus=corpus.name, agent_id=request.auth.id)
            tokens = token_backlog(
                corpus=corpus.name, agent_id=request.auth.id, embedded=counts.embedded
            )
            corpora[corpus.name] = {"vectors": True, **_counts(counts), "token_states": tokens}
        else:
            corpora[corpus.name] = {"vectors": False, "embedded": 0, "stale": 0, "pending": 0,
                                    "failed": 0, "token_states": None}  # fmt: skip
    messages = {k: v for k, v in corpora["messages"].items() if k != "vectors"}
    return {"model": vector_label(), **messages, "corpora": corpora}


def _counts(b) -> dict:
    return {"embedded": b.embedded, "stale": b.stale, "pending": b.pending, "failed": b.failed}
