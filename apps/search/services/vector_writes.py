# ruff: noqa: S608 - the SQL interpolates only model metadata (table, columns, types); values are parameters.
"""The writes of an embedding batch: its vectors in one statement, `UPDATE ... FROM (VALUES ...)`
on both backends, then its rows' token states (`states_write`).

Each row's vector is written only where every embedded field still holds the value read
with the row, so a row edited while its batch was in the embedder keeps no stale vector: it
stays pending and the next sweep embeds its new text. The statement returns the keys it
wrote (their token states follow in the same transaction). One statement instead of one
UPDATE per row matters most on PostgreSQL, whose BM25 triggers are per statement; SQLite's
per-row FTS5 and vec0 triggers fire for UPDATE ... FROM as for any UPDATE (SQLite >= 3.33,
RETURNING >= 3.35).
"""

from collections.abc import Sequence

import numpy as np
from django.db import connections, models, router
from django.db.backends.base.base import BaseDatabaseWrapper

from apps.search.corpora import Corpus

# SQLite allows 32,766 bound parameters (since 3.32), PostgreSQL 65,535: stay under both.
MAX_PARAMETERS = 30_000


def vectors_write(
    c: Corpus, rows: Sequence[models.Model], vectors: Sequence[np.ndarray], label: str
) -> list:
    """Set each row's vector and label and clear its error, where its embedded fields are
    unchanged since `rows` were read (their values are on the instances); the keys written."""
    per_row = 2 + len(c.embed_fields)
    chunk = max(1, MAX_PARAMETERS // per_row)
    written: list = []
    for start in range(0, len(rows), chunk):
        written += _write_chunk(
            c, rows[start : start + chunk], vectors[start : start + chunk], label
        )
    return written


def _field(model: type[models.Model], name: str) -> models.Field:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field)  # corpora._check: corpus fields are columns
    return field


def _write_chunk(
    c: Corpus, rows: Sequence[models.Model], vectors: Sequence[np.ndarray], label: str
) -> list:
    model = c.model
    conn = connections[router.db_for_write(model)]
    meta = model._meta
    pk = _field(model, meta.pk.name if meta.pk else "pk")
    vector_field, model_field = (_field(model, f) for f in c.vector_fields)
    error_field = _field(model, c.error_field)
    fields = [_field(model, name) for name in c.embed_fields]
    pg = conn.vendor == "postgresql"

    def col(field: models.Field) -> str:
        return f"{conn.ops.quote_name(meta.db_table)}.{conn.ops.quote_name(str(field.column))}"

    def name(field: models.Field) -> str:
        return conn.ops.quote_name(str(field.column))

    columns = [pk, vector_field, *fields]
    # PostgreSQL types each VALUES column from its first row; SQLite needs no casts.
    casts = [f"::{f.cast_db_type(conn)}" if pg else "" for f in columns]
    typed = "(" + ", ".join(f"%s{cast}" for cast in casts) + ")"
    plain = "(" + ", ".join("%s" for _ in columns) + ")"
    values = ", ".join([typed] + [plain] * (len(rows) - 1))
    params: list = []
    for row, vector in zip(rows, vectors, strict=True):
        params.append(pk.get_db_prep_value(row.pk, conn))
        params.append(vector_field.get_db_prep_value(vector, conn))
        # None is SQL NULL: a JSONField would prepare it as the JSON text 'null'.
        params += [_prepared(f, getattr(row, f.attname), conn) for f in fields]
    same = "IS NOT DISTINCT FROM" if pg else "IS"
    unchanged = " AND ".join(f"{col(f)} {same} v.column{i + 3}" for i, f in enumerate(fields))
    sql = (
        f"UPDATE {conn.ops.quote_name(meta.db_table)} SET {name(vector_field)} = v.column2, "
        f"{name(model_field)} = %s, {name(error_field)} = %s "
        f"FROM (VALUES {values}) AS v "
        f"WHERE {col(pk)} = v.column1 AND {unchanged} "
        f"RETURNING {col(pk)}"
    )
    with conn.cursor() as cursor:
        cursor.execute(sql, [label, "", *params])
        return [pk.to_python(value) for (value,) in cursor.fetchall()]


def _prepared(field: models.Field, value: object, conn: BaseDatabaseWrapper) -> object:
    return None if value is None else field.get_db_prep_value(value, conn)


def states_write(corpus: Corpus, codes: Sequence[tuple[object, np.ndarray]], space: str) -> None:
    """Replace these rows' states (pk, int8 codes tokens x dims); call inside the transaction
    that writes their vectors."""
    store = corpus.tokens
    if store is None or not codes:
        return
    manager = store.model._default_manager
    owner = store.owner_field
    manager.filter(**{f"{owner}__in": [pk for pk, _ in codes]}).delete()
    manager.bulk_create(
        [
            store.model(
                **{
                    f"{owner}_id": pk,
                    store.space_field: space,
                    store.count_field: int(c.shape[0]),
                    store.codes_field: np.ascontiguousarray(c, dtype=np.int8).tobytes(),
                }
            )
            for pk, c in codes
        ]
    )
