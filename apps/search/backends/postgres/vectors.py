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
    exact_candidates_sql,
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
_SIMILARITY = "1 - ({column} <=> %s::vector)"


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
    if exact:
        return exact_vector_hits(scope, _SIMILARITY, literal, model_name=model_name)
    hits = _exact_if_narrow(scope, literal, model_name)
    return hits if hits is not None else _vector_hnsw(scope, literal, model_name, ef_search)


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


def _exact_if_narrow(scope: Scope, literal: str, model_name: str | None) -> list[Hit] | None:
    """The exact top k when the scope holds at most NARROW vectors, else None: one statement
    reads at most NARROW + 1 of its rows once and compares them only if that is all of them
    (a probe and then the scan cost a round trip and a second read of the same rows)."""
    corpus = scope.corpus
    inner, params = exact_candidates_sql(
        corpus, scope.queryset, agent_id=scope.agent_id, model_name=model_name
    )
    score = _SIMILARITY.format(column=f"c.{corpus.vector_field}")
    sql = (
        f"WITH c AS MATERIALIZED (SELECT * FROM ({inner}) r LIMIT %s), "
        f"n AS (SELECT count(*) AS n FROM c) "
        f"SELECT n.n, q.pk, q.score FROM n LEFT JOIN LATERAL (SELECT c.pk, {score} AS score "
        f"FROM c WHERE n.n <= %s ORDER BY score DESC, c.pk LIMIT %s) q ON true"
    )
    with read_connection().cursor() as cursor:
        cursor.execute(sql, [*params, NARROW + 1, literal, NARROW, scope.limit])
        rows = cursor.fetchall()
    if rows[0][0] > NARROW:
        return None
    return scored_hits(corpus, [(pk, sc) for _n, pk, sc in rows if pk is not None], "vector")


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
