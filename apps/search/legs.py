"""Generic search legs over any registered corpus: the functions other apps call.

Every function is scoped to one agent; `queryset` (of the corpus model) narrows the
candidates further. Hits are `ranking.Hit(object_id, score, leg)`, best first.
"""

from collections.abc import Sequence

from django.db.models import QuerySet

from apps.providers.embeddings import get_embedder
from apps.search.backends import get_backend
from apps.search.corpora import Corpus, get_corpus, vector_label
from apps.search.ranking import RRF_K, FusedHit, Hit, rrf


def _corpus(corpus: Corpus | str) -> Corpus:
    return get_corpus(corpus) if isinstance(corpus, str) else corpus


def keyword_search(
    corpus: Corpus | str, *, agent_id: int, query: str, limit: int, queryset: QuerySet | None = None
) -> list[Hit]:
    """BM25 (k1 1.2, b 0.75), OR over the query's words; `"phrases"` and `prefix*` work."""
    return get_backend().keyword(
        _corpus(corpus), agent_id=agent_id, query=query, limit=limit, queryset=queryset
    )


def vector_search(
    corpus: Corpus | str,
    *,
    agent_id: int,
    limit: int,
    query: str | None = None,
    vector: Sequence[float] | None = None,
    queryset: QuerySet | None = None,
    exact: bool = False,
) -> list[Hit]:
    """Cosine similarity (score in [-1, 1]) to `vector`, or to the embedded `query`.

    Only vectors labelled with the configured embedder (`corpora.vector_label`, stored in the
    corpus's model_field) are compared. `exact=True` scans the queryset's rows instead of the
    ANN index: use it when the queryset is narrow (one session's messages).
    Raises EmbeddingError when the query cannot be embedded.
    """
    c = _corpus(corpus)
    embedder = get_embedder()
    if vector is None:
        if query is None:
            raise ValueError("vector_search needs a query or a vector")
        vector = embedder.embed([query])[0]
    return get_backend().vector(
        c,
        agent_id=agent_id,
        vector=vector,
        limit=limit,
        model_name=vector_label(embedder) if c.model_field else None,
        queryset=queryset,
        exact=exact,
    )


def contains_search(
    corpus: Corpus | str,
    *,
    agent_id: int,
    text: str,
    limit: int,
    field: str | None = None,
    queryset: QuerySet | None = None,
    order_by: Sequence[str] = ("-pk",),
) -> list[Hit]:
    """Exact, case-insensitive substring of `field` (default: the last text field); score 1.0."""
    c = _corpus(corpus)
    field = field or c.text_fields[-1]
    qs = queryset if queryset is not None else c.model._default_manager.all()
    qs = qs.filter(**{c.agent_field + "_id": agent_id, f"{field}__icontains": text})
    pks = qs.order_by(*order_by).values_list("pk", flat=True)[:limit]
    return [Hit(object_id=pk, score=1.0, leg="contains") for pk in pks]


def hybrid_search(
    corpus: Corpus | str,
    *,
    agent_id: int,
    query: str,
    limit: int,
    depth: int = 50,
    queryset: QuerySet | None = None,
    rrf_k: int = RRF_K,
) -> list[FusedHit]:
    """Reciprocal-rank fusion of the BM25 and vector legs (each `depth` deep), best first."""
    depth = max(depth, limit)
    bm25 = keyword_search(corpus, agent_id=agent_id, query=query, limit=depth, queryset=queryset)
    dense = vector_search(corpus, agent_id=agent_id, query=query, limit=depth, queryset=queryset)
    return rrf(bm25, dense, k=rrf_k)[:limit]
