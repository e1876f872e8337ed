"""Each foreign key's database rule matches its Django `on_delete` on PostgreSQL: CASCADE
and SET_NULL happen in the database too, not only in Django's collector.

The collector deletes (or nulls) the rows that point at a row, then the row. A writer that
does not hold the row's lock (an embedding sweep writing token states, an append to a
session being removed) can commit a new pointing row between the two statements; with
NO ACTION the row's DELETE then fails its deferred key at commit, a 500 (the fuzz popped a
message while it was embedded). The database's rule runs with the DELETE and sees that row.
SQLite runs one writer at a time, so its keys need no rule.

A migration that adds or alters a foreign key runs `match_delete_rules` after it
(tests/core/test_delete_rules.py fails until one does).
"""

from django.apps import apps as installed
from django.apps.registry import Apps
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.backends.utils import CursorWrapper

# Django's on_delete -> PostgreSQL's ON DELETE. Others (PROTECT, RESTRICT, DO_NOTHING) keep
# NO ACTION: Django refuses or leaves them itself.
RULES: dict[object, str] = {models.CASCADE: "CASCADE", models.SET_NULL: "SET NULL"}
# pg_constraint.confdeltype of each rule.
CODES = {"CASCADE": "c", "SET NULL": "n", "NO ACTION": "a"}


def delete_rule(field: models.Field) -> str:
    """The ON DELETE rule the database should hold for a foreign key field."""
    assert field.remote_field is not None
    return RULES.get(field.remote_field.on_delete, "NO ACTION")


def project_foreign_keys(registry: Apps = installed) -> list[models.ForeignKey]:
    """The foreign keys (one-to-one included) of memoryhub's own models, in `registry` (the
    installed apps, or a migration's historical state)."""
    labels = {c.label for c in installed.get_app_configs() if c.name.startswith("apps.")}
    return [
        field
        for model in registry.get_models()
        if model._meta.app_label in labels and model._meta.managed and not model._meta.proxy
        for field in model._meta.local_fields
        if isinstance(field, models.ForeignKey) and field.db_constraint  # type: ignore[attr-defined]
    ]


def _constraint(cursor: CursorWrapper, table: str, column: str) -> tuple[str, str, bool] | None:
    """(name, confdeltype, validated) of the foreign key constraint on `table`.`column`."""
    cursor.execute(
        "SELECT c.conname, c.confdeltype, c.convalidated FROM pg_constraint c "
        "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] "
        "WHERE c.contype = 'f' AND c.conrelid = %s::regclass AND a.attname = %s "
        "AND cardinality(c.conkey) = 1",
        [table, column],
    )
    row = cursor.fetchone()
    return (row[0], row[1], row[2]) if row else None


def _match(apps: Apps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    q = schema_editor.quote_name
    for field in project_foreign_keys(apps):
        table, column = field.model._meta.db_table, field.column
        rule = delete_rule(field)
        with connection.cursor() as cursor:
            found = _constraint(cursor, table, column)
        if found is None:
            continue
        name, code, validated = q(found[0]), found[1], found[2]
        if code != CODES[rule]:
            # One statement, so the key is never missing, not even for a concurrent writer;
            # NOT VALID, so it holds the table's exclusive lock only for the swap, not for a
            # check of every row (a million messages). The check follows under a lock that
            # lets writes go on (the migration is not atomic: each statement commits).
            target = field.related_model._meta.db_table
            key = field.target_field.column
            assert key is not None  # a foreign key targets a concrete column
            schema_editor.execute(
                f"ALTER TABLE {q(table)} DROP CONSTRAINT {name}, ADD CONSTRAINT {name} "
                f"FOREIGN KEY ({q(column)}) REFERENCES {q(target)} ({q(key)}) "
                f"ON DELETE {rule} DEFERRABLE INITIALLY DEFERRED NOT VALID"
            )
        if code != CODES[rule] or not validated:  # not validated: a run stopped between
            schema_editor.execute(f"ALTER TABLE {q(table)} VALIDATE CONSTRAINT {name}")


def match_delete_rules() -> migrations.RunPython:
    """The migration step that sets every project foreign key's database rule to match its
    on_delete (idempotent; a no-op on SQLite), in a migration with `atomic = False`.
    Reversing it leaves the rules, which are harmless to Django's own deletes."""
    return migrations.RunPython(_match, migrations.RunPython.noop)
