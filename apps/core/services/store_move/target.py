"""The PostgreSQL database a store moves into: its URL, creation, migration and connection."""

import os
import subprocess
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

import environ
from django.conf import settings
from django.core.management.color import no_style
from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.migrations.executor import MigrationExecutor
from django.db.utils import OperationalError, load_backend
from django.utils.connection import ConnectionDoesNotExist

from apps.core.errors import ApplicationError

ALIAS = "move_target"
SCHEMES = ("postgres", "postgresql", "pgsql")


class MoveError(ApplicationError):
    """The move cannot start or go on; the message says why and what to do."""


@dataclass(frozen=True)
class Target:
    alias: str
    created: bool  # the database did not exist
    migrations: int  # applied now


def target_config(url: str) -> dict:
    """Django DATABASES settings for a PostgreSQL URL; MoveError for anything else."""
    parts = urlsplit(url)
    if not parts.scheme:
        raise MoveError(f"not a database URL: {url!r} (expected postgres://user@host:5432/name)")
    if parts.scheme not in SCHEMES:
        raise MoveError(
            f"the target must be PostgreSQL (postgres://user@host:5432/name), not {parts.scheme}"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = environ.Env.db_url_config(url)
    if not config.get("NAME"):
        raise MoveError(f"the URL names no database: {url!r} (postgres://user@host:5432/name)")
    # Filled in as Django fills DATABASES at start-up (ATOMIC_REQUESTS, OPTIONS, TEST, …).
    return connections.configure_settings({DEFAULT_DB_ALIAS: config})[DEFAULT_DB_ALIAS]


def _where(config: dict) -> tuple:
    return (config.get("HOST") or "localhost", str(config.get("PORT") or 5432), config["NAME"])


def same_database(source: dict, target: dict) -> bool:
    return "postgresql" in source["ENGINE"] and _where(source) == _where(target)


def unapplied_migrations(alias: str) -> list[str]:
    """Migrations the database at `alias` still lacks (the copy needs today's schema)."""
    executor = MigrationExecutor(connections[alias])
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{m.app_label}.{m.name}" for m, _ in plan]


def open_alias(alias: str, config: dict) -> str:
    """Open `config` as a connection alias that is not in settings.DATABASES (Django's
    "dynamically created connection"): usable with .using(alias), closed by close_alias."""
    connections[alias] = load_backend(config["ENGINE"]).DatabaseWrapper(config, alias)
    return alias


def close_alias(alias: str) -> None:
    try:
        connection = connections[alias]
    except ConnectionDoesNotExist:
        return
    connection.close()
    del connections[alias]


def _ensure_exists(config: dict) -> bool:
    """Create the database when the server says it does not exist; True if created."""
    probe = open_alias(ALIAS + "_probe", config)
    try:
        connections[probe].ensure_connection()
        return False
    except OperationalError as exc:
        if "does not exist" not in str(exc):
            raise MoveError(f"cannot connect to the target: {str(exc).strip()}") from exc
    finally:
        close_alias(probe)
    probe = open_alias(ALIAS + "_probe", {**config, "NAME": "postgres"})
    try:
        with connections[probe].cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {connections[probe].ops.quote_name(config['NAME'])}")
    except Exception as exc:
        raise MoveError(
            f"database {config['NAME']!r} does not exist and could not be created: "
            f"{str(exc).strip()} (create it, then run this again)"
        ) from exc
    finally:
        close_alias(probe)
    return True


def _migrate(url: str) -> None:
    """`manage.py migrate` in a child process whose default database is the target: the
    data migrations' queries then go to the target, whatever alias they use."""
    # (SETTINGS_MODULE is None under override_settings, e.g. in tests.)
    module = settings.SETTINGS_MODULE or os.environ["DJANGO_SETTINGS_MODULE"]
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": module}
    manage = settings.BASE_DIR / "manage.py"
    done = subprocess.run(  # noqa: S603 - our own interpreter and manage.py, no shell
        [sys.executable, str(manage), "migrate", "--noinput", "--verbosity", "0"],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise MoveError(f"migrating the target failed:\n{tail}")


@contextmanager
def target_database(url: str) -> Iterator[Target]:
    """The migrated target, open as a connection alias for the block.

    The database is created when missing, then migrated (the BM25 side tables, triggers and
    the HNSW index come with the migrations). The alias is removed again afterwards.
    """
    config = target_config(url)
    if same_database(connections[DEFAULT_DB_ALIAS].settings_dict, config):
        raise MoveError("the target is the database this store already uses")
    created = _ensure_exists(config)
    open_alias(ALIAS, config)
    try:
        pending = unapplied_migrations(ALIAS)  # a resumed move usually finds none
        if pending:
            _migrate(url)
        yield Target(alias=ALIAS, created=created, migrations=len(pending))
    finally:
        close_alias(ALIAS)


def reset_sequences(alias: str, model_list: Sequence[type[models.Model]]) -> None:
    """Set every id sequence past the copied ids (the rows were inserted with their ids)."""
    connection = connections[alias]
    statements = connection.ops.sequence_reset_sql(no_style(), list(model_list))
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def vacuum_analyze(alias: str) -> None:
    """Planner statistics and a fresh visibility map for the index-only BM25 scans."""
    with connections[alias].cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
