"""Issue 22 point 5, seed 001's learnings/errors.md on its own: a tool message appended with
`is_error` becomes an error learning (the tool, the error, the call's arguments and the
user's request before it, bounded), one per tool and normalised error, pending only with
the agent's fact_review on."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from apps.learnings.models import ErrorRecord, Learning

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
ERROR = "rejected: non-fast-forward after 30s"
LEARNED = (
    'git_push failed with "rejected: non-fast-forward after 30s"; '
    'arguments: {"branch": "main", "remote": "origin"}; '
    'user request: "Push my branch to origin, please."'
)


def turn(
    api, session, *, call_id="call_1", error=ERROR, request="Push my branch to origin, please."
):
    """A user request, the assistant's git_push call, and the call failing."""
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "git_push", "arguments": '{"remote": "origin", "branch": "main"}'},
    }
    return api.post(
        f"/sessions/{session.id}/messages",
        {
            "messages": [
                {"role": "user", "content": request},
                {"role": "assistant", "content": None, "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call_id, "content": error, "is_error": True},
            ]
        },
    )


def errors_part(api, session) -> list[str]:
    parts = api.post("/context", {"session_id": str(session.id)}).json()["system"]["parts"]
    return [p["content"] for p in parts if p["name"] == "learnings/errors.md"]


def test_a_failing_tool_message_becomes_one_error_learning_with_its_context(api, agent, session):
    with time_machine.travel(T0, tick=False):
        response = turn(api, session)

    assert response.status_code == 201
    [learning] = Learning.objects.all()
    record = ErrorRecord.objects.get()
    assert (learning.kind, learning.content, learning.source, learning.status) == (
        "error",
        LEARNED,
        "capture",
        "active",
    )
    assert (learning.session_id, learning.session_key, learning.error_record_id) == (
        session.id,
        "chat-1",
        record.pk,
    )
    assert (learning.seen_count, learning.last_seen_at, learning.created_at) == (1, T0, T0)
    assert errors_part(api, session) == [f"- {LEARNED}"]


def test_the_same_failure_again_touches_the_learning_instead_of_adding_one(api, agent, session):
    with time_machine.travel(T0, tick=False):
        turn(api, session)
    later = T0 + timedelta(hours=3)
    with time_machine.travel(later, tick=False):
        # the same tool and error (numbers and case do not count), another request
        again = turn(api, session, call_id="call_2", error="Rejected: non-fast-forward after 45s",
                     request="Try the push again.")  # fmt: skip

    assert again.status_code == 201
    [learning] = Learning.objects.all()
    assert (learning.content, learning.seen_count, learning.last_seen_at) == (LEARNED, 2, later)
    assert (learning.created_at, learning.updated_at) == (T0, later)
    listed = api.get("/learnings", {"kind": "error"}).json()["items"]
    assert [(i["source"], i["seen_count"], i["last_seen_at"]) for i in listed] == [
        ("capture", 2, "2026-03-02T11:00:00Z")
    ]
    assert errors_part(api, session) == [f"- {LEARNED}"]


def test_another_tool_or_another_error_is_another_learning(api, agent, session):
    turn(api, session)
    turn(api, session, call_id="call_2", error="permission denied (publickey)")
    api.post(
        f"/sessions/{session.id}/messages",
        {"messages": [{"role": "tool", "tool_name": "deploy", "content": ERROR, "is_error": True}]},
    )

    contents = list(Learning.objects.order_by("id").values_list("content", flat=True))
    assert contents == [
        LEARNED,
        'git_push failed with "permission denied (publickey)"; '
        'arguments: {"branch": "main", "remote": "origin"}; '
        'user request: "Push my branch to origin, please."',
        # no call to read arguments from: the tool, the error and the latest user request
        f'deploy failed with "{ERROR}"; user request: "Push my branch to origin, please."',
    ]


def test_each_part_of_the_learning_is_bounded(api, agent, session):
    long_error = "boom " * 400
    long_request = "please " * 200

    turn(api, session, error=long_error, request=long_request)

    [learning] = Learning.objects.all()
    error_part = ("boom " * 60)[:299].rstrip() + "…"
    request_part = ("please " * 43)[:299].rstrip() + "…"
    assert learning.content == (
        f'git_push failed with "{error_part}"; '
        'arguments: {"branch": "main", "remote": "origin"}; '
        f'user request: "{request_part}"'
    )


def test_with_fact_review_on_the_learning_waits_as_pending(api, agent, session):
    agent.settings = {"fact_review": True}
    agent.save()

    turn(api, session)
    turn(api, session, call_id="call_2")

    [learning] = Learning.objects.all()
    assert (learning.status, learning.seen_count) == ("pending", 2)
    assert errors_part(api, session) == []
    # approved, it is injected
    api.patch(f"/learnings/{learning.pk}", {"status": "active"})
    assert errors_part(api, session) == [f"- {LEARNED}"]


def test_an_archived_capture_stays_archived_when_the_failure_recurs(api, agent, session):
    turn(api, session)
    learning = Learning.objects.get()
    api.patch(f"/learnings/{learning.pk}", {"status": "archived"})

    turn(api, session, call_id="call_2")

    learning.refresh_from_db()
    assert (Learning.objects.count(), learning.status, learning.seen_count) == (1, "archived", 2)
    assert errors_part(api, session) == []


def test_a_refused_failure_stores_no_learning(api, session):
    response = api.post(
        f"/sessions/{session.id}/messages",
        {"messages": [{"role": "tool", "content": ERROR, "is_error": True}]},
    )

    assert response.status_code == 422
    assert Learning.objects.count() == 0


def test_another_agents_failures_never_reach_this_agent(api, other_api, session):
    theirs = other_api.post("/sessions", {"key": "theirs"}).json()["id"]
    other_api.post(
        f"/sessions/{theirs}/messages",
        {
            "messages": [
                {"role": "tool", "tool_name": "git_push", "content": ERROR, "is_error": True}
            ]
        },
    )

    assert api.get("/learnings").json()["items"] == []
    assert errors_part(api, session) == []
    [learning] = Learning.objects.all()
    assert learning.agent.slug == "mallory-bot"
