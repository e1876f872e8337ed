"""What every search backend provides, and the table naming both the backends and the
migration operations (apps/search/operations.py) agree on."""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Model, QuerySet

from apps.core.meta import concrete_field, field_column, pk_type
from apps.core.replicas import read_connection
from apps.search.corpora import Corpus
from apps.search.query import Unit
from apps.search.ranking import Hit

# A query vector: a numpy array (as embed_query returns it) or plain floats.
Vector = Sequence[float] | np.ndarray


@dataclass(frozen=True)
class TableSpec:
    """A table's columns as the index DDL needs them (built from a possibly historical model)."""

    table: str
    pk_column: str
    pk_type: str
    agent_column: str
    text_columns: tuple[str, ...] = ()
    vector_column: str | None = None
    dimensions: int | None = None


def table_spec(
    model: type[Model],
    connection: BaseDatabaseWrapper,
    *,
    agent_field: str,
    text_fields: Sequence[str] = (),
    vector_field: str | None = None,
) -> TableSpec:
    """The TableSpec of a model (a live one, or a historical one inside a migration)."""
    meta = model._meta
    vector = concrete_field(model, vector_field) if vector_field else None
    return TableSpec(
        table=meta.db_table,
        pk_column=field_column(model, "pk"),
        pk_type=pk_type(model, connection),
        agent_column=field_column(model, agent_field),
        text_columns=tuple(field_column(model, f) for f in text_fields),
        vector_column=vector.column if vector is not None else None,
        dimensions=getattr(vector, "dimensions", None),
    )


def fts_table(table: str) -> str:
    return f"{table}_fts"


def vec_table(table: str) -> str:
    return f"{table}_vec"


def bm25_tables(table: str) -> tuple[str, str, str]:
    """PostgreSQL: per-document tsvectors, per-(agent, term) df, per-agent N and total length."""
    return f"{table}_bm25doc", f"{table}_bm25term", f"{table}_bm25agent"


def postings_table(table: str) -> str:
    """PostgreSQL: (agent_id, term, doc_id) -> tf, len; the term-query scoring index."""
    return f"{table}_bm25post"


def hnsw_index(table: str, column: str) -> str:
    return f"{table}_{column}_hnsw"[:63]


def trigram_index(table: str, column: str) -> str:
    """The contains index of a column: an FTS5 trigram table (SQLite), a GIN index (PG)."""
    return f"{table}_{column}_trgm"[:63]


@dataclass(frozen=True)
class Scope:
    """Where a leg searches: the agent's rows of a corpus, narrowed further by `queryset` (of
    the corpus model: session, role, time and metadata filters), at most `limit` hits."""

    corpus: Corpus
    agent_id: int
    limit: int
    queryset: QuerySet | None = None


class SearchBackend(Protocol):
    """Search legs over a registered corpus, always scoped to one agent (a `Scope`).

    Hits come back best first; scores are the leg's own (BM25 > 0, cosine similarity in
    [-1, 1], 1.0 for contains).
    """

    vendor: str

    def keyword(self, scope: Scope, units: Sequence[Unit]) -> list[Hit]:
        """BM25 (k1 1.2, b 0.75) over the corpus's text fields, OR over `units` (never [])."""
        ...

    def vector(
        self, scope: Scope, vector: Vector, *, model_name: str | None, exact: bool
    ) -> list[Hit]:
        """Nearest neighbours by cosine among the vectors labelled `model_name` (any, if None);
        exact=True scans the scope's rows instead of the ANN index (for narrow querysets)."""
        ...

    def contains(
        self, scope: Scope, text: str, *, field: str, order_by: Sequence[str]
    ) -> list[Hit]:
        """The rows whose `field` contains `text` (Django's `icontains`), in `order_by`."""
        ...


# Any: rows as the DB-API cursor returns them
def scored_hits(corpus: Corpus, rows: Iterable[Sequence[Any]], leg: str) -> list[Hit]:
    """Hits of rows that begin (pk, score), the pk as the model's Python value."""
    to_python = corpus.model._meta.pk.to_python
    return [Hit(object_id=to_python(row[0]), score=float(row[1]), leg=leg) for row in rows]


# Any: SQL parameters, as Query.sql_with_params gives them
def restrict_sql(queryset: QuerySet | None, alias: str, pk_column: str) -> tuple[str, list[Any]]:
    """` AND alias.pk IN (<queryset's pks>)`, or nothing without a queryset."""
    if queryset is None:
        return "", []
    sql, params = queryset.order_by().values("pk").query.sql_with_params()
    return f" AND {alias}.{pk_column} IN ({sql})", list(params)


def agent_rows(corpus: Corpus, queryset: QuerySet | None, *, agent_id: int) -> QuerySet:
    """The agent's rows of the corpus in `queryset` (in the whole model without one)."""
    qs = queryset if queryset is not None else corpus.model._default_manager.all()
    return qs.filter(**{f"{corpus.agent_field}_id": agent_id})


def substring_queryset(
    corpus: Corpus, queryset: QuerySet | None, *, agent_id: int, field: str, text: str
) -> QuerySet:
    """The agent's rows in `queryset` whose `field` contains `text`: Django's `icontains`,
    the predicate both backends answer exactly (their indexes only find candidates)."""
    qs = agent_rows(corpus, queryset, agent_id=agent_id)
    return qs.filter(**{f"{field}__icontains": text})


def exact_candidates_sql(
    corpus: Corpus, queryset: QuerySet | None, *, agent_id: int, model_name: str | None
) -> tuple[str, list[Any]]:  # Any: SQL parameters, as Query.sql_with_params gives them
    """SQL selecting the agent's rows in `queryset` that have a vector, as columns `pk` and
    the vector field's name.

    Selecting *from* the queryset, rather than testing `pk IN (queryset)`, lets the database
    drive the scan from the queryset's own index (e.g. one session's messages).
    """
    vector_field = corpus.vector_field
    if vector_field is None:
        raise ValueError(f"corpus {corpus.name!r} has no vectors")
    qs = agent_rows(corpus, queryset, agent_id=agent_id)
    qs = qs.filter(**{f"{vector_field}__isnull": False})
    if model_name is not None and corpus.model_field:
        qs = qs.filter(**{corpus.model_field: model_name})
    sql, params = qs.order_by().values_list("pk", vector_field).query.sql_with_params()
    return sql, list(params)


def exact_vector_hits(
    scope: Scope,
    similarity: str,
    vector: Any,  # Any: the vendor's vector parameter (a numpy array or pgvector's Vector)
    *,
    model_name: str | None,
) -> list[Hit]:
    """Every vector of the scope's rows (labelled `model_name`, if given) compared with
    `vector`: the best `limit`, ties by pk. `similarity` is the vendor's SQL for the cosine
    similarity of `{column}` to the one parameter it takes, `vector`."""
    corpus = scope.corpus
    inner, params = exact_candidates_sql(
        corpus, scope.queryset, agent_id=scope.agent_id, model_name=model_name
    )
    score = similarity.format(column=f"q.{corpus.vector_field}")
    # Ordering by the computed score (not by the distance operator) keeps an ANN index out
    # of the plan.
    sql = f"SELECT q.pk, {score} AS score FROM ({inner}) q ORDER BY score DESC, q.pk LIMIT %s"  # noqa: S608
    with read_connection().cursor() as cursor:
        cursor.execute(sql, [vector, *params, scope.limit])
        rows = cursor.fetchall()
    return scored_hits(corpus, rows, "vector")
