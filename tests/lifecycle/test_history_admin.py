"""Seed 004: HISTORY is append-only, never truncated. The admin shows history entries and
deletes none, not even for a superuser."""

from datetime import UTC, datetime

import pytest

from apps.lifecycle.models import HistoryEntry

pytestmark = pytest.mark.django_db

URL = "/admin/lifecycle/historyentry/"


@pytest.fixture
def entry(agent, session):
    return HistoryEntry.objects.create(
        agent=agent,
        session=session,
        session_key=session.key,
        created_at=datetime(2026, 3, 1, 9, tzinfo=UTC),
        content="[2026-03-01 09:00] The user chose PostgreSQL.",
        kind="ok",
    )


def test_a_superuser_cannot_delete_a_history_entry(admin_client, entry):
    page = admin_client.get(f"{URL}{entry.pk}/delete/")
    posted = admin_client.post(f"{URL}{entry.pk}/delete/", {"post": "yes"})

    assert (page.status_code, posted.status_code) == (403, 403)
    assert HistoryEntry.objects.filter(pk=entry.pk).exists()


def test_the_changelist_has_no_bulk_delete_and_the_action_is_refused(admin_client, entry):
    listing = admin_client.get(URL)
    assert listing.status_code == 200
    assert "delete_selected" not in listing.content.decode()

    admin_client.post(URL, {"action": "delete_selected", "_selected_action": [entry.pk],
                            "post": "yes"})  # fmt: skip

    assert HistoryEntry.objects.get(pk=entry.pk).content == entry.content


def test_the_entry_page_is_read_only(admin_client, entry):
    page = admin_client.get(f"{URL}{entry.pk}/change/")
    posted = admin_client.post(f"{URL}{entry.pk}/change/", {"content": "rewritten"})

    assert page.status_code == 200
    assert 'name="content"' not in page.content.decode()
    assert posted.status_code == 403
    assert HistoryEntry.objects.get(pk=entry.pk).content == entry.content
