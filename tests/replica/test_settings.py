"""DATABASE_REPLICA_URL at startup: aliases beside default, refused when it cannot work."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from memoryhub.settings.replicas import replica_databases

ROOT = Path(__file__).resolve().parents[2]
PG = {
    "ENGINE": "django.db.backends.postgresql",
    "NAME": "memoryhub",
    "HOST": "db",
    "PORT": 5432,
    "CONN_MAX_AGE": 60,
    "CONN_HEALTH_CHECKS": True,
    "OPTIONS": {"sslmode": "require"},
}
SQLITE = {"ENGINE": "django.db.backends.sqlite3", "NAME": "/tmp/x.sqlite3"}


def test_each_url_is_an_alias_with_the_primarys_options():
    found = replica_databases(
        PG, ["postgres://reader@r1:5433/memoryhub", " postgres://reader:pw@r2/memoryhub "]
    )

    assert list(found) == ["replica1", "replica2"]
    r1, r2 = found["replica1"], found["replica2"]
    assert (r1["ENGINE"], r1["HOST"], r1["PORT"], r1["NAME"], r1["USER"]) == (
        "django.db.backends.postgresql", "r1", 5433, "memoryhub", "reader",
    )  # fmt: skip
    assert (r2["HOST"], r2["PASSWORD"]) == ("r2", "pw")
    for replica in (r1, r2):
        assert (replica["CONN_MAX_AGE"], replica["CONN_HEALTH_CHECKS"]) == (60, True)
        assert replica["OPTIONS"] == {"sslmode": "require", "connect_timeout": 3}
    assert PG["OPTIONS"] == {"sslmode": "require"}  # the primary's own are left alone


def test_no_url_is_no_replica():
    assert replica_databases(PG, []) == {}
    assert replica_databases(SQLITE, []) == {}
    assert replica_databases(PG, [""]) == {}


def test_a_replica_of_another_backend_is_refused():
    with pytest.raises(ImproperlyConfigured) as caught:
        replica_databases(PG, ["mysql://reader:secret@r1/memoryhub"])

    message = str(caught.value)
    assert "replica1 (mysql://reader@r1/memoryhub)" in message
    assert "django.db.backends.mysql" in message
    assert "the primary (DATABASE_URL) is django.db.backends.postgresql" in message
    assert "secret" not in message


@pytest.mark.parametrize(
    ("primary", "url"),
    [(SQLITE, "postgres://r1/memoryhub"), (SQLITE, "sqlite:////tmp/y.sqlite3"),
     (PG, "sqlite:////tmp/y.sqlite3")],
)  # fmt: skip
def test_any_replica_on_sqlite_is_refused(primary, url):
    with pytest.raises(ImproperlyConfigured, match="SQLite has none"):
        replica_databases(primary, [url])


def test_the_service_refuses_to_start_with_a_replica_of_sqlite(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DATABASE_"))}
    env |= {
        "DJANGO_SETTINGS_MODULE": "memoryhub.settings.base",
        "MEMORYHUB_DATA_DIR": str(tmp_path),
        "DATABASE_REPLICA_URL": "postgres://postgres@127.0.0.1:5433/memoryhub",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True
    )

    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "django.core.exceptions.ImproperlyConfigured: DATABASE_REPLICA_URL: replica1 "
        "(postgres://postgres@127.0.0.1:5433/memoryhub) cannot be used: read replicas need "
        "PostgreSQL streaming replication, and SQLite has none. Unset DATABASE_REPLICA_URL, "
        "or set DATABASE_URL and it to PostgreSQL."
    )
