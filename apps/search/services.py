"""Writes the search layer owns: repairing its side tables."""

from django.db import connection, transaction

from apps.search.backends import sqlite
from apps.search.backends.base import TableSpec
from apps.search.corpora import Corpus, all_corpora


def _spec(corpus: Corpus) -> TableSpec:
    meta = corpus.model._meta
    vector = meta.get_field(corpus.vector_field) if corpus.vector_field else None
    return TableSpec(
        table=corpus.table,
        pk_column=corpus.pk_column,
        pk_type=meta.pk.rel_db_type(connection),
        agent_column=corpus.agent_column,
        text_columns=tuple(corpus.column(f) for f in corpus.text_fields),
        vector_column=vector.column if vector is not None else None,
        dimensions=getattr(vector, "dimensions", None),
    )


def search_indexes_rebuild() -> list[str]:
    """Re-derive SQLite's FTS5 and vec0 side tables from their source tables; return the
    corpora rebuilt. They are keyed by rowid, which VACUUM may renumber; PostgreSQL's side
    tables are keyed by primary key and need nothing (returns [])."""
    if connection.vendor != "sqlite":
        return []
    rebuilt = []
    for corpus in all_corpora():
        with transaction.atomic(), connection.cursor() as cursor:
            for statement in sqlite.rebuild_sql(_spec(corpus)):
                cursor.execute(statement)
        rebuilt.append(corpus.name)
    return rebuilt
