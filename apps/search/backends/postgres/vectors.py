# ruff: noqa: S608 - identifiers come from model metadata; user values are parameters.
"""PostgreSQL vectors: pgvector HNSW (vector_cosine_ops) with iterative scans, or an exact
scan of a narrow queryset's rows."""

import math

from django.db import transaction

from apps.core.replicas import read_connection
from apps.search.backends.base import (
    Scope,
    TableSpec,
    Vector,
    exact_vector_hits,
    hnsw_index,
    restrict_sql,
    scored_hits,
)
from apps.search.ranking import Hit

# A scope of at most this many vectors is compared exactly. The HNSW graph is one per table,
# across agents, and keeps the entries of dead rows (updated, deleted, rolled back) until
# VACUUM: around many dead copies of a vector the walk may never reach the live one, and
# recall missed a user's own fact. 2,000 distances cost about what the graph walk does.
NARROW = 2000


def _index_name(spec: TableSpec) -> str:
    if spec.vector_column is None:
        raise ValueError(f"{spec.table} has no vector column")
    return hnsw_index(spec.table, spec.vector_column)


def vector_index_sql(spec: TableSpec) -> list[str]:
    name = _index_name(spec)
    return [
        f"CREATE INDEX IF NOT EXISTS {name} ON {spec.table} "
        f"USING hnsw ({spec.vector_column} vector_cosine_ops)"
    ]


def drop_vector_index_sql(spec: TableSpec) -> list[str]:
    return [f"DROP INDEX IF EXISTS {_index_name(spec)}"]


def vector(
    scope: Scope, vector: Vector, *, model_name: str | None, exact: bool, ef_search: int
) -> list[Hit]:
    """HNSW (vector_cosine_ops) with iterative scans, so agent filters keep k results.

    exact=True computes the distance for every row of the queryset instead: for a narrow
    queryset (one session) that is both exact and faster than walking the agent's graph.
    """
    literal = "[" + ",".join(repr(float(x)) for x in vector) + "]"
    if not all(math.isfinite(float(x)) for x in vector):
        return []
    if exact or _narrow(scope, model_name):
        similarity = "1 - ({column} <=> %s::vector)"
        return exact_vector_hits(scope, similarity, literal, model_name=model_name)
    return _vector_hnsw(scope, literal, model_name, ef_search)


def _scope_rows(scope: Scope, model_name: str | None) -> tuple[str, list]:
    """`FROM <table> m WHERE <the scope's rows with a vector labelled model_name>` and its
    parameters (the agent first)."""
    corpus = scope.corpus
    vector_field, model_field = corpus.vector_fields
    model_sql, model_params = "", []
    if model_name is not None:
        model_sql = f" AND m.{corpus.column(model_field)} = %s"
        model_params = [model_name]
    extra, params = restrict_sql(scope.queryset, "m", corpus.pk_column)
    sql = (
        f"FROM {corpus.table} m WHERE m.{corpus.agent_column} = %s "
        f"AND m.{corpus.column(vector_field)} IS NOT NULL{model_sql}{extra}"
    )
    return sql, [scope.agent_id, *model_params, *params]


def _narrow(scope: Scope, model_name: str | None) -> bool:
    """Whether the scope holds at most NARROW vectors (an indexed probe of NARROW + 1 rows)."""
    rows, params = _scope_rows(scope, model_name)
    with read_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM (SELECT 1 {rows} LIMIT %s) few", [*params, NARROW + 1]
        )
        (count,) = cursor.fetchone()
    return count <= NARROW


def _vector_hnsw(scope: Scope, literal: str, model_name: str | None, ef_search: int) -> list[Hit]:
    corpus, limit = scope.corpus, scope.limit
    pk, v = corpus.pk_column, corpus.column(corpus.vector_fields[0])
    rows, params = _scope_rows(scope, model_name)
    sql = f"SELECT m.{pk}, 1 - (m.{v} <=> %s::vector) {rows} ORDER BY m.{v} <=> %s::vector LIMIT %s"
    # The connection first: inside the atomic block on the primary, the read would stay there.
    conn = read_connection()
    with transaction.atomic(using=conn.alias), conn.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.ef_search = {max(ef_search, limit)}")
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(sql, [literal, *params, literal, limit])
        rows = cursor.fetchall()
    hits = scored_hits(corpus, rows, "vector")
    # relaxed_order may return near-ties slightly out of order; restore exact order.
    hits.sort(key=lambda h: -h.score)
    return hits
