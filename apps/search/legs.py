"""The search legs over any registered corpus: keyword (BM25), vector, contains.

Every leg is scoped to one agent; `queryset` (of the corpus model) narrows the candidates
further. Hits are `ranking.Hit(object_id, score, leg, corpus)`, best first. Hybrid ranking
over one or several corpora is apps/search/hybrid.py.
"""

from collections.abc import Sequence
from dataclasses import replace

from django.db.models import QuerySet

from apps.providers.embeddings import embed_query, vector_label
from apps.search.backends import get_backend
from apps.search.backends.base import Scope, Vector
from apps.search.corpora import Corpus, get_corpus
from apps.search.query import parse
from apps.search.ranking import Hit


def _corpus(corpus: Corpus | str) -> Corpus:
    return get_corpus(corpus) if isinstance(corpus, str) else corpus


def _named(corpus: Corpus, hits: list[Hit]) -> list[Hit]:
    return [replace(h, corpus=corpus.name) for h in hits]


def keyword_search(
    corpus: Corpus | str, *, agent_id: int, query: str, limit: int, queryset: QuerySet | None = None
) -> list[Hit]:
    """BM25 (k1 1.2, b 0.75), OR over the query's words; `"phrases"` and `prefix*` work."""
    c = _corpus(corpus)
    units = parse(query)
    if not units:
        return []  # no word to search for, on either backend
    hits = get_backend().keyword(Scope(c, agent_id, limit, queryset), units)
    return _named(c, hits)


def vector_search(
    corpus: Corpus | str,
    *,
    agent_id: int,
    limit: int,
    query: str | None = None,
    vector: Vector | None = None,
    queryset: QuerySet | None = None,
    exact: bool = False,
) -> list[Hit]:
    """Cosine similarity (score in [-1, 1]) to `vector`, or to the embedded `query`.

    Only vectors labelled with the configured embedder are compared. `exact=True` scans the
    queryset's rows instead of the ANN index: use it when the queryset is narrow (one
    session's messages). Raises EmbeddingError when the query cannot be embedded.
    """
    c = _corpus(corpus)
    if vector is None:
        if query is None:
            raise ValueError("vector_search needs a query or a vector")
        vector = embed_query(query)
    model_name = vector_label() if c.model_field else None
    scope = Scope(c, agent_id, limit, queryset)
    hits = get_backend().vector(scope, vector, model_name=model_name, exact=exact)
    return _named(c, hits)


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
    """Exact, case-insensitive substring of `field` (default: the last text field); score 1.0.

    The rows are Django's `icontains` on each backend (SQLite folds ASCII case only), in
    `order_by`; a contains index on the field (AddContainsIndex) only makes it faster.
    """
    c = _corpus(corpus)
    scope = Scope(c, agent_id, limit, queryset)
    hits = get_backend().contains(scope, text, field=field or c.text_fields[-1], order_by=order_by)
    return _named(c, hits)
