# ruff: noqa: S608 - identifiers come from model metadata; user values are parameters.
"""PostgreSQL: BM25 computed from maintained term statistics, pgvector HNSW for vectors.

`ts_rank` is not BM25, so three side tables per corpus, kept exact by triggers, hold what
BM25 needs (docs/search.md):

- `<table>_bm25doc(id, agent_id, len, tsv)`: each document's tsvector (GIN-indexed; the
  candidate source) and its length in tokens;
- `<table>_bm25term(agent_id, term, df)`: document frequency per agent and lexeme;
- `<table>_bm25agent(agent_id, n_docs, total_len)`: N and the average length's numerator.

A query stems its words with the same text search configuration, reads N, avgdl and each
term's df (prefixes and phrases are counted through the GIN index), takes the candidates
matching any unit from the GIN index, and scores them with FTS5's formula.
"""

import math
from collections.abc import Sequence

from django.db import connection, transaction
from django.db.models import QuerySet

from apps.search import query as q
from apps.search.backends.base import (
    TableSpec,
    bm25_tables,
    exact_candidates_sql,
    hnsw_index,
    postings_table,
    restrict_sql,
)
from apps.search.corpora import Corpus
from apps.search.ranking import K1, B, Hit, bm25_idf, bm25_term

CONFIG = "memoryhub_bm25"
STEM = "memoryhub_english_stem"
# Snowball English stemming with no stopword list (stopwords are dropped from OR queries in
# Python instead, so phrases keep them), mapped for word-like tokens only: the same tokens
# FTS5's unicode61 tokenizer sees. Hyphenated compounds index their parts only.
_WORD_TYPES = "asciiword, word, numword, hword_asciipart, hword_part, hword_numpart"
_OTHER_TYPES = "int, uint, float, sfloat, version, email, url, host, url_path, file"

CONFIG_SQL = f"""
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = '{STEM}') THEN
    CREATE TEXT SEARCH DICTIONARY {STEM} (TEMPLATE = snowball, Language = english);
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = '{CONFIG}') THEN
    CREATE TEXT SEARCH CONFIGURATION {CONFIG} (PARSER = default);
    ALTER TEXT SEARCH CONFIGURATION {CONFIG} ADD MAPPING FOR {_WORD_TYPES} WITH {STEM};
    ALTER TEXT SEARCH CONFIGURATION {CONFIG} ADD MAPPING FOR {_OTHER_TYPES} WITH simple;
  END IF;
END $$;
"""


def _tsv_expr(spec: TableSpec, alias: str) -> str:
    return " || ".join(
        f"to_tsvector('{CONFIG}', coalesce({alias}.{c}::text, ''))" for c in spec.text_columns
    )


_LEN = "(SELECT coalesce(sum(cardinality(u.positions)), 0) FROM unnest({tsv}) u)"


def _add_docs_sql(spec: TableSpec, source: str) -> str:
    """Index every row of `source` (the table, or a trigger's transition table)."""
    doc, term, agg = bm25_tables(spec.table)
    post = postings_table(spec.table)
    # Upserts are ordered by (agent, term) so concurrent writers lock rows in one order.
    return f"""
WITH d AS (
  INSERT INTO {doc} (id, agent_id, tsv, len)
  SELECT s.{spec.pk_column}, s.{spec.agent_column}, v.tsv, {_LEN.format(tsv="v.tsv")}
  FROM {source} s CROSS JOIN LATERAL (SELECT {_tsv_expr(spec, "s")} AS tsv) v
  RETURNING id, agent_id, tsv, len
), p AS (
  INSERT INTO {post} (agent_id, term, doc_id, tf, len)
  SELECT d.agent_id, u.lexeme, d.id, cardinality(u.positions), d.len FROM d, unnest(d.tsv) u
), t AS (
  INSERT INTO {term} (agent_id, term, df)
  SELECT d.agent_id, u.lexeme, count(*) FROM d, unnest(d.tsv) u GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (agent_id, term) DO UPDATE SET df = {term}.df + excluded.df
)
INSERT INTO {agg} (agent_id, n_docs, total_len)
SELECT agent_id, count(*), sum(len) FROM d GROUP BY 1 ORDER BY 1
ON CONFLICT (agent_id) DO UPDATE SET n_docs = {agg}.n_docs + excluded.n_docs,
  total_len = {agg}.total_len + excluded.total_len;
"""


def _remove_docs_sql(spec: TableSpec, source: str) -> str:
    doc, term, agg = bm25_tables(spec.table)
    post = postings_table(spec.table)
    return f"""
WITH d AS (
  DELETE FROM {doc} x USING {source} s WHERE x.id = s.{spec.pk_column}
  RETURNING x.id, x.agent_id, x.tsv, x.len
), p AS (
  DELETE FROM {post} x USING d, unnest(d.tsv) u
  WHERE x.agent_id = d.agent_id AND x.term = u.lexeme AND x.doc_id = d.id
), c AS (
  SELECT d.agent_id, u.lexeme, count(*) AS n FROM d, unnest(d.tsv) u GROUP BY 1, 2
), t AS (
  UPDATE {term} s SET df = s.df - c.n FROM c WHERE s.agent_id = c.agent_id AND s.term = c.lexeme
), a AS (
  SELECT agent_id, count(*) AS n, sum(len) AS l FROM d GROUP BY 1
)
UPDATE {agg} g SET n_docs = g.n_docs - a.n, total_len = g.total_len - a.l
FROM a WHERE g.agent_id = a.agent_id;
"""


def _changed_rows(spec: TableSpec, changed: str, take: str) -> str:
    """Rows of an UPDATE whose indexed text changed, as the old or the new version."""
    pk = spec.pk_column
    return (
        f"(SELECT {take}_r.* FROM old_all old_r JOIN new_all new_r ON old_r.{pk} = new_r.{pk} "
        f"WHERE {changed})"
    )


def keyword_index_sql(spec: TableSpec) -> list[str]:
    """DDL creating the BM25 side tables and triggers for `spec`, and indexing its rows."""
    doc, term, agg = bm25_tables(spec.table)
    post = postings_table(spec.table)
    t, fn = spec.table, f"{spec.table}_bm25"
    # Aliases old_r/new_r: plain old/new would clash with PL/pgSQL's OLD and NEW.
    changed = " OR ".join(f"old_r.{c} IS DISTINCT FROM new_r.{c}" for c in spec.text_columns)
    return [
        CONFIG_SQL,
        f"CREATE TABLE {doc} (id {spec.pk_type} PRIMARY KEY, agent_id bigint NOT NULL, "
        f"len integer NOT NULL, tsv tsvector NOT NULL)",
        f"CREATE INDEX {doc}_tsv ON {doc} USING gin (tsv)",
        f"CREATE INDEX {doc}_agent ON {doc} (agent_id)",
        f"CREATE TABLE {term} (agent_id bigint NOT NULL, term text NOT NULL, "
        f"df integer NOT NULL, PRIMARY KEY (agent_id, term))",
        f"CREATE TABLE {agg} (agent_id bigint PRIMARY KEY, n_docs bigint NOT NULL, "
        f"total_len bigint NOT NULL)",
        # Postings: term queries are scored from an index-only scan of (agent, term).
        f"CREATE TABLE {post} (agent_id bigint NOT NULL, term text NOT NULL, "
        f"doc_id {spec.pk_type} NOT NULL, tf integer NOT NULL, len integer NOT NULL, "
        f"PRIMARY KEY (agent_id, term, doc_id) INCLUDE (tf, len))",
        f"CREATE FUNCTION {fn}_ins() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"{_add_docs_sql(spec, 'new_rows')} RETURN NULL; END $$",
        f"CREATE FUNCTION {fn}_del() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"{_remove_docs_sql(spec, 'old_rows')} RETURN NULL; END $$",
        # Transition tables cannot be combined with an UPDATE OF column list, so the trigger
        # sees every update and re-indexes only rows whose text changed (embedding writes
        # pass through with one cheap join).
        f"CREATE FUNCTION {fn}_upd() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"{_remove_docs_sql(spec, _changed_rows(spec, changed, 'old'))} "
        f"{_add_docs_sql(spec, _changed_rows(spec, changed, 'new'))} RETURN NULL; END $$",
        f"CREATE FUNCTION {fn}_trunc() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        f"TRUNCATE {doc}, {term}, {agg}, {post}; RETURN NULL; END $$",
        f"CREATE TRIGGER {fn}_ins AFTER INSERT ON {t} REFERENCING NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}_ins()",
        f"CREATE TRIGGER {fn}_del AFTER DELETE ON {t} REFERENCING OLD TABLE AS old_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}_del()",
        f"CREATE TRIGGER {fn}_upd AFTER UPDATE ON {t} "
        f"REFERENCING OLD TABLE AS old_all NEW TABLE AS new_all "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}_upd()",
        f"CREATE TRIGGER {fn}_trunc AFTER TRUNCATE ON {t} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}_trunc()",
        _add_docs_sql(spec, t),
    ]


def drop_keyword_index_sql(spec: TableSpec) -> list[str]:
    doc, term, agg = bm25_tables(spec.table)
    fn, t = f"{spec.table}_bm25", spec.table
    out = [f"DROP TRIGGER IF EXISTS {fn}_{s} ON {t}" for s in ("ins", "del", "upd", "trunc")]
    out += [f"DROP FUNCTION IF EXISTS {fn}_{s}()" for s in ("ins", "del", "upd", "trunc")]
    out += [f"DROP TABLE IF EXISTS {doc}, {term}, {agg}, {postings_table(spec.table)}"]
    return out


def vector_index_sql(spec: TableSpec) -> list[str]:
    name = hnsw_index(spec.table, spec.vector_column)
    return [
        f"CREATE INDEX IF NOT EXISTS {name} ON {spec.table} "
        f"USING hnsw ({spec.vector_column} vector_cosine_ops)"
    ]


def drop_vector_index_sql(spec: TableSpec) -> list[str]:
    return [f"DROP INDEX IF EXISTS {hnsw_index(spec.table, spec.vector_column)}"]


# --- queries -------------------------------------------------------------------------------
def _tsquery_literal(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _unit_tsquery(kind: str, lexemes: Sequence[str]) -> str:
    if kind == "prefix":
        return _tsquery_literal(lexemes[0]) + ":*"
    return " <-> ".join(_tsquery_literal(x) for x in lexemes)


def _like_prefix(lexeme: str) -> str:
    return lexeme.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _phrase_tf(positions: dict[str, list[int]], lexemes: Sequence[str]) -> int:
    first = positions.get(lexemes[0], [])
    rest = [set(positions.get(x, ())) for x in lexemes[1:]]
    return sum(1 for p in first if all(p + i + 1 in s for i, s in enumerate(rest)))


def _postings_top_k(cursor, post, agent_id, idf, avg_len, limit, queryset):
    """Term-only queries: BM25 summed over the query terms' postings, top k in SQL."""
    terms = [u[1][0] for u in idf]
    weights = [idf[u] for u in idf]
    extra, params = restrict_sql(queryset, "p", "doc_id")
    cursor.execute(
        # Typed constants: an untyped 0.75 is numeric, and numeric per row is 3x slower.
        f"SELECT p.doc_id, sum(w.idf * p.tf * {K1 + 1.0!r}::float8 / (p.tf + {K1!r}::float8 * "
        f"({1.0 - B!r}::float8 + {B!r}::float8 * p.len / %s::float8))) AS score "
        f"FROM unnest(%s::text[], %s::float8[]) AS w(term, idf) "
        # One index probe per query term whatever the statistics say (a new agent has
        # none yet); OFFSET 0 keeps the planner from flattening it into a join.
        f"CROSS JOIN LATERAL (SELECT doc_id, tf, len FROM {post} "
        f"WHERE agent_id = %s AND term = w.term OFFSET 0) p "
        f"WHERE true{extra} GROUP BY p.doc_id ORDER BY score DESC, p.doc_id LIMIT %s",
        [avg_len, terms, weights, agent_id, *params, limit],
    )
    return [(pk, float(score)) for pk, score in cursor.fetchall()]


class _Fetcher:
    """Candidates matching a tsquery, with the tf of every query unit, scored in Python."""

    def __init__(self, cursor, doc: str, agent_id: int, resolved, queryset) -> None:
        self.cursor, self.doc, self.agent_id, self.resolved = cursor, doc, agent_id, resolved
        self.extra, self.params = restrict_sql(queryset, "d", "id")
        self.exact = sorted({x for k, lex in resolved if k != "prefix" for x in lex})
        self.prefixes = [_like_prefix(lex[0]) for k, lex in resolved if k == "prefix"]
        # Positions are only needed for phrases; otherwise the count of positions is tf.
        self.phrases = any(k == "phrase" for k, _ in resolved)

    def __call__(self, units) -> list[tuple[object, int, dict]]:
        match = " | ".join(_unit_tsquery(k, x) for k, x in units)
        where, params = "d.tsv @@ %s::tsquery", [match]
        value = "array_to_string(u.positions, ',')" if self.phrases else "cardinality(u.positions)"
        self.cursor.execute(
            f"SELECT d.id, d.len, x.lexemes, x.vals FROM {self.doc} d "
            f"CROSS JOIN LATERAL (SELECT array_agg(u.lexeme) AS lexemes, array_agg({value}) "
            f"AS vals FROM unnest(d.tsv) u WHERE u.lexeme = ANY(%s) OR u.lexeme LIKE ANY(%s)) x "
            f"WHERE d.agent_id = %s AND {where}{self.extra}",
            [self.exact, self.prefixes, self.agent_id, *params, *self.params],
        )
        out = []
        for pk, length, lexemes, vals in self.cursor.fetchall():
            if self.phrases:
                pos = {
                    lx: [int(p) for p in v.split(",")] for lx, v in zip(lexemes, vals, strict=True)
                }
            else:
                pos = dict(zip(lexemes, vals, strict=True))
            out.append((pk, length, pos))
        return out


def _tf(kind: str, lex: tuple[str, ...], pos: dict, phrases: bool) -> int:
    count = (lambda v: len(v)) if phrases else (lambda v: v)
    if kind == "term":
        v = pos.get(lex[0])
        return count(v) if v is not None else 0
    if kind == "prefix":
        return sum(count(v) for k, v in pos.items() if k.startswith(lex[0]))
    return _phrase_tf(pos, lex)


def _score(fetch: _Fetcher, rows, resolved, idf, avg_len: float) -> list[tuple[object, float]]:
    """Full BM25 of fetched documents over every unit of the query."""
    return [
        (
            pk,
            sum(
                bm25_term(idf[u], _tf(u[0], u[1], pos, fetch.phrases), float(n), avg_len)
                for u in resolved
            ),
        )
        for pk, n, pos in rows
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
        units = q.parse(query)
        if not units:
            return []
        doc, term, agg = bm25_tables(corpus.table)
        words = sorted({w for u in units for w in u.words})
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT w, coalesce((SELECT array_agg(lexeme) FROM unnest("
                f"to_tsvector('{CONFIG}', w))), '{{}}') FROM unnest(%s::text[]) w",
                [words],
            )
            stems = {w: list(lex) for w, lex in cursor.fetchall()}
            # (kind, lexemes) per unit; a word may stem to nothing (never with this config).
            resolved: list[tuple[str, tuple[str, ...]]] = []
            for unit in units:
                lexemes = tuple(x for w in unit.words for x in stems.get(w, [])[:1])
                if lexemes and (unit.kind, lexemes) not in resolved:
                    kind = "phrase" if unit.kind == "phrase" and len(lexemes) > 1 else unit.kind
                    resolved.append((kind, lexemes))
            if not resolved:
                return []
            cursor.execute(f"SELECT n_docs, total_len FROM {agg} WHERE agent_id = %s", [agent_id])
            row = cursor.fetchone()
            if row is None or not row[0]:
                return []
            n_docs, avg_len = int(row[0]), float(row[1]) / float(row[0])
            terms = sorted({x[1][0] for x in resolved if x[0] == "term"})
            cursor.execute(
                f"SELECT term, df FROM {term} WHERE agent_id = %s AND term = ANY(%s)",
                [agent_id, terms],
            )
            df = {("term", (t,)): int(n) for t, n in cursor.fetchall()}
            for kind, lexemes in resolved:
                if kind != "term":
                    # Prefixes and phrases have no maintained df: counted through the GIN index.
                    cursor.execute(
                        f"SELECT count(*) FROM {doc} WHERE agent_id = %s AND tsv @@ %s::tsquery",
                        [agent_id, _unit_tsquery(kind, lexemes)],
                    )
                    df[(kind, lexemes)] = int(cursor.fetchone()[0])
            idf = {u: bm25_idf(n_docs, df.get(u, 0)) for u in resolved}
            post = postings_table(corpus.table)
            terms = {u: w for u, w in idf.items() if u[0] == "term"}
            others = [u for u in resolved if u[0] != "term"]
            if not others:
                scored = _postings_top_k(cursor, post, agent_id, terms, avg_len, limit, queryset)
            else:
                # Phrases and prefixes: the documents matching them (few, usually) are scored
                # in full from their tsvectors; every other document's score is its term
                # part, so the postings' top (limit + |P|) holds the rest of the exact top k.
                fetch = _Fetcher(cursor, doc, agent_id, resolved, queryset)
                full = dict(_score(fetch, fetch(others), resolved, idf, avg_len))
                scored = list(full.items())
                if terms:
                    depth = limit + len(full)
                    rest = _postings_top_k(cursor, post, agent_id, terms, avg_len, depth, queryset)
                    scored += [(pk, sc) for pk, sc in rest if pk not in full]
        scored.sort(key=lambda r: (-r[1], str(r[0])))
        return [Hit(object_id=pk, score=s, leg="bm25") for pk, s in scored[:limit] if s > 0]

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
        literal = "[" + ",".join(repr(float(x)) for x in vector) + "]"
        if not all(math.isfinite(float(x)) for x in vector):
            return []
        if exact:
            return self._vector_exact(corpus, agent_id, literal, limit, model_name, queryset)
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
            cursor.execute(f"SET LOCAL hnsw.ef_search = {max(self.ef_search, limit)}")
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cursor.execute(sql, [literal, agent_id, *model_params, *params, literal, limit])
            rows = cursor.fetchall()
        hits = [Hit(object_id=r[0], score=float(r[1]), leg="vector") for r in rows]
        # relaxed_order may return near-ties slightly out of order; restore exact order.
        hits.sort(key=lambda h: -h.score)
        return hits

    def _vector_exact(self, corpus, agent_id, literal, limit, model_name, queryset) -> list[Hit]:
        inner, params = exact_candidates_sql(
            corpus, queryset, agent_id=agent_id, model_name=model_name
        )
        # Ordering by the computed score (not by `<=>`) keeps the HNSW index out of the plan.
        sql = (
            f"SELECT q.pk, 1 - (q.{corpus.vector_field} <=> %s::vector) AS score "
            f"FROM ({inner}) q ORDER BY score DESC, q.pk LIMIT %s"
        )
        with connection.cursor() as cursor:
            cursor.execute(sql, [literal, *params, limit])
            rows = cursor.fetchall()
        return [Hit(object_id=r[0], score=float(r[1]), leg="vector") for r in rows]
