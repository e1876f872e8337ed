# ruff: noqa: S608 - identifiers come from model metadata; user values are parameters.
"""PostgreSQL vectors: pgvector HNSW (vector_cosine_ops) with iterative scans, or an exact
scan of a narrow queryset's rows."""

import math
from collections.abc import Sequence

from django.db import connection, transaction
from django.db.models import QuerySet

from apps.search.backends.base import TableSpec, exact_candidates_sql, hnsw_index, restrict_sql
from apps.search.corpora import Corpus
from apps.search.ranking import Hit


def vector_index_sql(spec: TableSpec) -> list[str]:
    name = hnsw_index(spec.table, spec.vector_column)
    return [
        f"CREATE INDEX IF NOT EXISTS {name} ON {spec.table} "
        f"USING hnsw ({spec.vector_column} vector_cosine_ops)"
    ]


def drop_vector_index_sql(spec: TableSpec) -> list[str]:
    return [f"DROP INDEX IF EXISTS {hnsw_index(spec.table, spec.vector_column)}"]


def vector(
    corpus: Corpus,
    *,
    agent_id: int,
    vector: Sequence[float],
    limit: int,
    ef_search: int,
    model_name: str | None = None,
    queryset: QuerySet | None = None,
    exact: bool = False,
) -> list[Hit]:
    """HNSW (vector_cosine_ops) with iterative scans, so agent filters keep k results.

    exact=True computes the distance for every row of the queryset instead: for a narrow
    queryset (one session) that is both exact and faster than walking the agent's graph.
    """
    literal = "[" + ",".join(repr(float(x)) for x in vector) + "]"
    if not all(math.isfinite(float(x)) for x in vector):
        return []
    if exact:
        return _vector_exact(corpus, agent_id, literal, limit, model_name, queryset)
    return _vector_hnsw(corpus, agent_id, literal, limit, model_name, queryset, ef_search)


def _vector_hnsw(corpus, agent_id, literal, limit, model_name, queryset, ef_search) -> list[Hit]:
    t, pk, a = corpus.table, corpus.pk_column, corpus.agent_column
    v = corpus.column(corpus.vector_field)
    model_sql, model_params = "", []
    if model_name is not None and corpus.model_field:
        model_sql = f" AND m.{corpus.column(corpus.model_field)} = %s"
        model_params = [model_name]
    extra, params = restrict_sql(queryset, "m", pk)
    sql = (
        f"SELECT m.{pk}, 1 - (m.{v} <=> %s::vector) FROM {t} m "
        f"WHERE m.{a} = %s AND m.{v} IS NOT NULL{model_sql}{extra} "
        f"ORDER BY m.{v} <=> %s::vector LIMIT %s"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.ef_search = {max(ef_search, limit)}")
        cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        cursor.execute(sql, [literal, agent_id, *model_params, *params, literal, limit])
        rows = cursor.fetchall()
    hits = [Hit(object_id=r[0], score=float(r[1]), leg="vector") for r in rows]
    # relaxed_order may return near-ties slightly out of order; restore exact order.
    hits.sort(key=lambda h: -h.score)
    return hits


def _vector_exact(corpus, agent_id, literal, limit, model_name, queryset) -> list[Hit]:
    inner, params = exact_candidates_sql(corpus, queryset, agent_id=agent_id, model_name=model_name)
    # Ordering by the computed score (not by `<=>`) keeps the HNSW index out of the plan.
    sql = (
        f"SELECT q.pk, 1 - (q.{corpus.vector_field} <=> %s::vector) AS score "
        f"FROM ({inner}) q ORDER BY score DESC, q.pk LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [literal, *params, limit])
        rows = cursor.fetchall()
    return [Hit(object_id=r[0], score=float(r[1]), leg="vector") for r in rows]
