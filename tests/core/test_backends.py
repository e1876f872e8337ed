"""Each deployment's database has its vector extension and full-text engine."""

import numpy as np
import pytest
from django.db import connection

from apps.conversations.models import Message
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db


@pytest.mark.sqlite
def test_sqlite_runs_wal_with_sqlite_vec_and_fts5_bm25():
    with connection.cursor() as cursor:
        cursor.execute("SELECT vec_version()")
        assert cursor.fetchone()[0].startswith("v0.1.")
        cursor.execute("CREATE VIRTUAL TABLE temp.t USING fts5(body)")
        cursor.execute("INSERT INTO temp.t(body) VALUES ('cat cat dog'), ('dog'), ('bird')")
        cursor.execute("SELECT body FROM temp.t WHERE t MATCH 'cat OR dog' ORDER BY bm25(t)")
        assert [r[0] for r in cursor.fetchall()] == ["cat cat dog", "dog"]
        cursor.execute("SELECT vec_distance_cosine(vec_f32('[1, 0]'), vec_f32('[0, 1]'))")
        assert cursor.fetchone()[0] == pytest.approx(1.0)


@pytest.mark.sqlite
def test_sqlite_file_database_uses_wal(tmp_path):
    import sqlite3

    from django.db.backends.sqlite3.base import DatabaseWrapper

    wrapper = DatabaseWrapper(
        {**connection.settings_dict, "NAME": str(tmp_path / "wal.sqlite3")}, alias="wal"
    )
    try:
        with wrapper.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            assert cursor.fetchone()[0] == "wal"
            cursor.execute("PRAGMA busy_timeout")
            assert cursor.fetchone()[0] == 20000
            cursor.execute("SELECT vec_version()")
            assert cursor.fetchone()[0].startswith("v0.1.")
    finally:
        wrapper.close()
    assert sqlite3.sqlite_version_info >= (3, 45)


@pytest.mark.postgres
def test_postgres_has_pgvector_from_the_migration():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert cursor.fetchone()[0].startswith("0.8")
        cursor.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = 'conversations_message'::regclass AND attname = 'embedding'"
        )
        assert cursor.fetchone()[0] == "vector(384)"


def test_embedding_round_trips_as_float32_on_either_backend():
    vector = np.linspace(-1, 1, 384, dtype=np.float32)
    message = MessageFactory(embedding=vector)

    stored = Message.objects.get(pk=message.pk).embedding

    assert stored.dtype == np.float32
    assert stored.shape == (384,)
    np.testing.assert_allclose(stored, vector, rtol=1e-6)


def test_wrong_embedding_size_is_refused():
    with pytest.raises(ValueError, match="expected 384 dimensions"):
        MessageFactory(embedding=np.zeros(3))
