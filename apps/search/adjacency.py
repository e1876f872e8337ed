# ruff: noqa: S608 - raw SQL interpolates only model metadata (table, columns), ints, fixed words.
"""Neighbours in a corpus's session order: the rows right before and after each given row.

Used by neighbour smoothing (apps/search/hybrid.py) and by context windows around hits. The
corpus names its session field and its order fields (e.g. created_at, id); a row's
neighbours are the rows of the same session next to it in that order.
"""

from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import Field, Model

from apps.core.meta import column_of, concrete_field
from apps.core.replicas import read_connection
from apps.search.corpora import Corpus, get_corpus
from apps.search.ranking import FusedHit

# {(corpus name, pk): the pks of the rows right before and after it in its session}
Neighbours = dict[tuple[str, object], list]
# A statement's parameters, as Django's cursor takes them.
Params = list[Any]  # Any: the cursor's parameter type is a wide union


def _fields(corpus: Corpus) -> list[Field]:
    return [concrete_field(corpus.model, f) for f in corpus.order_fields]


def _session_field(corpus: Corpus) -> str:
    """Neighbours are asked only of a corpus whose rows belong to sessions."""
    if corpus.session_field is None:
        raise ValueError(f"corpus {corpus.name!r} has no session field")
    return corpus.session_field


def _layout(corpus: Corpus) -> tuple[str, str, Field, list[Field]]:
    """What the neighbour SQL names: the corpus's table, pk column, session field and order
    fields."""
    session = concrete_field(corpus.model, _session_field(corpus))
    return corpus.table, corpus.pk_column, session, _fields(corpus)


def _postgres_sql(
    corpus: Corpus, rows: Sequence[Model], before: int, after: int
) -> tuple[str, Params, int]:
    # One plan with an index probe per row; a UNION of hundreds of subqueries spends more
    # time planning than running.
    table, pk, session, order = _layout(corpus)
    ccols = ", ".join(f"c.{f.column}" for f in order)
    arrays = ", ".join(f"%s::{f.db_type(connection)}[]" for f in [session, *order])
    names = ", ".join(["s", *(column_of(f) for f in order)])
    sides = _sides(table, pk, session, "c.s", order, ccols, before, after)
    sql = (
        f"SELECT c.i, n.side, n.id FROM unnest({arrays}) WITH ORDINALITY AS c({names}, i) "
        f"CROSS JOIN LATERAL ({' UNION ALL '.join(sides)}) n"
    )
    params = [[getattr(r, session.attname) for r in rows]]
    params += [[getattr(r, f.attname) for r in rows] for f in order]
    return sql, params, 1  # WITH ORDINALITY counts from 1


def _postgres_ids_sql(
    corpus: Corpus, ids: Sequence[object], before: int, after: int
) -> tuple[str, Params]:
    # The same plan as _postgres_sql, driven by primary keys: the rows' session and order
    # values come from a join instead of a round trip that loads the rows first.
    table, pk, session, order = _layout(corpus)
    ccols = ", ".join(f"c0.{f.column}" for f in order)
    sides = _sides(table, pk, session, f"c0.{session.column}", order, ccols, before, after)
    pk_type = corpus.model._meta.pk.db_type(connection)
    sql = (
        f"SELECT c.i, n.side, n.id FROM unnest(%s::{pk_type}[]) WITH ORDINALITY AS c(k, i) "
        f"JOIN {table} c0 ON c0.{pk} = c.k "
        f"LEFT JOIN LATERAL ({' UNION ALL '.join(sides)}) n ON true"
    )
    return sql, [list(ids)]


def _sqlite_sql(
    corpus: Corpus, rows: Sequence[Model], before: int, after: int
) -> tuple[str, Params, int]:
    table, pk, session, order = _layout(corpus)
    cols = ", ".join(column_of(f) for f in order)
    marks = ", ".join("%s" for _ in order)
    parts, params = [], []
    for i, row in enumerate(rows):
        key = [session.get_db_prep_value(getattr(row, session.attname), connection)]
        key += [f.get_db_prep_value(getattr(row, f.attname), connection) for f in order]
        for side, op, direction, n in (("b", "<", "DESC", before), ("a", ">", "ASC", after)):
            if n:
                desc = ", ".join(f"{f.column} {direction}" for f in order)
                parts.append(
                    f"SELECT * FROM (SELECT {i} AS i, '{side}' AS side, {pk} AS id "
                    f"FROM {table} WHERE {session.column} = %s AND ({cols}) {op} ({marks}) "
                    f"ORDER BY {desc} LIMIT {int(n)}) AS x{i}{side}"
                )
                params.extend(key)
    return " UNION ALL ".join(parts), params, 0


def adjacent(
    corpus: Corpus, rows: Sequence[Model], before: int, after: int
) -> dict[object, tuple[list, list]]:
    """For each row (loaded with its session and order fields): the pks of up to `before`
    earlier and `after` later rows of its session, nearest first, in one statement."""
    if not rows or (before == 0 and after == 0):
        return {r.pk: ([], []) for r in rows}
    build = _postgres_sql if connection.vendor == "postgresql" else _sqlite_sql
    sql, params, offset = build(corpus, rows, before, after)
    out: dict[object, tuple[list, list]] = {r.pk: ([], []) for r in rows}
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    to_python = corpus.model._meta.pk.to_python
    for i, side, raw in found:
        out[rows[i - offset].pk][0 if side == "b" else 1].append(to_python(raw))
    return out


def adjacent_ids(
    corpus: Corpus, ids: Sequence, before: int, after: int
) -> dict[object, tuple[list, list]]:
    """`adjacent` for rows given by primary key (those that no longer exist are left out),
    in one statement on PostgreSQL, two on SQLite (the rows are loaded first)."""
    if connection.vendor != "postgresql":
        rows = list(corpus.model._default_manager.filter(pk__in=ids).only(*order_only(corpus)))
        return adjacent(corpus, rows, before, after)
    if not ids:
        return {}
    sql, params = _postgres_ids_sql(corpus, ids, before, after)
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    to_python = corpus.model._meta.pk.to_python
    out: dict[object, tuple[list, list]] = {}
    for i, side, raw in found:
        prev, nxt = out.setdefault(to_python(ids[i - 1]), ([], []))
        if side is not None:
            (prev if side == "b" else nxt).append(to_python(raw))
    return out


def order_only(corpus: Corpus) -> tuple[str, ...]:
    """The fields `adjacent` needs loaded on each row."""
    return ("pk", _session_field(corpus), *(f for f in corpus.order_fields if f != "pk"))


def neighbours(hits: Sequence[FusedHit], known: Neighbours) -> Neighbours:
    """The rows right before and after each hit in its session (corpora with sessions only),
    and, from the same statement, those of each of these neighbours: reading two rows on
    each side of a hit gives its neighbours' other neighbours, so a later stage that scores
    the neighbours too needs no second lookup. One statement per corpus, for the hits
    `known` does not already hold; `known` included."""
    out = dict(known)
    for name in dict.fromkeys(h.corpus for h in hits):
        corpus = get_corpus(name)
        if corpus.session_field is None:
            continue
        ids = [h.object_id for h in hits if h.corpus == name and (name, h.object_id) not in out]
        if not ids:
            continue
        derived: Neighbours = {}
        for pk, (prev, nxt) in adjacent_ids(corpus, ids, 2, 2).items():
            out[(name, pk)] = prev[:1] + nxt[:1]
            if prev:
                derived[(name, prev[0])] = [*prev[1:2], pk]
            if nxt:
                derived[(name, nxt[0])] = [pk, *nxt[1:2]]
        for key, found in derived.items():
            out.setdefault(key, found)
    return out


def _sides(
    table: str,
    pk: str,
    session: Field,
    current_session: str,
    order: Sequence[Field],
    ccols: str,
    before: int,
    after: int,
) -> list[str]:
    """The two LATERAL subqueries of the PostgreSQL plans: up to `before` rows before and
    `after` rows after the current row (`ccols`) in its session, nearest first."""
    cols = ", ".join(f"m.{f.column}" for f in order)
    sides = []
    for side, op, direction, n in (("b", "<", "DESC", before), ("a", ">", "ASC", after)):
        desc = ", ".join(f"m.{f.column} {direction}" for f in order)
        sides.append(
            f"(SELECT '{side}' AS side, m.{pk} AS id FROM {table} m "
            f"WHERE m.{session.column} = {current_session} AND ({cols}) {op} ({ccols}) "
            f"ORDER BY {desc} LIMIT {int(n)})"
        )
    return sides
