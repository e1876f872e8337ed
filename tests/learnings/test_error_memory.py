"""Seed 000's error memory: records, capture from failing tool messages, hints and their
rules, search, promotion, and the TTL refreshed on every hit."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from apps.learnings.models import ErrorRecord, Learning
from apps.learnings.services import error_record_create
from apps.learnings.tasks import expire_errors_task

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def remember(api, **body):
    return api.post(
        "/errors", {"tool_name": "git_push", "error": "rejected: non-fast-forward", **body}
    )


def fail(api, session, error="rejected: non-fast-forward", **extra):
    body = {
        "messages": [
            {"role": "tool", "tool_name": "git_push", "content": error, "is_error": True, **extra}
        ]
    }
    return api.post(f"/sessions/{session.id}/messages", body)


# --- hint rules: one test per outcome ---------------------------------------------------
@pytest.mark.parametrize(
    ("outcome", "fields", "rule", "text"),
    [
        (
            "resolved",
            {"resolution": "pull --rebase then push"},
            "apply",
            "apply: pull --rebase then push",
        ),
        ("failed", {"strategy": "retry the push"}, "avoid", "avoid: retry the push"),
        ("abandoned", {"strategy": "force push"}, "avoid", "avoid: force push"),
        ("open", {}, "seen before", "seen before"),
    ],
)
def test_the_hint_of_each_outcome(api, session, outcome, fields, rule, text):
    record = remember(api, outcome=outcome, **fields).json()

    hints = fail(api, session).json()["hints"]

    assert hints == [
        {
            "tool_name": "git_push",
            "error_id": record["id"],
            "outcome": outcome,
            "rule": rule,
            "text": text,
            "error": "rejected: non-fast-forward",
            "strategy": fields.get("strategy", ""),
            "resolution": fields.get("resolution", ""),
            "similarity": 1.0,
        }
    ]


def test_hints_rank_the_most_similar_then_resolved_first(api, session):
    other = remember(
        api,
        error="permission denied (publickey)",
        outcome="resolved",
        resolution="load the ssh key",
    ).json()
    avoid = remember(api, outcome="abandoned", strategy="force push").json()
    apply = remember(
        api, outcome="resolved", strategy="rebase", resolution="pull --rebase then push"
    ).json()

    hints = fail(api, session, "Rejected:  NON-fast-forward").json()["hints"]

    # the same normalised error (case and spacing do not count) first, resolved first
    assert [h["error_id"] for h in hints] == [apply["id"], avoid["id"], other["id"]]
    assert [h["similarity"] for h in hints[:2]] == [1.0, 1.0]
    assert hints[2]["similarity"] < 1.0


def test_capture_records_an_open_error_once_per_tool_and_normalised_text(api, agent, session):
    first = fail(api, session, "timeout after 30s on host 10.0.0.7")
    again = fail(api, session, "Timeout after  45s on host 10.0.0.9")
    other_tool = api.post(
        f"/sessions/{session.id}/messages",
        {
            "messages": [
                {
                    "role": "tool",
                    "tool_name": "deploy",
                    "content": "timeout after 30s on host 10.0.0.7",
                    "is_error": True,
                }
            ]
        },
    )

    assert (first.status_code, again.status_code, other_tool.status_code) == (201, 201, 201)
    records = list(
        ErrorRecord.objects.order_by("id").values_list("tool_name", "outcome", "hit_count")
    )
    # the second failure matched the first record (a hit) and was hinted it (another)
    assert records == [("git_push", "open", 2), ("deploy", "open", 0)]
    # the first failure gets no hint (its own record is not "before"); the second does
    assert first.json()["hints"] == []
    assert [h["rule"] for h in again.json()["hints"]] == ["seen before"]
    assert first.json()["messages"][0]["is_error"] is True
    record = ErrorRecord.objects.get(tool_name="git_push")
    # a failure appended without a call answers the call the API recorded for it
    call_id = first.json()["messages"][0]["tool_call_id"]
    assert (record.session_id, record.context) == (
        session.id,
        {"session": "chat-1", "tool_call_id": call_id},
    )
    assert call_id.startswith("call_")


def test_the_tool_is_found_from_the_call_it_answers(api, session):
    call = {
        "id": "call-7",
        "type": "function",
        "function": {"name": "git_push", "arguments": '{"branch": "main"}'},
    }
    api.post(
        f"/sessions/{session.id}/messages",
        {"messages": [{"role": "assistant", "content": None, "tool_calls": [call]}]},
    )

    response = api.post(
        f"/sessions/{session.id}/messages",
        {
            "messages": [
                {"role": "tool", "tool_call_id": "call-7", "content": "rejected", "is_error": True}
            ]
        },
    )

    assert response.json()["messages"][0]["tool_name"] == "git_push"
    record = ErrorRecord.objects.get()
    assert (record.tool_name, record.arguments) == ("git_push", {"branch": "main"})


def test_bad_failures_are_refused_and_nothing_is_stored(api, session):
    not_tool = api.post(
        f"/sessions/{session.id}/messages",
        {"messages": [{"role": "user", "content": "x", "is_error": True}]},
    )
    nameless = api.post(
        f"/sessions/{session.id}/messages",
        {
            "messages": [
                {"role": "user", "content": "ok"},
                {"role": "tool", "tool_call_id": "unknown", "content": "x", "is_error": True},
            ]
        },
    )

    assert not_tool.status_code == 422
    assert not_tool.json()["detail"][0]["loc"] == ["body", "messages", 0, "is_error"]
    assert nameless.status_code == 422
    assert nameless.json()["detail"][0] == {
        "loc": ["body", "messages", 1, "tool_name"],
        "type": "value_error",
        "msg": "a failing tool message needs tool_name, or the tool_call_id of a known call",
    }
    assert session.messages.count() == 0
    assert ErrorRecord.objects.count() == 0


def test_remember_update_read_delete(api, session):
    created = remember(api, strategy="force push", arguments={"force": True}, session_id="chat-1")
    same = remember(api, strategy="force push", outcome="abandoned")
    record_id = created.json()["id"]

    patched = api.patch(f"/errors/{record_id}", {"outcome": "failed"})
    listed = api.get("/errors", {"tool_name": "git_push", "outcome": "failed"}).json()
    read = api.get(f"/errors/{record_id}").json()

    assert (created.status_code, same.status_code) == (201, 200)  # same tool, error, strategy
    assert same.json()["outcome"] == "abandoned"
    assert (same.json()["id"], same.json()["hit_count"]) == (record_id, 1)
    assert patched.json()["outcome"] == "failed"
    assert [r["id"] for r in listed["items"]] == [record_id]
    assert (read["arguments"], read["session_id"]) == ({"force": True}, str(session.id))
    assert api.delete(f"/errors/{record_id}").status_code == 204
    assert api.get(f"/errors/{record_id}").status_code == 404


@pytest.mark.parametrize(
    ("body", "loc"),
    [
        ({"tool_name": "", "error": "x"}, ["body", "tool_name"]),
        ({"tool_name": "t", "error": "  "}, ["body", "error"]),
        ({"tool_name": "t", "error": "x", "outcome": "won"}, ["body", "outcome"]),
        (
            {
                "tool_name": "t",
                "error": "x",
                "arguments": {"a": [[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]},
            },
            ["body", "arguments"],
        ),
        ({"tool_name": "t", "error": "a\\u0000b"}, ["body", "error"]),
    ],
)
def test_bad_records_are_422_naming_the_field(api, body, loc):
    import json

    response = api.post("/errors", raw=json.dumps(body).replace("\\\\u0000", "\\u0000"))

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == loc[-1]
    assert ErrorRecord.objects.count() == 0


def test_search_matches_substring_and_meaning_and_refreshes_the_ttl(
    api, agent, django_capture_on_commit_callbacks
):
    with time_machine.travel(T0, tick=False), django_capture_on_commit_callbacks(execute=True):
        hit = remember(api, error="Rejected: non-fast-forward update").json()
        remember(api, tool_name="deploy", error="disk full")
    with time_machine.travel(T0 + timedelta(days=10), tick=False):
        found = api.post("/errors/search", {"query": "non-fast-forward", "k": 5}).json()["items"]

    assert found[0]["record"]["id"] == hit["id"]
    assert sorted(found[0]["legs"]) == ["contains", "vector"]
    assert found[0]["record"]["expires_at"] == "2026-06-09T12:00:00Z"  # day 10 + 90
    assert found[0]["record"]["hit_count"] == 1
    only_deploy = api.post("/errors/search", {"query": "non-fast-forward", "tool_name": "deploy"})
    assert all(h["record"]["tool_name"] == "deploy" for h in only_deploy.json()["items"])


def test_promote_a_resolved_or_failed_record_to_a_learning(api, session):
    resolved = remember(api, outcome="resolved", resolution="pull --rebase then push").json()
    still_open = remember(api, strategy="wait").json()

    promoted = api.post(f"/errors/{resolved['id']}/promote")
    refused = api.post(f"/errors/{still_open['id']}/promote")

    assert promoted.status_code == 201
    assert (promoted.json()["kind"], promoted.json()["status"], promoted.json()["content"]) == (
        "error",
        "active",
        'git_push failed with "rejected: non-fast-forward"; apply: pull --rebase then push',
    )
    assert promoted.json()["error_record_id"] == resolved["id"]
    assert refused.status_code == 409
    assert Learning.objects.count() == 1


# --- the TTL, under a frozen clock -------------------------------------------------------
def test_a_hit_on_day_89_moves_the_expiry_to_90_days_after_it(api, agent, session):
    with time_machine.travel(T0, tick=False):
        record = remember(api, outcome="resolved", resolution="rebase").json()
    assert record["expires_at"] == "2026-05-30T12:00:00Z"  # T0 + 90 days

    with time_machine.travel(T0 + timedelta(days=89), tick=False):
        hints = fail(api, session).json()["hints"]

    assert [h["error_id"] for h in hints] == [record["id"]]
    stored = ErrorRecord.objects.get(pk=record["id"])
    assert stored.expires_at == T0 + timedelta(days=89 + 90)
    assert stored.last_hit_at == T0 + timedelta(days=89)
    assert stored.hit_count == 2  # the failure matched it (capture), and it was hinted


def test_the_expiry_task_deletes_exactly_the_records_past_their_expiry(agent, session, caplog):
    with time_machine.travel(T0, tick=False):
        error_record_create(agent=agent, tool_name="a", error="one")
    with time_machine.travel(T0 + timedelta(days=1), tick=False):
        newer, _ = error_record_create(agent=agent, tool_name="b", error="two")
    agent.settings = {"error_memory_ttl_days": 5}
    agent.save()
    with time_machine.travel(T0 + timedelta(days=2), tick=False):
        short, _ = error_record_create(agent=agent, tool_name="c", error="three")

    with time_machine.travel(T0 + timedelta(days=90), tick=False), caplog.at_level("INFO"):
        assert expire_errors_task() == 2  # "old" expires exactly now, "short" on day 7

    assert list(ErrorRecord.objects.values_list("pk", flat=True)) == [newer.pk]
    assert short.expires_at == T0 + timedelta(days=7)
    assert "error memory: 2 expired record(s) deleted" in caplog.messages


def test_an_expired_record_is_neither_listed_nor_hinted(api, session):
    with time_machine.travel(T0, tick=False):
        record = remember(api, outcome="resolved", resolution="rebase").json()
    with time_machine.travel(T0 + timedelta(days=91), tick=False):
        listed = api.get("/errors").json()["items"]
        hints = fail(api, session).json()["hints"]
        read = api.get(f"/errors/{record['id']}")

    assert (listed, hints, read.status_code) == ([], [], 404)
