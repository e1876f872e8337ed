"""Issue 39: after `DELETE /users/{user}?vacuum=true` none of the user's strings remains in any
table (side tables, search indexes and audit events included), in the workspace export or
its learnings files, and, on SQLite, in the database file's bytes. The other user's data is
still there, which shows that each check reads where the data was."""

import io
import json
import tarfile
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from tests.pii.people import BRUNO, CAROL, CHARGE, RESOLUTION, Person, build, ok
from tests.support.client import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def api(key) -> ApiClient:
    return ApiClient(key=key, client=Client())


def _tables() -> list[str]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        else:
            cursor.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema = 'public' AND table_type = 'BASE TABLE'"
            )
        return sorted(row[0] for row in cursor.fetchall())


def database_text() -> dict[str, str]:
    """Every row of every table (virtual and shadow tables too), as lower-cased text."""
    found = {}
    with connection.cursor() as cursor:
        for table in _tables():
            quoted = connection.ops.quote_name(table)
            if connection.vendor == "sqlite":
                cursor.execute(f"SELECT * FROM {quoted}")  # noqa: S608 - our own table names
                rows = [
                    " ".join(v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
                             for v in row)  # fmt: skip
                    for row in cursor.fetchall()
                ]
            else:
                cursor.execute(f"SELECT t::text FROM {quoted} t")  # noqa: S608
                rows = [row[0] for row in cursor.fetchall()]
            found[table] = "\n".join(rows).lower()
    return found


def _leaks(person: Person, texts: dict[str, str]) -> dict[str, list[str]]:
    return {
        where: hits
        for where, text in texts.items()
        if (hits := [mark for mark in person.marks if mark in text])
    }


def _export(api: ApiClient) -> dict[str, str]:
    """Every file of the agent's export and of each user's, lower-cased, by owner and name."""
    files = {}
    for owner in ["", CAROL.user, BRUNO.user]:
        response = api.get("/workspace/export", {"user": owner} if owner else None)
        assert response.status_code == 200, response.content[:300]
        with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as archive:
            for member in archive.getmembers():
                if member.isfile():
                    text = archive.extractfile(member).read().decode().lower()
                    files[f"{owner or 'agent'}:{member.name}"] = text
    return files


def _file_bytes() -> dict[str, str]:
    name = Path(settings.DATABASES["default"]["NAME"])
    return {
        str(path): path.read_bytes().decode("latin-1").lower()
        for path in [name, name.with_name(name.name + "-wal")]
        if path.exists()
    }


def _erase(api: ApiClient, person: Person, vacuum: bool) -> dict:
    path = f"/users/{quote(person.user, safe='')}" + ("?vacuum=true" if vacuum else "")
    response = api.delete(path)
    assert response.status_code == 200, response.content[:300]
    return response.json()


def test_after_erasure_no_table_export_or_learnings_file_holds_the_users_strings(api):
    build(api)
    ok(api.post("/learnings", {"kind": "correction", "session_id": CAROL.session_key,
                               "scope": "agent", "content": "Invoices go out on Mondays."}),
       201)  # fmt: skip
    assert _leaks(CAROL, database_text())  # the check reads where her data is
    assert _leaks(CAROL, _export(api))

    erased = _erase(api, CAROL, vacuum=True)

    assert erased["deleted"]["sessions"] == 1
    assert erased["deleted"]["facts"] == 1
    assert _leaks(CAROL, database_text()) == {}
    assert _leaks(CAROL, _export(api)) == {}
    assert _leaks(BRUNO, database_text()) != {}  # Bruno's data is untouched
    lessons = json.dumps(ok(api.get("/errors", {"user": BRUNO.user, "limit": 100})))
    assert CHARGE in lessons
    assert RESOLUTION in lessons


@pytest.mark.sqlite
def test_with_vacuum_the_sqlite_files_bytes_hold_none_of_the_users_strings(api):
    build(api)

    _erase(api, CAROL, vacuum=False)
    left = _leaks(CAROL, _file_bytes())  # deleted rows stay in free pages and the WAL
    _erase(api, CAROL, vacuum=True)

    assert left != {}
    assert _leaks(CAROL, _file_bytes()) == {}
    assert _leaks(BRUNO, _file_bytes()) != {}
