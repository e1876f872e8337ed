from django.db import migrations

from apps.search.backends.postgres.bm25_ddl import impact_index_sql


def forwards(apps, schema_editor):
    """Postings tables that exist already get the impact index instead of their primary key
    (new ones are created so, apps/search/backends/postgres/bm25_ddl.py)."""
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "AND right(tablename, 9) = '_bm25post'"
        )
        for (table,) in cursor.fetchall():
            schema_editor.execute(impact_index_sql(table))
            # The (agent, term, doc) key served only deletes, which now use the whole key.
            schema_editor.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_pkey")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            "AND right(tablename, 9) = '_bm25post'"
        )
        for (table,) in cursor.fetchall():
            schema_editor.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_pkey")
            schema_editor.execute(
                f"ALTER TABLE {table} ADD PRIMARY KEY (agent_id, term, doc_id) INCLUDE (tf, len)"
            )
            schema_editor.execute(f"DROP INDEX IF EXISTS {table}_impact")


class Migration(migrations.Migration):
    dependencies = [("search", "0002_one_embedding_sweep")]
    operations = [migrations.RunPython(forwards, backwards)]
