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

from apps.search.backends.base import Scope, Vector
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
from apps.search.query import Unit
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

    def keyword(self, scope: Scope, units: Sequence[Unit]) -> list[Hit]:
        """Okapi BM25 over the GIN candidates, statistics per agent; ties by primary key."""
        return bm25.keyword(scope, units)

    def vector(
        self, scope: Scope, vector: Vector, *, model_name: str | None, exact: bool
    ) -> list[Hit]:
        """HNSW with iterative scans, or (exact) every row of the queryset: vectors.py."""
        return vectors.vector(
            scope, vector, model_name=model_name, exact=exact, ef_search=self.ef_search
        )

    def contains(
        self, scope: Scope, text: str, *, field: str, order_by: Sequence[str]
    ) -> list[Hit]:
        """Django's `icontains`: the newest rows first, else the pg_trgm GIN index on
        `UPPER(field::text)` (postgres/contains.py says which, when)."""
        return contains.contains(
            scope.corpus, agent_id=scope.agent_id, text=text, field=field, limit=scope.limit,
            queryset=scope.queryset, order_by=order_by,
        )  # fmt: skip
