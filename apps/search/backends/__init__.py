"""The search backend for the default database, chosen by vendor (django-modelsearch style)."""

from functools import cache

from django.db import connection

from apps.search.backends.base import SearchBackend


@cache
def _backend(vendor: str) -> SearchBackend:
    if vendor == "postgresql":
        from apps.search.backends.postgres import PostgresBackend

        return PostgresBackend()
    if vendor == "sqlite":
        from apps.search.backends.sqlite import SQLiteBackend

        return SQLiteBackend()
    raise NotImplementedError(f"no search backend for database vendor {vendor!r}")


def get_backend() -> SearchBackend:
    """The backend for the default connection's vendor (PostgreSQL or SQLite)."""
    return _backend(connection.vendor)
