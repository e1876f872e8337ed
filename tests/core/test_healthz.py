import pytest
from django.test import Client

from tests.conftest import VENDOR

pytestmark = pytest.mark.django_db


def test_healthz_reports_database_broker_and_providers():
    response = Client().get("/healthz")

    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["database"]["detail"].startswith(VENDOR)
    assert body["broker"]["ok"] is True
    assert body["providers"]["embedding"]["ok"] is True
    assert body["providers"]["embedding"]["detail"] == "fake-hash, 384-d: embedded a probe text"
    assert body["providers"]["llm"]["ok"] is True
    assert body["providers"]["llm"]["detail"] == "not configured — extractive fallback"


def test_healthz_is_200_degraded_when_the_broker_is_down(settings):
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1

    response = Client().get("/healthz")

    # Only the database is critical: a node without its broker still stores appends.
    assert response.status_code == 200
    assert response.json()["broker"]["ok"] is False
    assert response.json()["status"] == "degraded"


def test_api_docs_are_served():
    assert Client().get("/api/v1/openapi.json").status_code == 200
    assert Client().get("/api/docs", follow=True).status_code == 200


def test_home_page_links_to_docs_and_admin():
    body = Client().get("/").content.decode()

    assert "/api/v1/docs" in body
    assert "/admin/" in body
