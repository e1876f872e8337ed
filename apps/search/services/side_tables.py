# ruff: noqa: S608 - table names come from the corpus registry; values are parameters.
"""Writes the search layer owns: repairing its side tables, and purging what deleted rows
leave in them."""

from collections.abc import Collection

from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper
from django.db.models import Model

from apps.search.backends import sqlite
from apps.search.backends.base import bm25_tables, fts_table, table_spec, trigram_index
from apps.search.corpora import Corpus, all_corpora


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


def search_index_purge(*, agent_id: int, models: Collection[type[Model]]) -> list[str]:
    """Leave no token of the rows just deleted from `models` in their keyword side tables,
    inside the caller's transaction (an erasure's). The triggers already removed the rows'
    documents, postings and vectors; what stays is, on SQLite, the FTS5 segments, which a
    delete only marks (they are rebuilt from the rows left), and on PostgreSQL the agent's
    terms no document holds any more (df 0). Returns the side tables purged."""
    corpora = [c for c in all_corpora() if c.text_fields and c.model in models]
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            return _rebuild_fts5(cursor, corpora)
        purged = []
        for corpus in corpora:
            _, term, _ = bm25_tables(corpus.table)
            # Locked in (agent, term) order, as the triggers' upserts lock them.
            cursor.execute(
                f"DELETE FROM {term} WHERE agent_id = %s AND term IN (SELECT term FROM {term} "
                f"WHERE agent_id = %s AND df <= 0 ORDER BY term FOR UPDATE)",
                [agent_id, agent_id],
            )
            purged.append(term)
        return purged


def _rebuild_fts5(cursor: CursorWrapper, corpora: list[Corpus]) -> list[str]:
    """Rebuild the corpora's FTS5 tables, keyword and contains (trigram), from their rows."""
    existing = set(connection.introspection.table_names(cursor))
    purged = []
    for corpus in corpora:
        tables = [fts_table(corpus.table)]
        tables += [trigram_index(corpus.table, corpus.column(f)) for f in corpus.text_fields]
        for table in tables:
            if table in existing:
                # Not "optimize": a delete writes its terms again with a delete marker, and a
                # merge drops markers only when it writes the index's last level. Optimize
                # skips an index of one segment, and merges segments that share a level into
                # the next one, kept empty levels above it or not (seen: the erased user's
                # word left in a segment). A rebuild indexes only the rows that are left.
                cursor.execute(sqlite.rebuild_statement(table))
                purged.append(table)
    return purged
