"""Runs done without a model are the extractive mode, shown neutrally (issue 23, point 5);
a fallback after a timeout or an error is still a warning."""

import pytest

from apps.lifecycle.models import Run
from apps.lifecycle.services.run_log import run_record
from tests.lifecycle.helpers import add

pytestmark = pytest.mark.django_db

LIST = "/review/agents/alice-bot/runs/"
EXTRACTIVE = (
    '<span class="status-extractive" title="No LLM is configured: the extractive steps ran">'
    "extractive</span>"
)


def test_a_run_without_a_model_is_shown_as_extractive_not_as_an_error(
    viewer_client, api, agent, session
):
    add(session, "I moved to Berlin in March.", "Lovely.", role=None)
    api.post(f"/sessions/{session.id}/consolidate")
    run = Run.objects.get(kind="consolidate")
    timeout = run_record(
        agent=agent, session=session, kind="summary", trigger="auto", status="fallback",
        reason="timeout", error="no answer within 30 s",
    )  # fmt: skip

    html = viewer_client.get(LIST).content.decode()
    page = viewer_client.get(f"{LIST}{run.pk}/").content.decode()

    assert (run.status, run.reason, run.error) == (
        "fallback",
        "not_configured",
        "no LLM is configured",
    )
    row = html[html.index(f'<tr id="run-{run.pk}"') :].split("</tr>")[0]
    assert f'<td class="status" data-label="Status">{EXTRACTIVE}</td>' in row
    assert '<td class="error long" data-label="Error"></td>' in row
    assert "no LLM is configured" not in html
    assert f"<h1>Run #{run.pk}: consolidate {EXTRACTIVE}" in page
    assert '<dd class="error">' not in page
    timeout_row = html[html.index(f'<tr id="run-{timeout.pk}"') :].split("</tr>")[0]
    assert (
        '<td class="status" data-label="Status"><span class="status-fallback">fallback</span>'
        ' <span class="muted">(timeout)</span></td>'
    ) in timeout_row
    assert '<td class="error long" data-label="Error">no answer within 30 s</td>' in timeout_row


def test_an_extractive_history_entry_is_labelled_extractive(viewer_client, api, agent, session):
    add(session, "I moved to Berlin in March.", "Lovely.", role=None)
    api.post(f"/sessions/{session.id}/consolidate")
    month = Run.objects.get(kind="consolidate").created_at.strftime("%Y-%m")

    html = viewer_client.get(f"/review/agents/alice-bot/history/{month}/").content.decode()

    assert '<span class="status-extractive">extractive</span>' in html
    assert '<span class="status-fallback">' not in html
