"""The new-user path for error memory and learnings, through the API, and isolation between
agents on every new endpoint."""

import pytest

from apps.conversations.models import Session
from apps.learnings.models import ErrorRecord, Learning

pytestmark = pytest.mark.django_db

ERROR = "! [rejected] main -> main (non-fast-forward)"


def test_failures_teach_the_next_session(api, agent):
    # 1. an abandoned force push and a resolved pull --rebase for git_push
    api.post(
        "/errors",
        {"tool_name": "git_push", "error": ERROR, "strategy": "force push", "outcome": "abandoned"},
    )
    api.post(
        "/errors",
        {
            "tool_name": "git_push",
            "error": ERROR,
            "strategy": "pull --rebase then push",
            "outcome": "resolved",
            "resolution": "pull --rebase then push",
        },
    )

    # 2. a new session: git_push fails; the append says to apply the rebase, avoid the force
    session = api.post("/sessions", {"key": "monday"}).json()["id"]
    appended = api.post(
        f"/sessions/{session}/messages",
        {
            "messages": [
                {"role": "user", "content": "Push my branch please."},
                {"role": "tool", "tool_name": "git_push", "content": ERROR, "is_error": True},
            ]
        },
    ).json()

    assert [h["text"] for h in appended["hints"]] == [
        "apply: pull --rebase then push",
        "avoid: force push",
    ]

    # 3. get_context for that session carries the same hints, and the failure became an
    # error learning (seed 001's learnings/errors.md) with the request before it
    parts = api.post("/context", {"session_id": session}).json()["system"]["parts"]
    assert [(p["kind"], p["name"], p["content"]) for p in parts] == [
        (
            "learnings",
            "learnings/errors.md",
            f'- git_push failed with "{ERROR}"; user request: "Push my branch please."',
        ),
        (
            "hints",
            "hints/git_push",
            "Tool git_push failed before:\n- apply: pull --rebase then push\n- avoid: force push",
        ),
    ]

    # 4. a correction posted to /learnings appears in get_context
    api.post("/learnings", {"kind": "correction", "content": "Never push to main directly."})
    parts = api.post("/context", {"session_id": session}).json()["system"]["parts"]
    assert ("learnings", "learnings/corrections.md", "- Never push to main directly.") in [
        (p["kind"], p["name"], p["content"]) for p in parts
    ]


def _theirs(agent):
    session = Session.objects.create(agent=agent, key="theirs")
    record = ErrorRecord.objects.create(
        agent=agent,
        session=session,
        tool_name="git_push",
        error=ERROR,
        normalized="x",
        expires_at="2100-01-01T00:00:00Z",
    )
    learning = Learning.objects.create(agent=agent, kind="error", content="secret")
    return record, learning


def test_another_agents_records_and_learnings_are_invisible_and_untouched(other_api, agent):
    record, learning = _theirs(agent)
    before = [(r.outcome, r.hit_count, r.expires_at) for r in ErrorRecord.objects.all()]
    calls = [
        other_api.get(f"/errors/{record.pk}"),
        other_api.patch(f"/errors/{record.pk}", {"outcome": "resolved"}),
        other_api.delete(f"/errors/{record.pk}"),
        other_api.post(f"/errors/{record.pk}/promote"),
        other_api.get(f"/learnings/{learning.pk}"),
        other_api.patch(f"/learnings/{learning.pk}", {"status": "archived"}),
        other_api.delete(f"/learnings/{learning.pk}"),
        other_api.post("/errors", {"tool_name": "t", "error": "e", "session_id": "theirs"}),
        other_api.post("/learnings", {"kind": "error", "content": "x", "session_id": "theirs"}),
    ]

    assert [c.status_code for c in calls] == [404] * len(calls)
    assert other_api.get("/errors").json()["items"] == []
    assert other_api.get("/learnings").json()["items"] == []
    assert other_api.post("/errors/search", {"query": "rejected"}).json()["items"] == []
    assert [(r.outcome, r.hit_count, r.expires_at) for r in ErrorRecord.objects.all()] == before
    assert Learning.objects.get().status == "active"
    assert (ErrorRecord.objects.count(), Learning.objects.count()) == (1, 1)


def test_another_agents_records_give_no_hints(other_api, agent):
    _theirs(agent)
    mine = other_api.post("/sessions", {"key": "mine"}).json()["id"]

    appended = other_api.post(
        f"/sessions/{mine}/messages",
        {
            "messages": [
                {"role": "tool", "tool_name": "git_push", "content": ERROR, "is_error": True}
            ]
        },
    ).json()

    assert appended["hints"] == []
    assert ErrorRecord.objects.get(agent=agent).hit_count == 0


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/errors"),
        ("post", "/errors"),
        ("get", "/errors/1"),
        ("patch", "/errors/1"),
        ("delete", "/errors/1"),
        ("post", "/errors/search"),
        ("post", "/errors/1/promote"),
        ("get", "/learnings"),
        ("post", "/learnings"),
        ("get", "/learnings/1"),
        ("patch", "/learnings/1"),
        ("delete", "/learnings/1"),
    ],
)
def test_every_new_endpoint_needs_a_key(client, method, path):
    response = getattr(client, method)(f"/api/v1{path}", content_type="application/json")
    assert response.status_code == 401
