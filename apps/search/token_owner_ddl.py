"""The owner key of token-state tables deletes in the database too (ON DELETE CASCADE on
PostgreSQL), not only through Django's collector.

The collector deletes a row's states, then the row. An embedding sweep writes states without
the owner's lock, so states it commits between the two statements would outlive the
collector's delete, and the row's DELETE would fail at commit (the deferred foreign key): a
500 where the fuzz popped a message while it was embedded. The database's cascade runs with
the DELETE and sees them. SQLite runs one writer at a time, so its key needs no change.
"""

from django.db import migrations


def _owner_constraint(schema_editor, model) -> tuple[str, str, str, str, str]:
    """(table, constraint, column, referenced table, its column) of the owner key."""
    field = model._meta.pk  # token_owner(): the owner key is the primary key
    table = model._meta.db_table
    target = field.related_model._meta.db_table
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE contype = 'f' "
            "AND conrelid = %s::regclass AND confrelid = %s::regclass",
            [table, target],
        )
        [(name,)] = cursor.fetchall()
    return table, name, field.column, target, field.target_field.column


def _set_delete_rule(app_label: str, model_name: str, rule: str):
    def apply(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        q = schema_editor.quote_name
        model = apps.get_model(app_label, model_name)
        table, name, column, target, key = _owner_constraint(schema_editor, model)
        # One statement: the key is never missing, not even for a concurrent writer.
        schema_editor.execute(
            f"ALTER TABLE {q(table)} DROP CONSTRAINT {q(name)}, ADD CONSTRAINT {q(name)} "
            f"FOREIGN KEY ({q(column)}) REFERENCES {q(target)} ({q(key)}) {rule} "
            "DEFERRABLE INITIALLY DEFERRED"
        )

    return apply


def token_owner_cascade(app_label: str, model_name: str) -> migrations.RunPython:
    """The migration step that gives a TokenStates subclass's owner key ON DELETE CASCADE."""
    return migrations.RunPython(
        _set_delete_rule(app_label, model_name, "ON DELETE CASCADE"),
        _set_delete_rule(app_label, model_name, "ON DELETE NO ACTION"),
    )
