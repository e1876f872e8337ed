# ruff: noqa: S608 - identifiers come from model metadata; user values are parameters.
"""PostgreSQL BM25 queries, computed from the term statistics the side tables maintain
(apps/search/backends/postgres/bm25_ddl.py; docs/search.md).

A query stems its words with the same text search configuration, reads N, avgdl and each
term's df (prefixes and phrases are counted through the GIN index), takes the candidates
matching any unit from the GIN index, and scores them with FTS5's formula.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import QuerySet

from apps.core.meta import pk_type
from apps.core.replicas import read_connection
from apps.search import query as q
from apps.search.backends.base import Scope, bm25_tables, postings_table, restrict_sql
from apps.search.backends.postgres import topk
from apps.search.backends.postgres.bm25_ddl import CONFIG
from apps.search.corpora import Corpus
from apps.search.ranking import Hit, bm25_idf, bm25_term

# A query unit once stemmed: (kind, lexemes), kind being term, prefix or phrase.
Resolved = tuple[str, tuple[str, ...]]


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


def _postings_top_k(
    cursor: CursorWrapper,
    corpus: Corpus,
    agent_id: int,
    stats: "Statistics",
    limit: int,
    queryset: QuerySet | None,
) -> list[tuple[object, float]]:
    """Term-only queries: the exact BM25 top k from the postings (topk.py)."""
    query = topk.Query(
        doc=bm25_tables(corpus.table)[0],
        post=postings_table(corpus.table),
        pk_type=pk_type(corpus.model, connection),
        agent_id=agent_id,
        avg_len=stats.avg_len,
        limit=limit,
        queryset=queryset,
        postings=stats.postings,
    )
    terms = {u[1][0]: w for u, w in stats.idf.items() if u[0] == "term"}
    return topk.top_k(cursor, query, terms)


class _Fetcher:
    """Candidates matching a tsquery, with the tf of every query unit, scored in Python."""

    def __init__(
        self,
        cursor: CursorWrapper,
        doc: str,
        agent_id: int,
        resolved: Sequence[Resolved],
        queryset: QuerySet | None,
    ) -> None:
        self.cursor, self.doc, self.agent_id, self.resolved = cursor, doc, agent_id, resolved
        self.extra, self.params = restrict_sql(queryset, "d", "id")
        self.exact = sorted({x for k, lex in resolved if k != "prefix" for x in lex})
        self.prefixes = [_like_prefix(lex[0]) for k, lex in resolved if k == "prefix"]
        # Positions are only needed for phrases; otherwise the count of positions is tf.
        self.phrases = any(k == "phrase" for k, _ in resolved)

    def __call__(self, units: Sequence[Resolved]) -> list[tuple[object, int, dict]]:
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


def _score(
    fetch: _Fetcher,
    rows: list[tuple[object, int, dict]],
    resolved: Sequence[Resolved],
    idf: dict[Resolved, float],
    avg_len: float,
) -> list[tuple[object, float]]:
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


# word -> its lexemes under CONFIG, which is fixed in code: a query's words are stemmed by
# the database once per process, not once per query (a round trip of every search).
_STEMMED: dict[str, list[str]] = {}
_STEMMED_MAX = 20_000


def _stems(cursor: CursorWrapper, words: set[str]) -> dict[str, list[str]]:
    """Each word's lexemes under CONFIG; the words not seen before are stemmed in SQL."""
    known = {w: _STEMMED.get(w) for w in words}
    stems = {w: lex for w, lex in known.items() if lex is not None}
    new = sorted(w for w, lex in known.items() if lex is None)
    if new:
        cursor.execute(
            f"SELECT w, coalesce((SELECT array_agg(lexeme) FROM unnest("
            f"to_tsvector('{CONFIG}', w))), '{{}}') FROM unnest(%s::text[]) w",
            [new],
        )
        fetched = {w: list(lex) for w, lex in cursor.fetchall()}
        if len(_STEMMED) + len(fetched) > _STEMMED_MAX:
            _STEMMED.clear()
        _STEMMED.update(fetched)
        stems.update(fetched)
    return stems


def _resolve_units(cursor: CursorWrapper, units: Sequence[q.Unit]) -> list[Resolved]:
    """Each distinct unit as (kind, lexemes), its words stemmed by the configuration."""
    stems = _stems(cursor, {w for u in units for w in u.words})
    # (kind, lexemes) per unit; a word may stem to nothing (never with this config).
    resolved: list[Resolved] = []
    for unit in units:
        lexemes = tuple(x for w in unit.words for x in stems.get(w, [])[:1])
        if lexemes and (unit.kind, lexemes) not in resolved:
            kind = "phrase" if unit.kind == "phrase" and len(lexemes) > 1 else unit.kind
            resolved.append((kind, lexemes))
    return resolved


def _unit_frequencies(
    cursor: CursorWrapper, doc: str, agent_id: int, resolved: Sequence[Resolved]
) -> dict[Resolved, int]:
    """df of the prefixes and phrases, which have none maintained: counted through the GIN
    index."""
    df = {}
    for kind, lexemes in resolved:
        if kind != "term":
            cursor.execute(
                f"SELECT count(*) FROM {doc} WHERE agent_id = %s AND tsv @@ %s::tsquery",
                [agent_id, _unit_tsquery(kind, lexemes)],
            )
            df[(kind, lexemes)] = int(cursor.fetchone()[0])
    return df


@dataclass(frozen=True)
class Statistics:
    idf: dict[Resolved, float]  # per unit
    avg_len: float
    postings: int  # the term units' postings in all (the sum of their maintained df)


def _read_statistics(
    cursor: CursorWrapper, table: str, agent_id: int, resolved: Sequence[Resolved]
) -> Statistics | None:
    """The agent's statistics for these units, or None if it has no documents. N, the total
    length and the terms' df come in one statement."""
    doc, term, agg = bm25_tables(table)
    terms = sorted({x[1][0] for x in resolved if x[0] == "term"})
    cursor.execute(
        f"SELECT a.n_docs, a.total_len, t.terms, t.dfs FROM {agg} a CROSS JOIN "
        f"(SELECT array_agg(term) AS terms, array_agg(df) AS dfs FROM {term} "
        f"WHERE agent_id = %s AND term = ANY(%s)) t WHERE a.agent_id = %s",
        [agent_id, terms, agent_id],
    )
    row = cursor.fetchone()
    if row is None or not row[0]:
        return None
    n_docs, total_len, found, dfs = row
    df: dict[Resolved, int] = {
        ("term", (t,)): int(n) for t, n in zip(found or [], dfs or [], strict=True)
    }
    df.update(_unit_frequencies(cursor, doc, agent_id, resolved))
    idf = {u: bm25_idf(int(n_docs), df.get(u, 0)) for u in resolved}
    postings = sum(n for u, n in df.items() if u[0] == "term")
    return Statistics(idf=idf, avg_len=float(total_len) / float(n_docs), postings=postings)


def _scored(
    cursor: CursorWrapper,
    corpus: Corpus,
    agent_id: int,
    resolved: Sequence[Resolved],
    stats: Statistics,
    limit: int,
    queryset: QuerySet | None,
) -> list[tuple[object, float]]:
    """(pk, score) candidates: from the postings alone, or in full where units need it."""
    others = [u for u in resolved if u[0] != "term"]
    if not others:
        return _postings_top_k(cursor, corpus, agent_id, stats, limit, queryset)
    # Phrases and prefixes: the documents matching them (few, usually) are scored in full
    # from their tsvectors; every other document's score is its term part, so the
    # postings' top (limit + |P|) holds the rest of the exact top k.
    fetch = _Fetcher(cursor, bm25_tables(corpus.table)[0], agent_id, resolved, queryset)
    full = dict(_score(fetch, fetch(others), resolved, stats.idf, stats.avg_len))
    scored = list(full.items())
    if len(others) < len(resolved):
        depth = limit + len(full)
        rest = _postings_top_k(cursor, corpus, agent_id, stats, depth, queryset)
        scored += [(pk, sc) for pk, sc in rest if pk not in full]
    return scored


def keyword(scope: Scope, units: Sequence[q.Unit]) -> list[Hit]:
    """Okapi BM25 over the GIN candidates, statistics per agent; ties by primary key."""
    corpus, agent_id, limit = scope.corpus, scope.agent_id, scope.limit
    with read_connection().cursor() as cursor:
        resolved = _resolve_units(cursor, units)
        if not resolved:
            return []
        stats = _read_statistics(cursor, corpus.table, agent_id, resolved)
        if stats is None:
            return []
        scored = _scored(cursor, corpus, agent_id, resolved, stats, limit, scope.queryset)
    scored.sort(key=lambda r: (-r[1], str(r[0])))
    return [Hit(object_id=pk, score=s, leg="bm25") for pk, s in scored[:limit] if s > 0]
