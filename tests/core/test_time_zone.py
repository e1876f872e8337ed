"""Seed 000: timestamps without an offset are read in the local time zone and stored as UTC.
memoryhub's local zone is settings.TIME_ZONE (MEMORYHUB_TIME_ZONE, default UTC); a time
with an offset keeps it. A wall time a DST change skips or repeats takes the offset from
before the change (fold=0)."""

from datetime import UTC, datetime

import pytest
from django.test import override_settings

from apps.conversations.models import Message

pytestmark = pytest.mark.django_db


def _stored(api, session, created_at) -> datetime:
    body = {"messages": [{"role": "user", "content": "at", "created_at": created_at}]}
    response = api.post(f"/sessions/{session.id}/messages", body)
    assert response.status_code == 201, response.content
    return Message.objects.get(pk=response.json()["messages"][0]["id"]).created_at


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_a_naive_time_is_read_in_time_zone_and_stored_as_utc(api, session):
    assert _stored(api, session, "2026-03-01T09:00:00") == datetime(2026, 3, 1, 0, tzinfo=UTC)
    # an offset wins over TIME_ZONE
    assert _stored(api, session, "2026-03-01T09:00:00+02:00") == datetime(2026, 3, 1, 7, tzinfo=UTC)
    assert _stored(api, session, "2026-03-01T09:00:00Z") == datetime(2026, 3, 1, 9, tzinfo=UTC)


def test_by_default_a_naive_time_is_utc(api, session):
    assert _stored(api, session, "2026-03-01T09:00:00") == datetime(2026, 3, 1, 9, tzinfo=UTC)


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_naive_filters_are_read_in_time_zone_too(api, session):
    _stored(api, session, "2026-03-01T00:30:00Z")  # 09:30 in Tokyo

    before = api.get(f"/sessions/{session.id}/messages", {"before": "2026-03-01T09:00:00"})
    after = api.get(f"/sessions/{session.id}/messages", {"after": "2026-03-01T09:00:00"})

    assert before.json()["items"] == []
    assert [m["created_at"] for m in after.json()["items"]] == ["2026-03-01T00:30:00Z"]


@override_settings(TIME_ZONE="Europe/Berlin")
def test_a_skipped_or_repeated_wall_time_takes_the_offset_before_the_change(api, session):
    # 2026-03-29 02:30 does not exist in Berlin (clocks go 02:00 -> 03:00): read at +01:00
    assert _stored(api, session, "2026-03-29T02:30:00") == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    # 2026-10-25 02:30 happens twice (03:00 -> 02:00): the first, still at +02:00
    assert _stored(api, session, "2026-10-25T02:30:00") == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)
    # an ordinary winter and summer time
    assert _stored(api, session, "2026-01-15T12:00:00") == datetime(2026, 1, 15, 11, tzinfo=UTC)
    assert _stored(api, session, "2026-07-15T12:00:00") == datetime(2026, 7, 15, 10, tzinfo=UTC)


@override_settings(TIME_ZONE="Asia/Tokyo")
def test_a_naive_time_whose_utc_leaves_years_1_to_9999_is_422(api, session):
    body = {"messages": [{"role": "user", "content": "at", "created_at": "0001-01-01T00:00:00"}]}
    response = api.post(f"/sessions/{session.id}/messages", body)

    assert response.status_code == 422
    assert [e["loc"] for e in response.json()["detail"]] == [
        ["body", "payload", "messages", 0, "created_at"]
    ]
    assert Message.objects.count() == 0
    assert _stored(api, session, "9999-12-31T23:59:59") == datetime(
        9999, 12, 31, 14, 59, 59, tzinfo=UTC
    )
