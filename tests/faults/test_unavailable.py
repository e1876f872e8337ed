"""Which database errors are "unavailable" (503 + Retry-After) and which stay defects (500),
on real errors of the backend under test (apps/core/unavailable.py)."""

import json

import pytest
from django.db import DatabaseError, connection
from django.db.utils import load_backend
from django.test import RequestFactory

from apps.core.unavailable import database_unavailable, is_transient
from bench._http import free_port


def _refused_connection_error() -> DatabaseError:
    """The error of connecting to a database that is not there: a closed port on PostgreSQL,
    a file in a missing directory on SQLite."""
    settings = dict(connection.settings_dict)
    if connection.vendor == "sqlite":
        settings["NAME"] = "/nonexistent-memoryhub-dir/db.sqlite3"
    else:
        settings["PORT"] = str(free_port())
    wrapper = load_backend(settings["ENGINE"]).DatabaseWrapper(settings, alias="unavailable")
    try:
        wrapper.ensure_connection()
    except DatabaseError as exc:
        return exc
    finally:
        wrapper.close()
    raise AssertionError("connected to a database that should not be there")


@pytest.mark.django_db
def test_a_database_that_cannot_be_reached_answers_503_with_retry_after():
    exc = _refused_connection_error()
    assert type(exc).__name__ == "OperationalError"
    assert is_transient(exc) is True

    response = database_unavailable(RequestFactory().post("/api/v1/sessions"), exc)

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response["Content-Type"] == "application/json"
    assert json.loads(response.content) == {"detail": "the database is unavailable; retry later"}


@pytest.mark.django_db
def test_a_missing_table_is_a_defect_and_stays_a_500():
    # SQLite raises OperationalError here, PostgreSQL ProgrammingError: neither is transient.
    with pytest.raises(DatabaseError) as caught, connection.cursor() as cursor:
        cursor.execute("SELECT * FROM no_such_table_anywhere")
    assert is_transient(caught.value) is False

    response = database_unavailable(RequestFactory().get("/api/v1/sessions"), caught.value)

    assert response.status_code == 500
    assert "Retry-After" not in response
    assert json.loads(response.content) == {"detail": "internal error"}
