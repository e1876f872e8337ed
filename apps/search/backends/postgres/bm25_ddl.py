# ruff: noqa: S608 - identifiers come from model metadata; user values are parameters.
"""PostgreSQL BM25 DDL: the text search configuration, the side tables and their triggers.

`ts_rank` is not BM25, so three side tables per corpus, kept exact by triggers, hold what
BM25 needs (docs/search.md):

- `<table>_bm25doc(id, agent_id, len, tsv)`: each document's tsvector (GIN-indexed; the
  candidate source) and its length in tokens;
- `<table>_bm25term(agent_id, term, df)`: document frequency per agent and lexeme;
- `<table>_bm25agent(agent_id, n_docs, total_len)`: N and the average length's numerator.

A fourth, `<table>_bm25post`, holds the postings that term-only queries are scored from.
"""

from apps.search.backends.base import TableSpec, bm25_tables, postings_table

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
  WHERE x.agent_id = d.agent_id AND x.term = u.lexeme AND x.tf = cardinality(u.positions)
    AND x.len = d.len AND x.doc_id = d.id
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


def _side_tables_sql(spec: TableSpec) -> list[str]:
    """The doc, term, agent and postings tables with their indexes."""
    doc, term, agg = bm25_tables(spec.table)
    post = postings_table(spec.table)
    return [
        f"CREATE TABLE {doc} (id {spec.pk_type} PRIMARY KEY, agent_id bigint NOT NULL, "
        f"len integer NOT NULL, tsv tsvector NOT NULL)",
        f"CREATE INDEX {doc}_tsv ON {doc} USING gin (tsv)",
        f"CREATE INDEX {doc}_agent ON {doc} (agent_id)",
        f"CREATE TABLE {term} (agent_id bigint NOT NULL, term text NOT NULL, "
        f"df integer NOT NULL, PRIMARY KEY (agent_id, term))",
        f"CREATE TABLE {agg} (agent_id bigint PRIMARY KEY, n_docs bigint NOT NULL, "
        f"total_len bigint NOT NULL)",
        # Postings, read only through their one index: per term by (tf, length), which is
        # falling score order for the top-k (topk.py); deletes give the whole key.
        f"CREATE TABLE {post} (agent_id bigint NOT NULL, term text NOT NULL, "
        f"doc_id {spec.pk_type} NOT NULL, tf integer NOT NULL, len integer NOT NULL)",
        impact_index_sql(post),
    ]


def impact_index_sql(post: str) -> str:
    """The postings' index: (agent, term, tf, len, doc)."""
    return f"CREATE INDEX IF NOT EXISTS {post}_impact ON {post} (agent_id, term, tf, len, doc_id)"


def _trigger_functions_sql(spec: TableSpec) -> list[str]:
    """The statement-level trigger functions keeping the side tables exact."""
    doc, term, agg = bm25_tables(spec.table)
    post = postings_table(spec.table)
    fn = f"{spec.table}_bm25"
    # Aliases old_r/new_r: plain old/new would clash with PL/pgSQL's OLD and NEW.
    changed = " OR ".join(f"old_r.{c} IS DISTINCT FROM new_r.{c}" for c in spec.text_columns)
    return [
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
    ]


def _triggers_sql(spec: TableSpec) -> list[str]:
    t, fn = spec.table, f"{spec.table}_bm25"
    return [
        f"CREATE TRIGGER {fn}_ins AFTER INSERT ON {t} REFERENCING NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}_ins()",
        f"CREATE TRIGGER {fn}_del AFTER DELETE ON {t} REFERENCING OLD TABLE AS old_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}_del()",
        f"CREATE TRIGGER {fn}_upd AFTER UPDATE ON {t} "
        f"REFERENCING OLD TABLE AS old_all NEW TABLE AS new_all "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}_upd()",
        f"CREATE TRIGGER {fn}_trunc AFTER TRUNCATE ON {t} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {fn}_trunc()",
    ]


def keyword_index_sql(spec: TableSpec) -> list[str]:
    """DDL creating the BM25 side tables and triggers for `spec`, and indexing its rows."""
    return [
        CONFIG_SQL,
        *_side_tables_sql(spec),
        *_trigger_functions_sql(spec),
        *_triggers_sql(spec),
        _add_docs_sql(spec, spec.table),
    ]


def drop_keyword_index_sql(spec: TableSpec) -> list[str]:
    doc, term, agg = bm25_tables(spec.table)
    fn, t = f"{spec.table}_bm25", spec.table
    out = [f"DROP TRIGGER IF EXISTS {fn}_{s} ON {t}" for s in ("ins", "del", "upd", "trunc")]
    out += [f"DROP FUNCTION IF EXISTS {fn}_{s}()" for s in ("ins", "del", "upd", "trunc")]
    out += [f"DROP TABLE IF EXISTS {doc}, {term}, {agg}, {postings_table(spec.table)}"]
    return out
