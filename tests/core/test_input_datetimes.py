"""Datetimes: any time whose UTC falls in year 1-9999 is accepted, stored and answered;
anything else is 422 naming the field (year 1 / 9999 with offsets used to be a 500)."""

from datetime import UTC, datetime

import pytest

from apps.conversations.models import Message

pytestmark = pytest.mark.django_db

FIRST = "0001-01-01T00:00:00Z"
LAST = "9999-12-31T23:59:59.999999Z"

# (as sent, as stored in UTC)
ACCEPTED = [
    (FIRST, datetime(1, 1, 1, tzinfo=UTC)),
    (LAST, datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
    ("0001-01-01T20:00:00+20:00", datetime(1, 1, 1, tzinfo=UTC)),
    ("9999-12-31T18:59:59-05:00", datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)),
    ("2026-03-01T00:30:00+23:59", datetime(2026, 2, 28, 0, 31, tzinfo=UTC)),
    ("2026-03-01T10:00:00", datetime(2026, 3, 1, 10, tzinfo=UTC)),  # no offset: UTC
]

REFUSED = [
    "0001-01-01T00:00:00+20:00",  # UTC is in year 0
    "0001-01-01T00:00:00+00:01",
    "9999-12-31T23:00:00-05:00",  # UTC is in year 10000
    "9999-12-31T23:59:59.999999-00:01",
    "2026-01-01T00:00:00+24:00",
    "2026-01-01T00:00:00-99:00",
    "10000-01-01T00:00:00Z",
    "0000-01-01T00:00:00Z",
    "2026-02-30T00:00:00Z",
]


def _append(api, session, created_at):
    body = {"messages": [{"role": "user", "content": "edge", "created_at": created_at}]}
    return api.post(f"/sessions/{session.id}/messages", body)


@pytest.mark.parametrize(("sent", "stored"), ACCEPTED)
def test_a_time_within_utc_years_1_to_9999_is_stored_and_answered(api, session, sent, stored):
    response = _append(api, session, sent)

    assert response.status_code == 201, response.content
    assert Message.objects.get().created_at == stored
    expected = stored.isoformat().replace("+00:00", "Z")
    assert response.json()["messages"][0]["created_at"] == expected
    listed = api.get(f"/sessions/{session.id}/messages").json()["items"]
    assert [m["created_at"] for m in listed] == [expected]


@pytest.mark.parametrize("sent", REFUSED)
def test_a_time_outside_utc_years_1_to_9999_is_422_naming_the_field(api, session, sent):
    response = _append(api, session, sent)

    assert response.status_code == 422
    assert [e["loc"] for e in response.json()["detail"]] == [
        ["body", "payload", "messages", 0, "created_at"]
    ]
    assert Message.objects.count() == 0


@pytest.mark.parametrize("sent", REFUSED)
@pytest.mark.parametrize("name", ["after", "before"])
def test_a_filter_time_out_of_range_is_422_naming_it(api, session, sent, name):
    listed = api.get(f"/sessions/{session.id}/messages", {name: sent})
    searched = api.post("/search", {"query": "edge", "mode": "keyword", name: sent})

    assert listed.status_code == 422
    assert [e["loc"] for e in listed.json()["detail"]] == [["query", name]]
    assert searched.status_code == 422
    assert [e["loc"] for e in searched.json()["detail"]] == [["body", "payload", name]]


def test_edge_times_work_as_filters_and_through_the_read_paths(api, session):
    for created_at in (FIRST, LAST, "2026-03-01T10:00:00Z"):
        assert _append(api, session, created_at).status_code == 201

    def listed(**query):
        response = api.get(f"/sessions/{session.id}/messages", query)
        assert response.status_code == 200, response.content
        return [m["created_at"] for m in response.json()["items"]]

    assert listed() == [FIRST, "2026-03-01T10:00:00Z", LAST]
    assert listed(after=FIRST) == ["2026-03-01T10:00:00Z", LAST]
    assert listed(before=LAST) == [FIRST, "2026-03-01T10:00:00Z"]
    # the same instants written with offsets; both bounds are exclusive
    assert listed(after="0001-01-01T20:00:00+20:00", before="9999-12-31T18:59:59-05:00") == [
        "2026-03-01T10:00:00Z"
    ]
    assert listed(order="desc") == [LAST, "2026-03-01T10:00:00Z", FIRST]
    page = api.get(f"/sessions/{session.id}/messages", {"limit": 1}).json()
    rest = api.get(f"/sessions/{session.id}/messages", {"limit": 2, "cursor": page["next_cursor"]})
    assert [m["created_at"] for m in rest.json()["items"]] == ["2026-03-01T10:00:00Z", LAST]

    search = api.post(
        "/search", {"query": "edge", "mode": "keyword", "after": FIRST, "before": LAST}
    )
    assert search.status_code == 200, search.content
    assert [h["created_at"] for h in search.json()["hits"]] == ["2026-03-01T10:00:00Z"]
    for path in (f"/sessions/{session.id}", f"/sessions/{session.id}/window", "/sessions"):
        assert api.get(path).status_code == 200, path
    context = api.post("/context", {"session_id": session.key, "query": "edge"})
    assert context.status_code == 200, context.content
