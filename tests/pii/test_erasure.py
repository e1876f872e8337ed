"""Issue 39: after `DELETE /users/{user}?vacuum=true` none of the user's strings remains in any
table (side tables, search indexes and audit events included), in the workspace export or
its learnings files, and, on SQLite, in the database file's bytes. The other user's data is
still there, which shows that each check reads where the data was."""

import io
import json
import tarfile
from urllib.parse import quote

import pytest
from django.test import Client

from tests.pii.people import BRUNO, CAROL, CHARGE, RESOLUTION, Person, build, ok
from tests.support.client import ApiClient
from tests.support.dump import file_bytes_with, tables_with

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def api(key) -> ApiClient:
    return ApiClient(key=key, client=Client())


def _leaks(person: Person, found: dict[str, str]) -> dict[str, list[str]]:
    """Where any of the person's marks is: `found` maps a place to its text."""
    return {
        where: hits
        for where, text in found.items()
        if (hits := [mark for mark in person.marks if mark in text])
    }


def _export(api: ApiClient, owners: tuple[str, ...]) -> dict[str, str]:
    """Every file of each owner's export ("": the agent's), lower-cased, by owner and name."""
    files = {}
    for owner in owners:
        response = api.get("/workspace/export", {"user": owner} if owner else None)
        assert response.status_code == 200, response.content[:300]
        with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as archive:
            for member in archive.getmembers():
                if member.isfile():
                    text = archive.extractfile(member).read().decode().lower()
                    files[f"{owner or 'agent'}:{member.name}"] = text
    return files


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
    assert tables_with(CAROL.marks)  # the check reads where her data is
    assert _leaks(CAROL, _export(api, ("", CAROL.user)))

    erased = _erase(api, CAROL, vacuum=True)

    assert erased["deleted"]["sessions"] == 1
    assert erased["deleted"]["facts"] == 1
    assert tables_with(CAROL.marks) == {}
    assert _leaks(CAROL, _export(api, ("", BRUNO.user))) == {}
    # her own export now holds nothing of hers but the name the caller asked with
    left = _leaks(CAROL, _export(api, (CAROL.user,)))
    assert {tuple(found) for found in left.values()} <= {(CAROL.user,)}, left
    assert tables_with(BRUNO.marks) != {}  # Bruno's data is untouched
    lessons = json.dumps(ok(api.get("/errors", {"user": BRUNO.user, "limit": 100})))
    assert CHARGE in lessons
    assert RESOLUTION in lessons


@pytest.mark.sqlite
def test_with_vacuum_the_sqlite_files_bytes_hold_none_of_the_users_strings(api):
    build(api)

    _erase(api, CAROL, vacuum=False)
    left = file_bytes_with(CAROL.marks)  # deleted rows stay in free pages and the WAL
    _erase(api, CAROL, vacuum=True)

    assert left != {}
    assert file_bytes_with(CAROL.marks) == {}
    assert file_bytes_with(BRUNO.marks) != {}
