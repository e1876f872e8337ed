"""Every keyword corpus keeps the triggers that keep its side tables exact, after every
migration. SQLite drops a table's triggers when a migration remakes it (a NOT NULL column, a
changed constraint), as issue 26's `user` columns did before their migrations rebuilt them.
"""

import pytest
from django.db import connection

from apps.search.backends.base import fts_table, vec_table
from apps.search.corpora import all_corpora

pytestmark = pytest.mark.django_db


def _keyword_corpora():
    return [c for c in all_corpora() if c.text_fields]


@pytest.mark.sqlite
def test_every_sqlite_side_table_has_its_triggers():
    expected = set()
    for corpus in _keyword_corpora():
        tables = [fts_table(corpus.table)]
        if corpus.vector_field and corpus.vector_index:
            tables.append(vec_table(corpus.table))
        expected |= {(f"{t}_{s}", corpus.table) for t in tables for s in ("ai", "ad", "au")}
    with connection.cursor() as cursor:
        cursor.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'")
        found = set(cursor.fetchall())

    assert expected - found == set()
    assert len(expected) == 6 * 3 + 5 * 3  # six keyword corpora, five with a vec0 table


@pytest.mark.postgres
def test_every_postgres_bm25_table_has_its_triggers():
    expected = {
        (f"{c.table}_bm25_{s}", c.table)
        for c in _keyword_corpora()
        for s in ("ins", "del", "upd", "trunc")
    }
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.tgname, c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
            "WHERE NOT t.tgisinternal"
        )
        found = set(cursor.fetchall())

    assert expected - found == set()
    assert len(expected) == 6 * 4
