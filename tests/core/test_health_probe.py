"""/healthz probes the providers for real (cached), and answers 503 only for the database."""

import pytest
from django.core.cache import cache
from django.test import Client

from tests.support.llm_server import Delay, Status, unused_port_url

pytestmark = pytest.mark.django_db


def _embedder_at(settings, url: str, timeout: float = 30.0) -> None:
    settings.MEMORYHUB_PROVIDERS = {
        **settings.MEMORYHUB_PROVIDERS,
        "embedding": {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {"URL": url, "MODEL": "probe-model", "DIMENSIONS": 384, "TIMEOUT": timeout},
        },
    }


def _llm_at(settings, url: str) -> None:
    settings.MEMORYHUB_PROVIDERS = {
        **settings.MEMORYHUB_PROVIDERS,
        "llm": {
            "CLASS": "apps.providers.llm.openai.OpenAIChat",
            "CONFIG": {"URL": url, "MODEL": "chat-model"},
        },
    }


def test_an_unreachable_embedder_is_reported_with_the_reason_and_200(settings):
    url = unused_port_url()
    _embedder_at(settings, url)

    response = Client().get("/healthz")

    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "degraded"
    assert body["database"]["ok"] is True
    embedding = body["providers"]["embedding"]
    assert embedding["ok"] is False
    assert embedding["detail"].startswith(
        f"embedding request failed: cannot reach {url}/embeddings: "
    )
    assert "Connection refused" in embedding["detail"]


def test_the_probe_is_cached_so_a_down_embedder_is_not_hammered(settings, llm_server):
    _embedder_at(settings, llm_server.url)
    llm_server.script(Status(500, "model overloaded"))

    first = Client().get("/healthz").json()["providers"]["embedding"]
    second = Client().get("/healthz").json()["providers"]["embedding"]

    assert first["ok"] is False
    assert first["detail"] == (
        f"embedding request failed: HTTP 500 from {llm_server.url}/embeddings: model overloaded"
    )
    assert second == first  # same checked_at: served from the cache
    assert [r.path for r in llm_server.requests] == ["/v1/embeddings"]
    assert llm_server.requests[0].body == {
        "model": "probe-model",
        "input": ["memoryhub health probe"],
    }

    cache.clear()  # the 30 s are up: the next call probes again, and sees the recovery
    third = Client().get("/healthz")

    assert len(llm_server.requests) == 2
    assert third.json()["status"] == "ok"
    assert third.json()["providers"]["embedding"] == {
        "ok": True,
        "detail": f"probe-model, 384-d via {llm_server.url}/embeddings: embedded a probe text",
        "checked_at": third.json()["providers"]["embedding"]["checked_at"],
    }
    assert third.json()["providers"]["embedding"]["checked_at"] > first["checked_at"]


def test_the_probe_waits_at_most_the_probe_timeout(settings, llm_server):
    settings.MEMORYHUB_HEALTH_PROBE_TIMEOUT = 0.3
    _embedder_at(settings, llm_server.url, timeout=30.0)
    llm_server.script(Delay(20))

    embedding = Client().get("/healthz").json()["providers"]["embedding"]

    assert embedding["ok"] is False
    assert embedding["detail"] == (
        f"embedding request failed: no answer from {llm_server.url}/embeddings within 0.3 s"
    )


def test_the_llm_probe_reaches_the_server_or_says_why(settings, llm_server):
    _llm_at(settings, llm_server.url)
    up = Client().get("/healthz").json()["providers"]["llm"]

    down_url = unused_port_url()
    _llm_at(settings, down_url)
    down = Client().get("/healthz")

    assert up["ok"] is True
    assert up["detail"] == f"chat-model via {llm_server.url}: reachable (GET /models answered 404)"
    assert llm_server.chats == []  # no completion is generated (or billed) by a probe
    assert down.status_code == 200
    assert down.json()["providers"]["llm"]["ok"] is False
    assert down.json()["providers"]["llm"]["detail"].startswith(f"cannot reach {down_url}/models: ")


def database_down():
    return "database", {"ok": False, "detail": "OperationalError: connection refused"}, False


def embedding_backlog_report():
    raise RuntimeError("backlog unreadable")


def test_only_a_failing_database_answers_503(settings):
    settings.MEMORYHUB_HEALTH_CHECKS = [
        f"{__name__}.database_down",
        "apps.core.health_checks.broker_report",
        f"{__name__}.embedding_backlog_report",
    ]

    response = Client().get("/healthz")

    assert response.status_code == 503
    assert response.json() == {
        "status": "down",
        "database": {"ok": False, "detail": "OperationalError: connection refused"},
        "broker": response.json()["broker"],
        "embedding_backlog": {"ok": False, "detail": "RuntimeError: backlog unreadable"},
    }
    assert response.json()["broker"]["ok"] is True
