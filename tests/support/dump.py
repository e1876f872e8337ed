"""The whole database as text, to look for a string anywhere in it: every table the catalog
lists (SQLite: sqlite_master's, FTS5 and vec0 shadow tables included; PostgreSQL: every
table of the schema, each row cast to text), and, on SQLite, the bytes of the files."""

from pathlib import Path

from django.db import connection


def database_text() -> dict[str, str]:
    """Each table's rows as one lower-cased text (bytes read as Latin-1, so a string stored
    in a blob, such as an FTS5 index page, is found as it is)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            tables = [name for (name,) in cursor.fetchall()]
            select = "SELECT * FROM {}"
        else:
            cursor.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = "
                "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"
            )
            tables = [name for (name,) in cursor.fetchall()]
            select = "SELECT t::text FROM {} AS t"
        out = {}
        for table in tables:
            cursor.execute(select.format(connection.ops.quote_name(table)))
            out[table] = "\n".join(_text(row) for row in cursor.fetchall()).lower()
    return out


def _text(row: tuple) -> str:
    return "\t".join(_value(v) for v in row)


def _value(value: object) -> str:
    if isinstance(value, memoryview):
        value = bytes(value)
    return value.decode("latin-1") if isinstance(value, bytes) else str(value)


def tables_with(strings: list[str]) -> dict[str, list[str]]:
    """The tables whose text holds any of `strings` (case-insensitive): table -> strings."""
    found = {}
    for table, text in database_text().items():
        held = [s for s in strings if s.lower() in text]
        if held:
            found[table] = held
    return found


def sqlite_files() -> list[Path]:
    """SQLite: the database file and its WAL (which holds pages as they were written)."""
    name = Path(connection.settings_dict["NAME"])
    return [name, name.with_name(name.name + "-wal")]


def file_bytes_with(strings: list[str]) -> dict[str, list[str]]:
    """SQLite: which of `strings` the files' bytes hold (exactly, and lower-cased as FTS5
    stores tokens): file name -> strings."""
    found = {}
    for path in sqlite_files():
        data = path.read_bytes() if path.exists() else b""
        held = [s for s in strings if s.encode() in data or s.lower().encode() in data]
        if held:
            found[path.name] = held
    return found
