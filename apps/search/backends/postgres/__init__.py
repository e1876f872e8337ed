"""PostgreSQL: BM25 computed from maintained term statistics, pgvector HNSW for vectors.

`ts_rank` is not BM25, so side tables per corpus, kept exact by triggers, hold what BM25
needs (docs/search.md). The package splits by concern:

- `bm25_ddl`: the text search configuration, the side tables and their triggers;
- `bm25`: BM25 queries over those statistics;
- `vectors`: the HNSW index and the nearest-neighbour queries (HNSW or exact);
- `contains`: the pg_trgm GIN index serving substring search.

The migration operations (apps/search/operations.py) use this package's DDL functions:
`keyword_index_sql`, `drop_keyword_index_sql`, `vector_index_sql`, `drop_vector_index_sql`,
`contains_index_sql`, `drop_contains_index_sql`.
"""

from collections.abc import Sequence

from django.db.models import QuerySet

from apps.search.backends.postgres import bm25, contains, vectors
from apps.search.backends.postgres.bm25_ddl import (
    CONFIG,
    CONFIG_SQL,
    STEM,
    drop_keyword_index_sql,
    keyword_index_sql,
)
from apps.search.backends.postgres.contains import contains_index_sql, drop_contains_index_sql
from apps.search.backends.postgres.vectors import drop_vector_index_sql, vector_index_sql
from apps.search.corpora import Corpus
from apps.search.ranking import Hit

__all__ = [
    "CONFIG",
    "CONFIG_SQL",
    "STEM",
    "PostgresBackend",
    "contains_index_sql",
    "drop_contains_index_sql",
    "drop_keyword_index_sql",
    "drop_vector_index_sql",
    "keyword_index_sql",
    "vector_index_sql",
]


class PostgresBackend:
    vendor = "postgresql"
    ef_search = 100  # HNSW candidate list; 40 (pgvector's default) loses recall at k = 50

    def keyword(
        self,
        corpus: Corpus,
        *,
        agent_id: int,
        query: str,
        limit: int,
        queryset: QuerySet | None = None,
    ) -> list[Hit]:
        """Okapi BM25 over the GIN candidates, statistics per agent; ties by primary key."""
        return bm25.keyword(corpus, agent_id=agent_id, query=query, limit=limit, queryset=queryset)

    def vector(
        self,
        corpus: Corpus,
        *,
        agent_id: int,
        vector: Sequence[float],
        limit: int,
        model_name: str | None = None,
        queryset: QuerySet | None = None,
        exact: bool = False,
    ) -> list[Hit]:
        """HNSW (vector_cosine_ops) with iterative scans, so agent filters keep k results.

        exact=True computes the distance for every row of the queryset instead: for a narrow
        queryset (one session) that is both exact and faster than walking the agent's graph.
        """
        return vectors.vector(
            corpus,
            agent_id=agent_id,
            vector=vector,
            limit=limit,
            ef_search=self.ef_search,
            model_name=model_name,
            queryset=queryset,
            exact=exact,
        )

    def contains(
        self,
        corpus: Corpus,
        *,
        agent_id: int,
        text: str,
        field: str,
        limit: int,
        queryset: QuerySet | None = None,
        order_by: Sequence[str] = ("-pk",),
    ) -> list[Hit]:
        """Django's `icontains`: the newest rows first, else the pg_trgm GIN index on
        `UPPER(field::text)` (postgres/contains.py says which, when)."""
        return contains.contains(
            corpus,
            agent_id=agent_id,
            text=text,
            field=field,
            limit=limit,
            queryset=queryset,
            order_by=order_by,
        )
