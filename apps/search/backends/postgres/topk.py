# ruff: noqa: S608 - identifiers come from model metadata; user values are parameters.
"""Exact top-k BM25 over the postings with early termination (MaxScore; docs/search.md).

Every document's score is the sum of its terms' contributions, and a term's contribution
only grows with tf and shrinks with length. So, per term, the postings grouped by tf and
read shortest first come in falling score order, which the `(agent, term, tf, len, doc)`
index serves. That gives, without scoring anything:

- each term's upper bound (its best posting), and
- for a threshold θ (a score the k-th result is known to reach), each term's cutoff: a
  posting scoring below θ minus every other term's bound cannot belong to a top-k document.

θ comes from fully scoring each term's best postings. Terms whose bounds sum below θ are
non-essential: a document holding only those cannot reach it. The essential terms' postings
above their cutoffs are the candidates, scored in full through the primary key. The result
equals the exhaustive sum (tests/search/test_bm25_topk.py), ties at the k-th score aside.

A query whose terms hold few postings in all (an agent of a few thousand messages) skips
all of that: one statement sums every posting of its terms, the exhaustive sum itself.
"""

from dataclasses import dataclass
from typing import Any

from django.db.backends.utils import CursorWrapper
from django.db.models import QuerySet

from apps.search.backends.base import restrict_sql
from apps.search.ranking import K1, B

# Relative slack on θ: float sums in another order must not push a tied document out.
_EPS = 1e-9
# A restriction matching at most this many documents is scored directly, document first.
_NARROW = 2000
_SENTINEL_LEN = 2**31 - 1
# Queries of more terms than this are summed whole (see top_k).
_PRUNED_TERMS = 3
# Terms holding at most this many postings in all are summed in one statement (_summed).
# Measured at 1,000 messages per agent (top 50): summing 1,055 / 4,267 / 9,021 postings took
# 0.8 / 2.0 / 3.5 ms, MaxScore over the same terms 2.6 / 3.6 / 10.1 ms (three round trips),
# and scoring the archive restriction's tsvectors (_narrow) ~40 ms.
_SUMMED = 10_000


def _impact(tf: int, length: int, avg_len: float) -> float:
    """A posting's BM25 weight per unit of idf."""
    return tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / avg_len))


def _max_len(tf: int, ratio: float, avg_len: float) -> int:
    """The longest document in which `tf` occurrences still weigh >= ratio (per idf)."""
    if ratio <= 0:
        return _SENTINEL_LEN
    bound = (tf * (K1 + 1.0) / ratio - tf - K1 * (1.0 - B)) * avg_len / (K1 * B)
    return max(-1, min(_SENTINEL_LEN, int(bound + 1e-6)))


# One posting's BM25 term: typed constants, as numeric arithmetic per row is 3x slower.
_SCORE = (
    f"w.idf * p.tf * {K1 + 1.0!r}::float8 / (p.tf + {K1!r}::float8 * "
    f"({1.0 - B!r}::float8 + {B!r}::float8 * p.len / %s::float8))"
)


@dataclass
class Term:
    """A query term: idf, its (tf, shortest length) groups and its best weight."""

    term: str
    idf: float
    groups: list[tuple[int, int]]
    bound: float = 0.0


@dataclass(frozen=True)
class Query:
    doc: str
    post: str
    pk_type: str
    agent_id: int
    avg_len: float
    limit: int
    queryset: QuerySet | None
    postings: int | None = None  # the terms' postings in all (sum of their df), if known


def _terms(cursor: CursorWrapper, q: Query, idf: dict[str, float]) -> list[Term]:
    """Each term's distinct tf values with their shortest document (a loose index scan)."""
    cursor.execute(
        f"WITH RECURSIVE g(term, tf) AS ("
        f" SELECT w.term, (SELECT min(tf) FROM {q.post} WHERE agent_id = %s AND term = w.term)"
        f" FROM unnest(%s::text[]) w(term)"
        f" UNION ALL"
        f" SELECT g.term, (SELECT min(tf) FROM {q.post} WHERE agent_id = %s AND term = g.term"
        f" AND tf > g.tf) FROM g WHERE g.tf IS NOT NULL"
        f") SELECT g.term, g.tf, (SELECT min(len) FROM {q.post} WHERE agent_id = %s"
        f" AND term = g.term AND tf = g.tf) FROM g WHERE g.tf IS NOT NULL",
        [q.agent_id, list(idf), q.agent_id, q.agent_id],
    )
    terms = {t: Term(t, w, []) for t, w in idf.items()}
    for term, tf, shortest in cursor.fetchall():
        terms[term].groups.append((int(tf), int(shortest)))
    for t in terms.values():
        t.bound = max((t.idf * _impact(tf, n, q.avg_len) for tf, n in t.groups), default=0.0)
    return [t for t in terms.values() if t.groups]


def _score_docs(
    cursor: CursorWrapper,
    q: Query,
    terms: list[Term],
    cand_sql: str,
    cand_params: list[Any],  # Any: SQL parameters, as restrict_sql and the cursor take them
    floor: float,
    limit: int,
) -> list[tuple[object, float]]:
    """Full scores of the candidate documents (SQL yielding `doc_id`), best first.

    Each candidate's tf per term comes from its own tsvector: one primary-key probe per
    document, whatever the table statistics say (the postings have no (term, doc) key).
    """
    cursor.execute(
        f"WITH cand AS ({cand_sql}) SELECT p.doc_id, sum({_SCORE}) AS score FROM cand c "
        f"CROSS JOIN LATERAL (SELECT id, len, tsv FROM {q.doc} WHERE id = c.doc_id "
        f"AND agent_id = %s OFFSET 0) d "
        f"CROSS JOIN LATERAL (SELECT d.id AS doc_id, u.lexeme, cardinality(u.positions) AS tf, "
        f"d.len FROM unnest(d.tsv) u) p "
        f"JOIN unnest(%s::text[], %s::float8[]) AS w(term, idf) ON w.term = p.lexeme "
        f"GROUP BY p.doc_id HAVING sum({_SCORE}) >= %s "
        f"ORDER BY score DESC, p.doc_id LIMIT %s",
        [
            *cand_params,
            q.avg_len,
            q.agent_id,
            [t.term for t in terms],
            [t.idf for t in terms],
            q.avg_len,
            floor,
            limit,
        ],
    )
    return [(pk, float(score)) for pk, score in cursor.fetchall()]


def _passing(q: Query, scored: list[tuple[object, float]]) -> list[tuple[object, float]]:
    """The scored documents inside the restriction, in order (checked by primary key)."""
    if q.queryset is None or not scored:
        return scored
    ok = set(q.queryset.filter(pk__in=[pk for pk, _ in scored]).values_list("pk", flat=True))
    return [(pk, s) for pk, s in scored if pk in ok]


def _bound(t: Term, shortest: int, avg_len: float) -> float:
    """The most `t` can add to a document at least `shortest` long."""
    return max((t.idf * _impact(tf, max(shortest, n), avg_len) for tf, n in t.groups), default=0.0)


def _longest(terms: list[Term], q: Query, theta: float) -> int:
    """The longest document that can still reach θ: bounds fall with length, so past it the
    postings are not read (found by bisection on the sum of the terms' bounds)."""
    if theta <= 0:
        return _SENTINEL_LEN
    lo, hi = 1, _SENTINEL_LEN
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if sum(_bound(t, mid, q.avg_len) for t in terms) >= theta:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _ranges(terms: list[Term], q: Query, theta: float) -> list[tuple[str, int, float, int]]:
    """(term, tf, idf, longest) per group to read: the shorter of the length past which no
    document reaches θ at all, and the length past which this group's posting weighs less
    than θ minus every other term's bound (such a document cannot reach θ either)."""
    overall = _longest(terms, q, theta)
    total = sum(t.bound for t in terms)
    rows = []
    for t in terms:
        ratio = (theta - (total - t.bound)) / t.idf
        for tf, shortest in t.groups:
            longest = min(overall, _max_len(tf, ratio, q.avg_len))
            if longest >= shortest:
                rows.append((t.term, tf, t.idf, longest))
    return rows


def _scored_sql(q: Query, rows: list[tuple[str, int, float, int]]) -> tuple[str, list]:
    """The postings of each group up to its length, summed per document, best first."""
    columns = [list(c) for c in zip(*rows, strict=True)] if rows else [[], [], [], []]
    sql = (
        f"SELECT p.doc_id, sum({_SCORE}) AS score "
        f"FROM unnest(%s::text[], %s::int[], %s::float8[], %s::int[]) AS w(term, tf, idf, hi) "
        # One index range per group whatever the statistics say; OFFSET 0 keeps it one.
        f"CROSS JOIN LATERAL (SELECT doc_id, tf, len FROM {q.post} WHERE agent_id = %s "
        f"AND term = w.term AND tf = w.tf AND len <= w.hi OFFSET 0) p "
        f"GROUP BY p.doc_id HAVING sum({_SCORE}) >= %s ORDER BY score DESC, p.doc_id LIMIT %s"
    )
    return sql, [q.avg_len, *columns, q.agent_id, q.avg_len]


def _threshold(cursor: CursorWrapper, q: Query, terms: list[Term]) -> float:
    """A score the k-th result reaches, from the postings alone: a document scores at least
    its best single posting, so the k-th best such posting among the shortest documents of
    each (term, tf) group is a floor (0 if fewer than k pass the restriction)."""
    rows = [(t.term, tf, t.idf) for t in terms for tf, _ in t.groups]
    cursor.execute(
        f"SELECT p.doc_id, max({_SCORE}) AS best "
        f"FROM unnest(%s::text[], %s::int[], %s::float8[]) AS w(term, tf, idf) "
        f"CROSS JOIN LATERAL (SELECT doc_id, tf, len FROM {q.post} WHERE agent_id = %s "
        f"AND term = w.term AND tf = w.tf ORDER BY len LIMIT %s) p "
        f"GROUP BY p.doc_id ORDER BY best DESC LIMIT %s",
        [q.avg_len, *[list(c) for c in zip(*rows, strict=True)], q.agent_id, q.limit,
         4 * q.limit],
    )  # fmt: skip
    best = _passing(q, [(pk, float(score)) for pk, score in cursor.fetchall()])
    return best[q.limit - 1][1] * (1.0 - _EPS) if len(best) >= q.limit else 0.0


def _narrow(
    cursor: CursorWrapper, q: Query, terms: list[Term]
) -> list[tuple[object, float]] | None:
    """Score a small restriction's documents directly, or None if it is not small."""
    if q.queryset is None:
        return None
    pks = list(q.queryset.order_by().values_list("pk", flat=True)[: _NARROW + 1])
    if len(pks) > _NARROW:
        return None
    sql = f"SELECT unnest(%s::{q.pk_type}[]) AS doc_id"
    return _score_docs(cursor, q, terms, sql, [pks], 1e-300, q.limit)


def _summed(cursor: CursorWrapper, q: Query, idf: dict[str, float]) -> list[tuple[object, float]]:
    """Every posting of the terms summed per document, restricted in SQL, best first."""
    extra, params = restrict_sql(q.queryset, "p", "doc_id")
    cursor.execute(
        f"SELECT p.doc_id, sum({_SCORE}) AS score "
        f"FROM unnest(%s::text[], %s::float8[]) AS w(term, idf) "
        f"CROSS JOIN LATERAL (SELECT doc_id, tf, len FROM {q.post} WHERE agent_id = %s "
        f"AND term = w.term OFFSET 0) p WHERE true{extra} "
        f"GROUP BY p.doc_id ORDER BY score DESC, p.doc_id LIMIT %s",
        [q.avg_len, list(idf), list(idf.values()), q.agent_id, *params, q.limit],
    )
    return [(pk, float(score)) for pk, score in cursor.fetchall()]


def top_k(cursor: CursorWrapper, q: Query, idf: dict[str, float]) -> list[tuple[object, float]]:
    """The exact top `q.limit` (pk, BM25) over the term postings, best first."""
    if q.postings is not None and q.postings <= _SUMMED:
        return _summed(cursor, q, idf)
    terms = _terms(cursor, q, idf)
    if not terms:
        return []
    narrow = _narrow(cursor, q, terms)
    if narrow is not None:
        return narrow
    if len(terms) > _PRUNED_TERMS:
        # Measured on LoCoMo questions: with more terms their bounds add up far past any
        # floor, nothing is cut, and the floor's own query is pure cost.
        theta, rows = 0.0, [(t.term, tf, t.idf, _SENTINEL_LEN) for t in terms for tf, _ in t.groups]
    else:
        theta = _threshold(cursor, q, terms)
        rows = _ranges(terms, q, theta)
    sql, params = _scored_sql(q, rows)
    fetch = q.limit if q.queryset is None else q.limit * 2
    while True:
        cursor.execute(sql, [*params, max(theta, 1e-300), fetch])
        scored = [(pk, float(score)) for pk, score in cursor.fetchall()]
        passing = _passing(q, scored)
        if len(passing) >= q.limit or len(scored) < fetch:
            return passing[: q.limit]
        fetch *= 4
