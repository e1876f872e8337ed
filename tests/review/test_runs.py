"""The run log, one run, and retrying a run (editors)."""

from datetime import timedelta

import pytest

from apps.agents.models import AuditEvent
from apps.lifecycle.models import Run
from apps.lifecycle.services.run_log import run_record
from tests.lifecycle.helpers import T0, add

pytestmark = pytest.mark.django_db

LIST = "/review/agents/alice-bot/runs/"


def run_url(run):
    return f"/review/agents/alice-bot/runs/{run.pk}/"


def retry_url(run):
    return f"/review/agents/alice-bot/runs/{run.pk}/retry/"


@pytest.fixture
def compacted(api, agent, session):
    """A session compacted through the API: its facts extracted first, then one applied
    compact run (the run this fixture returns)."""
    api.patch("/agent/settings", {"settings": {"max_history_bytes": 500}})
    add(session, *[f"{'q' if i % 2 == 0 else 'a'}{i:03d} " + "x" * 95 for i in range(8)], role=None)
    runs = api.post(f"/sessions/{session.pk}/compact").json()["runs"]
    assert [r["kind"] for r in runs] == ["extract", "compact"]
    return Run.objects.get(pk=runs[-1]["id"])


def _failed(agent, session, **extra):
    return run_record(
        agent=agent,
        session=session,
        kind="summary",
        trigger="auto",
        status="failed",
        reason="error",
        error="HTTP 500 from the model",
        **extra,
    )


@pytest.mark.parametrize("path", ["runs/", "runs/1/"])
def test_anonymous_is_sent_to_login(anon_client, agent, path):
    response = anon_client.get(f"/review/agents/alice-bot/{path}")

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/review/agents/alice-bot/{path}"


def test_another_team_gets_404_and_cannot_retry(outsider_client, compacted):
    assert outsider_client.get(LIST).status_code == 404
    assert outsider_client.get(run_url(compacted)).status_code == 404
    assert outsider_client.post(retry_url(compacted)).status_code == 404
    assert Run.objects.count() == 2  # the extract and the compact run
    assert not AuditEvent.objects.exists()


def test_the_log_shows_every_column_and_highlights_failures(
    viewer_client, agent, session, compacted
):
    failed = _failed(agent, session)
    timeout = run_record(
        agent=agent,
        session=session,
        kind="consolidate",
        trigger="beat",
        status="timeout",
        reason="timeout",
    )

    response = viewer_client.get(LIST)

    assert response.status_code == 200
    extracted = Run.objects.get(kind="extract")  # compaction extracts the facts first
    assert response.context["page"].items == [timeout, failed, compacted, extracted]
    html = response.content.decode()
    assert f'<tr id="run-{failed.pk}" class="run failed">' in html
    assert f'<tr id="run-{timeout.pk}" class="run failed">' in html
    assert f'<tr id="run-{compacted.pk}" class="run">' in html
    assert "HTTP 500 from the model" in html
    assert f'<td data-label="Trigger">{compacted.trigger}</td>' in html


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"kind": "summary"}, ["failed"]),
        ({"status": "fallback"}, ["compacted", "extracted"]),
        ({"kind": "compact", "status": "failed"}, []),
        ({"kind": "extract"}, ["extracted"]),
        ({}, ["failed", "compacted", "extracted"]),
    ],
)
def test_the_log_filters_by_kind_and_status(
    viewer_client, agent, session, compacted, query, expected
):
    runs = {
        "compacted": compacted,
        "extracted": Run.objects.get(kind="extract"),
        "failed": _failed(agent, session),
    }

    response = viewer_client.get(LIST, query)

    assert response.context["page"].items == [runs[name] for name in expected]


def test_the_log_is_paged_and_a_bad_cursor_is_400(viewer_client, agent, session):
    made = [_failed(agent, session) for _ in range(55)]

    first = viewer_client.get(LIST)
    second = viewer_client.get(LIST, {"cursor": first.context["page"].next_cursor})

    assert [r.pk for r in first.context["page"].items] == [r.pk for r in made[::-1][:50]]
    assert [r.pk for r in second.context["page"].items] == [r.pk for r in made[::-1][50:]]
    assert viewer_client.get(LIST, {"cursor": "garbage"}).status_code == 400


def test_a_run_shows_its_numbers_output_details_and_retry_for_editors(
    viewer_client, editor_client, compacted
):
    viewer = viewer_client.get(run_url(compacted))
    editor = editor_client.get(run_url(compacted))

    assert viewer.status_code == 200
    html = viewer.content.decode()
    assert f"&quot;archive_name&quot;: &quot;{compacted.details['archive_name']}&quot;" in html
    assert f"<dt>Reason</dt><dd>{compacted.reason}</dd>" in html
    assert retry_url(compacted) not in html  # viewers get no retry button
    assert f'<form method="post" action="{retry_url(compacted)}"' in editor.content.decode()


def test_another_agents_run_is_404(viewer_client, other_agent):
    theirs = run_record(
        agent=other_agent, session=None, kind="summary", trigger="api", status="skipped"
    )

    assert viewer_client.get(run_url(theirs)).status_code == 404


def test_a_viewer_cannot_retry(viewer_client, compacted):
    response = viewer_client.post(retry_url(compacted))

    assert response.status_code == 403
    assert Run.objects.count() == 2  # the extract and the compact run
    assert not AuditEvent.objects.exists()


def test_retry_is_post_only(editor_client, compacted):
    assert editor_client.get(retry_url(compacted)).status_code == 405


def test_an_editor_retries_a_compaction(
    editor, editor_client, session, compacted, django_capture_on_commit_callbacks
):
    more = add(
        session,
        *[f"later {i:03d} " + "y" * 90 for i in range(6)],
        role=None,
        start=T0 + timedelta(hours=1),
    )

    with django_capture_on_commit_callbacks(execute=True):
        response = editor_client.post(retry_url(compacted), follow=True)

    assert response.redirect_chain == [(LIST, 302)]
    before = Run.objects.filter(created_at__lte=compacted.created_at)
    extract, new = Run.objects.exclude(pk__in=before).order_by("created_at", "id")
    # The retry extracts the later messages' facts first, then compacts them.
    assert (extract.kind, extract.trigger) == ("extract", "review")
    assert (new.kind, new.trigger, new.session_id) == ("compact", "review", session.pk)
    assert (new.status, new.reason) == ("fallback", "not_configured")
    assert new.first_message_at > compacted.last_message_at
    assert new.last_message_at < more[-1].created_at
    event = AuditEvent.objects.get()
    assert (event.user, event.source, event.action) == (editor, "review", "run.retry")
    assert (event.object_type, event.object_id) == ("run", str(compacted.pk))
    assert event.before["status"] == "fallback"
    assert event.after == {"task": "lifecycle.compact", "session_id": str(session.pk)}
    assert f"Retry of run #{compacted.pk} (compact) queued." in response.content.decode()


@pytest.mark.parametrize(
    ("kind", "task"),
    [
        ("summary", "lifecycle.summarize"),
        ("consolidate", "lifecycle.consolidate"),
        ("flush", "lifecycle.context"),
        ("extract", "lifecycle.context"),
    ],
)
def test_each_kind_retries_with_its_task(
    editor_client, api, agent, session, django_capture_on_commit_callbacks, kind, task
):
    settings = {"max_history_messages": 4, "consolidation_keep": 0}
    api.patch("/agent/settings", {"settings": settings})
    add(session, *[f"my name is Ada {i}" for i in range(10)], role=None)
    old = run_record(agent=agent, session=session, kind=kind, trigger="auto", status="failed")

    with django_capture_on_commit_callbacks(execute=True):
        response = editor_client.post(retry_url(old))

    assert response.status_code == 302
    assert AuditEvent.objects.get().after["task"] == task
    new = list(Run.objects.exclude(pk=old.pk).values_list("kind", "trigger", "status", "reason"))
    assert new == EXPECTED_RETRY[kind]


# What each retry really did on a ten-message session (window 4) with no LLM configured.
EXPECTED_RETRY = {
    "summary": [("summary", "review", "fallback", "not_configured")],
    "consolidate": [("consolidate", "review", "fallback", "not_configured")],
    "flush": [("flush", "review", "fallback", "not_configured")],
    "extract": [("flush", "review", "fallback", "not_configured")],
}


def test_a_compress_run_has_no_session_and_retries_for_its_agent(
    editor_client, api, agent, django_capture_on_commit_callbacks
):
    """MEMORY.md compression belongs to the agent: its retry needs no session."""
    api.patch("/agent/settings", {"settings": {"max_memory_bytes": 1024}})
    with django_capture_on_commit_callbacks(execute=True):
        api.post("/entries", {"name": "MEMORY.md", "content": "- a fact worth keeping\n" * 60})
    [old] = Run.objects.filter(kind="compress")
    assert (old.session_id, old.status, old.reason) == (None, "fallback", "not_configured")

    with django_capture_on_commit_callbacks(execute=True):
        response = editor_client.post(retry_url(old))

    assert response.status_code == 302
    event = AuditEvent.objects.get()
    assert event.after == {"task": "lifecycle.compress", "session_id": None}
    new = Run.objects.exclude(pk=old.pk).get()
    assert (new.kind, new.trigger, new.session_id) == ("compress", "review", None)


def test_a_run_whose_session_was_removed_cannot_be_retried(
    editor_client, api, agent, session, compacted
):
    assert api.delete(f"/sessions/{session.pk}").status_code == 204
    compacted.refresh_from_db()

    response = editor_client.post(retry_url(compacted))

    assert response.status_code == 409
    assert "session was removed" in response.content.decode()
    assert Run.objects.count() == 2  # the extract and the compact run
    assert not AuditEvent.objects.exists()


@pytest.fixture
def broker_down():
    """The Celery app publishing for real to a port nothing listens on."""
    from bench._http import free_port
    from memoryhub.celery import app

    saved = {k: app.conf[k] for k in ("task_always_eager", "broker_write_url")}
    # The write URL: Celery prefers a CELERY_BROKER_URL environment variable to broker_url.
    app.conf.update(task_always_eager=False, broker_write_url=f"redis://127.0.0.1:{free_port()}/0")
    _forget_connections(app)
    yield
    app.conf.update(saved)
    _forget_connections(app)


def _forget_connections(app):
    # The connection and producer pools were built for the old URL.
    app._pool = None
    app.amqp._producer_pool = None


def test_a_retry_with_the_broker_down_says_so_and_is_no_server_error(
    editor_client, compacted, broker_down
):
    response = editor_client.post(retry_url(compacted), follow=True)

    assert response.redirect_chain == [(LIST, 302)]
    html = response.content.decode()
    assert "The task queue cannot be reached; the retry was not queued." in html
    assert "queued." not in html.replace("was not queued.", "")
    assert AuditEvent.objects.get().action == "run.retry"
    assert Run.objects.count() == 2  # the extract and the compact run
