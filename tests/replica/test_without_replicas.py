"""No DATABASE_REPLICA_URL (the embedded default, and the SQLite run): everything exactly as
before replicas existed. No router, every read on the one database, no cookie, no check."""

import pytest
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections, router
from django.test import Client

from apps.conversations.models import Message
from apps.core.replicas import PIN_COOKIE, read_alias, read_connection, replica_reads
from tests.replica.conftest import without_replica
from tests.support.client import ok

pytestmark = without_replica


def test_no_router_no_alias_and_no_health_check():
    assert list(settings.DATABASES) == ["default"]
    assert settings.MEMORYHUB_REPLICAS == []
    assert settings.DATABASE_ROUTERS == []
    assert "apps.core.replicas.replicas_report" not in settings.MEMORYHUB_HEALTH_CHECKS


@pytest.mark.usefixtures("replica_reads_on")
def test_replica_reads_read_the_one_database(session):
    with replica_reads():
        assert read_alias() == DEFAULT_DB_ALIAS
        assert read_connection() is connections[DEFAULT_DB_ALIAS]
        assert router.db_for_read(Message) == DEFAULT_DB_ALIAS
        assert list(Message.objects.filter(session=session)) == []


def test_healthz_has_no_replicas(db):
    body = ok(Client().get("/healthz"))

    assert "replicas" not in body
    assert body["status"] == "ok"


def test_a_browsers_post_gets_no_pin(editor_client, agent):
    response = editor_client.post("/accounts/logout/")

    assert response.status_code == 302
    assert PIN_COOKIE not in response.cookies
