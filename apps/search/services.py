"""Writes the search layer owns: repairing its side tables."""

from django.db import connection, transaction

from apps.search.backends import sqlite
from apps.search.backends.base import table_spec
from apps.search.corpora import all_corpora


def search_indexes_rebuild() -> list[str]:
    """Re-derive SQLite's FTS5 and vec0 side tables from their source tables; return the
    corpora rebuilt. They are keyed by rowid, which VACUUM may renumber; PostgreSQL's side
    tables are keyed by primary key and need nothing (returns [])."""
    if connection.vendor != "sqlite":
        return []
    rebuilt = []
    for corpus in all_corpora():
        if not corpus.text_fields:
            continue  # no side tables: vectors without an ANN index are compared in Python
        with transaction.atomic(), connection.cursor() as cursor:
            spec = table_spec(
                corpus.model,
                connection,
                agent_field=corpus.agent_field,
                text_fields=corpus.text_fields,
                vector_field=corpus.vector_field if corpus.vector_index else None,
            )
            tables = connection.introspection.table_names(cursor)
            for statement in sqlite.rebuild_sql(spec, tables=tables):
                cursor.execute(statement)
        rebuilt.append(corpus.name)
    return rebuilt
