# ruff: noqa: S608 - identifiers come from model metadata; user values are parameters.
"""PostgreSQL contains: a pg_trgm GIN index on the very expression Django's `icontains`
compares, `UPPER(column::text)`, used only where it pays.

Every path ends in that same predicate, `UPPER(col::text) LIKE UPPER('%text%')`, so the
rows are always the plain query's; the paths differ in what they read:

1. the first `head_rows` rows in `order_by` (the newest), until `limit` match: a common
   text is found there;
2. one word: the plain query, as the planner sees fit (its trigrams are few and precise,
   and the planner's estimate good);
3. if no head row matched, the GIN index, when few rows would need rechecking. The text's
   rarest-looking letter trigrams (6, then up to 16: apps/search/trigrams.py) are counted
   in the head rows and scaled to the table's size; the set with the fewest is read from
   the index if that costs less than the rows a scan would still read at the density seen
   so far; the LIKE keeps the matches. A question's 40 trigrams would cost 40 posting-list
   reads, and a fragment's ("ng and e") match half the table; a few rare ones cost little;
4. otherwise the first `scan_rows` rows, then the index by the same comparison, and at
   last every row in order.

Each read is held to its plan (a LIMITed subquery; sequential scans off for the index
read; no bitmap for the last scan): estimates of LIKE selectivity are too rough to choose
between a newest-first scan and a bitmap of a million candidates.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import BooleanField, QuerySet
from django.db.models.expressions import RawSQL

from apps.core.replicas import read_connection
from apps.search import trigrams
from apps.search.backends.base import TableSpec, agent_rows, trigram_index
from apps.search.corpora import Corpus
from apps.search.ranking import Hit

HEAD_ROWS = 2000
SCAN_ROWS = 10_000
# A row the index proposes (a random heap page, then the agent's filters) costs about
# RECHECK_COST rows of an ordered scan.
RECHECK_COST = 8
MAX_MATCHES = 5000
PROBES = (6, 16)


def _expression(column: str) -> str:
    # Exactly the left-hand side Django writes for `icontains`, or the index is not used.
    return f"UPPER(({column})::text)"


def contains_index_sql(spec: TableSpec) -> list[str]:
    (column,) = spec.text_columns
    name = trigram_index(spec.table, column)
    return [
        "CREATE EXTENSION IF NOT EXISTS pg_trgm",
        f"CREATE INDEX IF NOT EXISTS {name} ON {spec.table} "
        f"USING gin ({_expression(column)} gin_trgm_ops)",
    ]


def drop_contains_index_sql(spec: TableSpec) -> list[str]:
    # The extension stays: other indexes (or the user) may use it.
    (column,) = spec.text_columns
    return [f"DROP INDEX IF EXISTS {trigram_index(spec.table, column)}"]


def _pattern(text: str) -> str:
    """The parameter Django binds for `icontains`: LIKE wildcards in the text are literal."""
    return f"%{connection.ops.prep_for_like_query(text)}%"


def _ordered(
    base: QuerySet, field: str, order_by: Sequence[str], rows: int
) -> tuple[str, list, str]:
    """SQL of the first `rows` rows of `base`, as columns (pk, txt, o0, o1, ...), and the
    ORDER BY over those columns that keeps their order."""
    keys = [name.removeprefix("-") for name in order_by]
    qs = base.order_by(*order_by).values_list("pk", field, *keys)[:rows]
    sql, params = qs.query.sql_with_params()
    columns = ", ".join(["pk", "txt", *(f"o{i}" for i in range(len(keys)))])
    order = ", ".join(
        f"o{i} {'DESC' if n.startswith('-') else 'ASC'}" for i, n in enumerate(order_by)
    )
    return f"({sql}) AS h({columns})", list(params), order


_LIKE = "UPPER(txt::text) LIKE UPPER(%s)"
_WORDS = re.compile(r"[A-Za-z0-9]+")


def _count_held(
    base: QuerySet,
    field: str,
    probe_sets: Sequence[Sequence[str]],
    order_by: Sequence[str],
    rows: int,
) -> tuple[int, list[int], float]:
    """The first `rows` rows of `base`: how many there are, how many hold each probe set,
    and the table's row count as of its last ANALYZE or VACUUM (-1: never)."""
    source, params, _ = _ordered(base, field, order_by, rows)
    like = "u LIKE UPPER(%s)"  # UPPER(txt) once per row: it costs more than the LIKEs
    counts = "".join(
        f", count(*) FILTER (WHERE {' AND '.join([like] * len(probes))})" for probes in probe_sets
    )
    table = "(SELECT reltuples FROM pg_class WHERE oid = %s::regclass)"
    sql = f"SELECT {table}, count(*){counts} FROM (SELECT UPPER(txt::text) AS u FROM {source}) c"
    patterns = [_pattern(p) for probes in probe_sets for p in probes]
    with read_connection().cursor() as cursor:
        # parameters in the order of their placeholders
        cursor.execute(sql, [base.model._meta.db_table, *patterns, *params])
        table_rows, n, *held = cursor.fetchone()
    return n, held, float(table_rows)


def _scan(
    base: QuerySet, field: str, text: str, order_by: Sequence[str], *, limit: int, rows: int
) -> list[Any]:  # Any: primary keys as the DB-API cursor returns them
    """The matches among the first `rows` rows, read in order until `limit` are found."""
    source, params, order = _ordered(base, field, order_by, rows)
    sql = f"SELECT pk FROM {source} WHERE {_LIKE} ORDER BY {order} LIMIT %s"
    with read_connection().cursor() as cursor:
        cursor.execute(sql, [*params, _pattern(text), limit])
        return [row[0] for row in cursor.fetchall()]


def _hidden_like(corpus: Corpus, field: str, text: str) -> RawSQL:
    """The text's own LIKE, hidden from the index (IS TRUE): its 40 trigrams are not read."""
    quote = connection.ops.quote_name
    column = f"{quote(corpus.table)}.{quote(corpus.column(field))}"
    like = f"({_expression(column)} LIKE UPPER(%s)) IS TRUE"
    return RawSQL(like, [_pattern(text)], output_field=BooleanField())  # noqa: S611


def _read_indexed(
    base: QuerySet,
    corpus: Corpus,
    field: str,
    text: str,
    probes: Sequence[str],
    order_by: Sequence[str],
    *,
    limit: int,
) -> list[Any] | None:  # Any: primary keys as the DB-API cursor returns them
    """The matches among the rows holding every probe trigram (a GIN bitmap), or None when
    there are over MAX_MATCHES of them (in any agent)."""
    matches = corpus.model._default_manager.all()
    for probe in probes:  # each one trigram; implied by the text's own LIKE
        matches = matches.filter(**{f"{field}__icontains": probe})
    matches = matches.filter(_hidden_like(corpus, field, text))
    # The probes alone, with no agent filter, so the GIN index is the only index that can
    # serve them; a sequential scan is ruled out for this one query.
    with read_connection().cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        try:
            pks = list(matches.values_list("pk", flat=True)[: MAX_MATCHES + 1])
        finally:
            cursor.execute("RESET enable_seqscan")
    if len(pks) > MAX_MATCHES:
        return None
    qs = base.filter(pk__in=pks).filter(_hidden_like(corpus, field, text))
    return list(qs.order_by(*order_by).values_list("pk", flat=True)[:limit])


def contains(
    corpus: Corpus,
    *,
    agent_id: int,
    text: str,
    field: str,
    limit: int,
    queryset: QuerySet | None = None,
    order_by: Sequence[str] = ("-pk",),
    head_rows: int = HEAD_ROWS,
    scan_rows: int = SCAN_ROWS,
) -> list[Hit]:
    """Django's `icontains` in `order_by`: the newest rows, else the trigram index where
    few rows need rechecking, else more of the newest rows (module docstring)."""
    base = agent_rows(corpus, queryset, agent_id=agent_id)
    ranked = trigrams.alnum_trigrams(text)
    probe_sets = [ranked[:n] for n in sorted({min(n, len(ranked)) for n in PROBES} - {0})]
    search = _Search(base, corpus, field, text, order_by, limit)
    pks = search.run(probe_sets, head_rows=head_rows, scan_rows=scan_rows)
    return [Hit(object_id=pk, score=1.0, leg="contains") for pk in pks]


@dataclass(frozen=True)
class _Search:
    base: QuerySet
    corpus: Corpus
    field: str
    text: str
    order_by: Sequence[str]
    limit: int

    # Any: primary keys as the DB-API cursor returns them
    def run(self, probe_sets: list[list[str]], *, head_rows: int, scan_rows: int) -> list[Any]:
        """The paths of the module docstring, in order."""
        found, read = self.scan(head_rows), head_rows
        if len(found) == self.limit:
            return found
        if len(_WORDS.findall(self.text)) <= 1:
            # One word: pg_trgm's trigrams of the whole text are few and precise, and the
            # planner's estimate for it is good; its own plan beat every path below.
            qs = self.base.filter(**{f"{self.field}__icontains": self.text})
            return list(qs.order_by(*self.order_by).values_list("pk", flat=True)[: self.limit])
        rows, held, table_rows = _count_held(
            self.base, self.field, probe_sets, self.order_by, head_rows
        )
        if rows < head_rows:
            return found  # that was every row
        # Rows the index would have the LIKE recheck, per probe set: the head's share of the
        # table (of every agent: the index read is not filtered by agent).
        scale = max(table_rows, rows) / rows
        rechecks = [(n * scale, probes) for probes, n in zip(probe_sets, held, strict=True)]
        fewest = min(rechecks, default=None, key=lambda pair: pair[0])
        while True:
            # The rows a scan would still read at the density seen so far. A text the head
            # holds at all is scanned first: the index would return all its matches.
            to_scan = self.limit / max(len(found), 0.5) * read
            rare = not found or read >= scan_rows
            if fewest is not None and rare and fewest[0] * RECHECK_COST < to_scan:
                indexed = self.indexed(fewest[1])
                if indexed is not None:
                    return indexed
                fewest = None  # over MAX_MATCHES: the index will not do better later
            if read >= scan_rows:
                return self.scanned()
            found, read = self.scan(scan_rows), scan_rows
            if len(found) == self.limit:
                return found

    # Any: primary keys as the DB-API cursor returns them
    def scan(self, rows: int) -> list[Any]:
        return _scan(self.base, self.field, self.text, self.order_by, limit=self.limit, rows=rows)

    # Any: primary keys as the DB-API cursor returns them
    def indexed(self, probes: Sequence[str]) -> list[Any] | None:
        return _read_indexed(
            self.base, self.corpus, self.field, self.text, probes, self.order_by,
            limit=self.limit,
        )  # fmt: skip

    # Any: primary keys as the DB-API cursor returns them
    def scanned(self) -> list[Any]:
        """Every row in order until `limit` match: the plain query, held to an index scan
        in `order_by` (no bitmap, no sequential scan and sort of every row)."""
        qs = self.base.filter(_hidden_like(self.corpus, self.field, self.text))
        query = qs.order_by(*self.order_by).values_list("pk", flat=True)[: self.limit]
        with read_connection().cursor() as cursor:
            cursor.execute("SET enable_seqscan = off")
            cursor.execute("SET enable_bitmapscan = off")
            try:
                return list(query)
            finally:
                cursor.execute("RESET enable_seqscan")
                cursor.execute("RESET enable_bitmapscan")
