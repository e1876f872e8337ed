# ruff: noqa: S608 - identifiers come from model metadata; user values are parameters.
"""SQLite: FTS5 external-content tables (BM25 from bm25(), rescaled to Lucene's idf per
query unit), sqlite-vec vec0 for vectors, FTS5 trigram tables proposing the candidates of
contains.

The side tables are keyed by the source table's rowid and kept in sync by triggers. A
table rebuild (VACUUM renumbering rowids of tables without an INTEGER PRIMARY KEY, or a
Django migration that remakes the table) needs `rebuild_sql` to be run afterwards.
"""

import json
import math
from collections.abc import Collection, Sequence

import numpy as np
from django.db.backends.utils import CursorWrapper
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from apps.core.replicas import read_connection
from apps.search import query as q
from apps.search import trigrams
from apps.search.backends.base import (
    Scope,
    TableSpec,
    Vector,
    exact_vector_hits,
    fts_table,
    restrict_sql,
    scored_hits,
    substring_queryset,
    trigram_index,
    vec_table,
)
from apps.search.corpora import Corpus
from apps.search.ranking import Hit, bm25_idf

TOKENIZE = "porter unicode61 remove_diacritics 2"
# Contains: trigrams without positions (half the size of detail=full); every candidate is
# rechecked with the LIKE itself, so an AND of trigrams is enough.
TRIGRAM = "tokenize='trigram', detail=none, columnsize=0"


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def match_expression(units: Sequence[q.Unit]) -> str:
    """An FTS5 MATCH string in which every token is quoted: OR over the units."""
    parts = []
    for unit in units:
        if unit.kind == "phrase":
            parts.append(_quote(" ".join(unit.words)))
        elif unit.kind == "prefix":
            parts.append(_quote(unit.words[0]) + "*")
        else:
            parts.append(_quote(unit.words[0]))
    return " OR ".join(parts)


# --- DDL (used by apps/search/operations.py) -----------------------------------------------
def _external_fts5_sql(fts: str, table: str, columns: Sequence[str], options: str) -> list[str]:
    """An FTS5 table over `columns` of `table` (external content, keyed by rowid), the
    triggers keeping it in sync, and its first build."""
    col_list = ", ".join(columns)
    new_vals = ", ".join(f"new.{c}" for c in columns)
    old_vals = ", ".join(f"old.{c}" for c in columns)
    return [
        f"CREATE VIRTUAL TABLE {fts} USING fts5({col_list}, content='{table}', "
        f"content_rowid='rowid', {options})",
        f"CREATE TRIGGER {fts}_ai AFTER INSERT ON {table} BEGIN "
        f"INSERT INTO {fts}(rowid, {col_list}) VALUES (new.rowid, {new_vals}); END",
        f"CREATE TRIGGER {fts}_ad AFTER DELETE ON {table} BEGIN "
        f"INSERT INTO {fts}({fts}, rowid, {col_list}) VALUES ('delete', old.rowid, {old_vals}); "
        f"END",
        f"CREATE TRIGGER {fts}_au AFTER UPDATE OF {col_list} ON {table} BEGIN "
        f"INSERT INTO {fts}({fts}, rowid, {col_list}) VALUES ('delete', old.rowid, {old_vals}); "
        f"INSERT INTO {fts}(rowid, {col_list}) VALUES (new.rowid, {new_vals}); END",
        rebuild_statement(fts),
    ]


def rebuild_statement(fts: str) -> str:
    """Re-derive an external-content FTS5 table from its source table: no delete marker, no
    term of a deleted row is left."""
    return f"INSERT INTO {fts}({fts}) VALUES ('rebuild')"


def _drop_sql(side_table: str, triggers: Sequence[str]) -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {side_table}_{s}" for s in triggers] + [
        f"DROP TABLE IF EXISTS {side_table}"
    ]


def keyword_index_sql(spec: TableSpec) -> list[str]:
    options = f"tokenize='{TOKENIZE}'"
    return _external_fts5_sql(fts_table(spec.table), spec.table, spec.text_columns, options)


def drop_keyword_index_sql(spec: TableSpec) -> list[str]:
    return _drop_sql(fts_table(spec.table), ("ai", "ad", "au"))


def vector_index_sql(spec: TableSpec) -> list[str]:
    vec, t, v, a = vec_table(spec.table), spec.table, spec.vector_column, spec.agent_column
    insert = f"INSERT INTO {vec}(rowid, agent_id, embedding)"
    return [
        f"CREATE VIRTUAL TABLE {vec} USING vec0(agent_id integer partition key, "
        f"embedding float[{spec.dimensions}] distance_metric=cosine)",
        f"CREATE TRIGGER {vec}_ai AFTER INSERT ON {t} WHEN new.{v} IS NOT NULL BEGIN "
        f"{insert} VALUES (new.rowid, new.{a}, new.{v}); END",
        f"CREATE TRIGGER {vec}_au AFTER UPDATE OF {v} ON {t} BEGIN "
        f"DELETE FROM {vec} WHERE rowid = old.rowid; "
        f"{insert} SELECT new.rowid, new.{a}, new.{v} WHERE new.{v} IS NOT NULL; END",
        f"CREATE TRIGGER {vec}_ad AFTER DELETE ON {t} BEGIN "
        f"DELETE FROM {vec} WHERE rowid = old.rowid; END",
        f"{insert} SELECT rowid, {a}, {v} FROM {t} WHERE {v} IS NOT NULL",
    ]


def drop_vector_index_sql(spec: TableSpec) -> list[str]:
    return _drop_sql(vec_table(spec.table), ("ai", "au", "ad"))


def contains_index_sql(spec: TableSpec) -> list[str]:
    (column,) = spec.text_columns
    trg = trigram_index(spec.table, column)
    return _external_fts5_sql(trg, spec.table, (column,), TRIGRAM)


def drop_contains_index_sql(spec: TableSpec) -> list[str]:
    (column,) = spec.text_columns
    return _drop_sql(trigram_index(spec.table, column), ("ai", "ad", "au"))


def rebuild_sql(spec: TableSpec, *, tables: Collection[str] = ()) -> list[str]:
    """Re-derive the side tables from the source table (after a VACUUM or table remake);
    `tables` (the database's) says which text columns have a contains index."""
    out = [rebuild_statement(fts_table(spec.table))]
    if spec.vector_column:
        out.append(f"DELETE FROM {vec_table(spec.table)}")
        out.append(vector_index_sql(spec)[-1])
    for column in spec.text_columns:
        trg = trigram_index(spec.table, column)
        if trg in tables:
            out.append(rebuild_statement(trg))
    return out


# --- contains candidates -------------------------------------------------------------------
# Above this many candidates the text is common: the newest-first scan finds `limit` rows
# after reading about limit x rows / this many, which beats fetching and sorting them all.
MAX_CANDIDATES = 2000
# Fewer than this many candidates are rechecked at once rather than narrowed by a 2nd probe.
ENOUGH_CANDIDATES = 100
# Probes AND the text's rarest-looking trigrams (apps/search/trigrams.py): the 3 rarest,
# then up to 12.
_PROBE_SIZES = (3, 12)


def trigram_probes(text: str) -> list[str]:
    """FTS5 MATCH expressions for rows that may contain `text`, each narrower than the one
    before: ANDs of its rarest-looking trigrams. [] below 3 characters."""
    # The text's own characters: FTS5 folds each trigram as it folds the rows, and Python's
    # lower() may change a string's length ("İ" becomes two characters).
    ranked = trigrams.all_trigrams(text)
    sizes = sorted({min(n, len(ranked)) for n in _PROBE_SIZES} - {0})
    return [" AND ".join(_quote(t) for t in ranked[:n]) for n in sizes]


def contains_candidates(corpus: Corpus, column: str, text: str) -> list[int] | None:
    """Rowids that may contain `text` (a superset of the LIKE's matches, in any agent), or
    None when the index cannot narrow the scan: no index, no trigram, or a common text."""
    trg = trigram_index(corpus.table, column)
    probes = trigram_probes(text)
    if not probes:
        return None
    candidates = None
    with read_connection().cursor() as cursor:
        cursor.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = %s", [trg])
        if cursor.fetchone() is None:
            return None  # no contains index on this column
        for probe in probes:
            cursor.execute(
                f"SELECT rowid FROM {trg} WHERE {trg} MATCH %s LIMIT %s",
                [probe, MAX_CANDIDATES + 1],
            )
            rows = cursor.fetchall()
            if len(rows) <= MAX_CANDIDATES:
                candidates = [r[0] for r in rows]
            if len(rows) <= ENOUGH_CANDIDATES:
                break
    return candidates


# --- BM25 --------------------------------------------------------------------------------
# FTS5's bm25() is Okapi BM25 (k1 1.2, b 0.75, the table's N and avgdl) with idf
# ln((N - n + 0.5) / (n + 0.5)) floored at 1e-6: a term in half the rows or more (any match
# in a tiny table) scores ~1e-6. The floor is a constant factor, so one unit's bm25() divided
# by FTS5's idf for that unit is its tf/length part exactly; times Lucene's idf it is the
# score PostgreSQL computes. The units are scored one MATCH each and summed. Cost: a second
# pass over each unit's doclist (its n, counted before the query), measured in
# docs/benchmarks.md ("BM25 with Lucene's idf").


def fts5_idf(n_docs: int, doc_freq: int) -> float:
    """The idf FTS5's bm25() applies (sqlite/ext/fts5/fts5_aux.c): floored at 1e-6."""
    idf = math.log((n_docs - doc_freq + 0.5) / (doc_freq + 0.5))
    return idf if idf > 0.0 else 1e-6


def fts5_statistics(
    cursor: CursorWrapper, fts: str, expressions: Sequence[str]
) -> tuple[int, list[int]]:
    """N and each MATCH expression's n, as bm25() counts them, over the whole table: the rows
    indexed (one %_docsize row each; FTS5's averages record holds the same count but is
    written back only at a commit or savepoint) and the rows matching each expression."""
    counts = "".join(f", (SELECT count(*) FROM {fts} WHERE {fts} MATCH %s)" for _ in expressions)
    cursor.execute(f"SELECT (SELECT count(*) FROM {fts}_docsize){counts}", list(expressions))
    n_docs, *found = (int(n) for n in cursor.fetchone())
    return n_docs, found


def _bm25_sql(scope: Scope, weights: Sequence[tuple[str, float]]) -> tuple[str, list]:
    """The top `limit` of the agent's rows by the sum over units of bm25() x weight.

    The units are a VALUES list driving the FTS5 table, one MATCH per unit (FTS5 starts a
    query for each, and bm25() counts that unit's n afresh), so the restriction's list is
    built once for all units. The scored rows are a MATERIALIZED CTE: flattened into the
    aggregate, bm25() would refuse to run."""
    corpus = scope.corpus
    fts, t, pk = fts_table(corpus.table), corpus.table, corpus.pk_column
    units = ", ".join("(%s, %s)" for _ in weights)
    restrict, restrict_params = restrict_sql(scope.queryset, "m", pk)
    sql = (
        f"WITH units(expression, weight) AS (VALUES {units}), "
        f"parts AS MATERIALIZED (SELECT m.{pk} AS doc, -bm25({fts}) * u.weight AS part "
        f"FROM units u CROSS JOIN {fts} CROSS JOIN {t} m ON m.rowid = {fts}.rowid "
        f"WHERE {fts} MATCH u.expression AND m.{corpus.agent_column} = %s{restrict}) "
        f"SELECT doc, sum(part) AS score FROM parts GROUP BY doc ORDER BY score DESC, doc "
        f"LIMIT %s"
    )
    params = [v for pair in weights for v in pair]
    return sql, [*params, scope.agent_id, *restrict_params, scope.limit]


# --- queries -------------------------------------------------------------------------------
class SQLiteBackend:
    vendor = "sqlite"

    def keyword(self, scope: Scope, units: Sequence[q.Unit]) -> list[Hit]:
        """Okapi BM25 with Lucene's idf (apps/search/ranking.py), from FTS5: each unit's
        bm25() with FTS5's idf divided back out; ties by primary key."""
        fts = fts_table(scope.corpus.table)
        expressions = [match_expression([u]) for u in units]
        with read_connection().cursor() as cursor:
            n_docs, found = fts5_statistics(cursor, fts, expressions)
            weights = [
                (e, bm25_idf(n_docs, n) / fts5_idf(n_docs, n))
                for e, n in zip(expressions, found, strict=True)
                if n
            ]
            if not weights:
                return []
            cursor.execute(*_bm25_sql(scope, weights))
            rows = cursor.fetchall()
        return scored_hits(scope.corpus, rows, "bm25")

    def vector(
        self, scope: Scope, vector: Vector, *, model_name: str | None, exact: bool
    ) -> list[Hit]:
        """vec0 KNN inside the agent's partition; with a queryset (or exact), an exact scan."""
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        if scope.queryset is None and not exact:
            # Rows of another embedding model (during a re-embed) make the KNN fall through
            # to the exact scan below.
            rows = _knn(scope, blob)
            if model_name is None or all(r[2] == model_name for r in rows):
                return scored_hits(scope.corpus, rows, "vector")
        # Filters make KNN-then-filter lose results; the filtered set is scanned exactly.
        similarity = "1.0 - vec_distance_cosine({column}, %s)"
        return exact_vector_hits(scope, similarity, blob, model_name=model_name)

    def contains(
        self, scope: Scope, text: str, *, field: str, order_by: Sequence[str]
    ) -> list[Hit]:
        """Django's `icontains` (LIKE, ASCII case folding) over the trigram table's candidates,
        or over every row when the index cannot narrow them."""
        corpus = scope.corpus
        qs = substring_queryset(
            corpus, scope.queryset, agent_id=scope.agent_id, field=field, text=text
        )
        candidates = contains_candidates(corpus, corpus.column(field), text)
        if candidates is not None:
            # The candidates drive the plan (rowid lookups); the LIKE rechecks each one.
            in_candidates = f'"{corpus.table}".rowid IN (SELECT value FROM json_each(%s))'
            rowids = RawSQL(in_candidates, [json.dumps(candidates)], output_field=BooleanField())  # noqa: S611
            qs = qs.filter(rowids)
        pks = qs.order_by(*order_by).values_list("pk", flat=True)[: scope.limit]
        return [Hit(object_id=pk, score=1.0, leg="contains") for pk in pks]


def _knn(scope: Scope, blob: bytes) -> list[tuple]:
    """vec0 KNN inside the agent's partition: (pk, similarity, embedding model) rows."""
    corpus = scope.corpus
    t, pk = corpus.table, corpus.pk_column
    model_col = corpus.column(corpus.model_field) if corpus.model_field else None
    select_model = f", m.{model_col}" if model_col else ", NULL"
    sql = (
        f"SELECT m.{pk}, 1.0 - knn.distance{select_model} FROM ("
        f"SELECT rowid, distance FROM {vec_table(t)} "
        f"WHERE embedding MATCH %s AND k = %s AND agent_id = %s) knn "
        f"JOIN {t} m ON m.rowid = knn.rowid ORDER BY knn.distance, m.{pk}"
    )
    with read_connection().cursor() as cursor:
        cursor.execute(sql, [blob, scope.limit, scope.agent_id])
        return cursor.fetchall()
