from django.db import migrations


def create_vector_extension(apps, schema_editor):
    # PostgreSQL only; SQLite gets sqlite-vec on each connection (apps/core/sqlite_connection.py).
    # CREATE EXTENSION vector needs a superuser (vector.control is not trusted).
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("CREATE EXTENSION IF NOT EXISTS vector")


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    operations = [migrations.RunPython(create_vector_extension, migrations.RunPython.noop)]
