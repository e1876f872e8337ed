"""DATABASE_REPLICA_URL: one or more read replicas (comma-separated URLs) as the database
aliases replica1, replica2, ... beside `default`, read through apps.core.replicas' router.

A replica is a copy of the primary (PostgreSQL streaming replication), so it must be the
same backend with the same options: a URL of another backend, or any replica of an SQLite
database (a file has no replica), is refused at startup rather than discovered by a query.
"""

import copy

import environ
from django.core.exceptions import ImproperlyConfigured

SQLITE = "django.db.backends.sqlite3"


def replica_databases(primary: dict, urls: list[str]) -> dict[str, dict]:
    """The DATABASES entries of `urls`, in order: {"replica1": {...}, ...}. Each has the
    primary's options (connection age, health checks, OPTIONS) under the URL's own."""
    replicas: dict[str, dict] = {}
    for number, url in enumerate((u.strip() for u in urls if u.strip()), start=1):
        alias = f"replica{number}"
        config = environ.Env.db_url_config(url)
        engine = config.get("ENGINE")
        if primary["ENGINE"] == SQLITE or engine == SQLITE:
            raise ImproperlyConfigured(
                f"DATABASE_REPLICA_URL: {alias} ({_safe(url)}) cannot be used: read replicas "
                "need PostgreSQL streaming replication, and SQLite has none. Unset "
                "DATABASE_REPLICA_URL, or set DATABASE_URL and it to PostgreSQL."
            )
        if engine != primary["ENGINE"]:
            raise ImproperlyConfigured(
                f"DATABASE_REPLICA_URL: {alias} ({_safe(url)}) is {engine}, but the primary "
                f"(DATABASE_URL) is {primary['ENGINE']}: a replica is a copy of the primary, "
                "so both must be the same backend."
            )
        options = {**copy.deepcopy(primary.get("OPTIONS", {})), **config.get("OPTIONS", {})}
        # A replica that stops answering must cost a search little before the router falls
        # back to the primary (libpq waits forever by default).
        options.setdefault("connect_timeout", 3)
        replicas[alias] = {
            **{k: v for k, v in primary.items() if k in ("CONN_MAX_AGE", "CONN_HEALTH_CHECKS")},
            **config,
            "OPTIONS": options,
        }
    return replicas


def _safe(url: str) -> str:
    """The URL without its password, for an error message."""
    scheme, _, rest = url.partition("://")
    credentials, at, host = rest.rpartition("@")
    if not at:
        return url
    return f"{scheme}://{credentials.split(':', 1)[0]}@{host}"
