"""Compaction (seeds 000 and 003): archive, marker, start_at; nothing deleted; the window
replays from the latest marker; tool calls stay with their results."""

from datetime import timedelta

import pytest

from apps.conversations.models import CompactMarker, Message, SessionMeta
from apps.entries.models import Entry, EntryChange
from apps.lifecycle.models import Run
from tests.lifecycle.helpers import T0, add, use_llm
from tests.support.llm_server import Status

pytestmark = pytest.mark.django_db


def _limit(agent, max_bytes, **more):
    agent.settings = {"max_history_bytes": max_bytes, **more}
    agent.save()


def _turns(session, n, size=100, start=T0):
    """n user+assistant pairs, every message `size` bytes."""
    texts = [f"{'q' if i % 2 == 0 else 'a'}{i:03d} " + "x" * (size - 5) for i in range(2 * n)]
    return add(session, *texts, role=None, start=start)


def test_an_append_past_max_history_bytes_compacts_the_session(
    api, agent, session, django_capture_on_commit_callbacks
):
    _limit(agent, 1000)
    rows = _turns(session, 5)  # 1000 bytes: at the limit, not over

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(
            f"/sessions/{session.id}/messages",
            {"messages": [{"role": "user", "content": "q010 " + "x" * 95}]},
        )

    assert response.json()["lifecycle"] == ["compact"]
    # 1100 bytes over 1000: keep at most 800 on a pair boundary -> 7 messages from row 4
    meta = SessionMeta.objects.get(session=session)
    assert meta.start_at == rows[4].created_at
    assert meta.hot_bytes == 700
    [marker] = CompactMarker.objects.filter(session=session)
    assert (marker.archive_name, marker.cutoff_at, marker.message_count, marker.bytes) == (
        "archive/chat-1/1",
        rows[4].created_at,
        4,
        400,
    )
    archive = Entry.objects.get(agent=agent, name="archive/chat-1/1")
    assert archive.kind == "archive"
    assert archive.content.splitlines()[:3] == [
        "# Archive of session chat-1: 4 messages, 2026-01-05T09:00:00+00:00 to "
        "2026-01-05T09:03:00+00:00",
        "",
        # the salient sentences in half the characters: alike, so the newest user turn
        "- [2026-01-05 09:02] user: q002 " + "x" * 95,
    ]
    assert EntryChange.objects.get(entry=archive).changed_by == "compaction"
    [run] = Run.objects.filter(kind="compact")
    assert (run.trigger, run.status, run.reason, run.message_count) == (
        "auto",
        "fallback",
        "not_configured",
        4,
    )
    assert run.details == {
        "archive_name": "archive/chat-1/1",
        "marker_id": marker.pk,
        "start_at": rows[4].created_at.isoformat(),
        "bytes": 400,
    }
    assert Message.objects.filter(session=session).count() == 11  # nothing deleted


def test_window_replays_from_the_latest_marker_and_every_message_stays(api, agent, session):
    _limit(agent, 500, max_history_messages=16)
    rows = _turns(session, 4)  # 800 bytes

    api.post(f"/sessions/{session.id}/compact")
    window = api.get(f"/sessions/{session.id}/window").json()
    listed = api.get(f"/sessions/{session.id}/messages", {"limit": 100}).json()["items"]

    # over 500: keep at most 400 bytes on a pair boundary: from row 4
    assert [m["id"] for m in window["messages"]] == [str(r.id) for r in rows[4:]]
    assert window["start_at"] == rows[4].created_at.isoformat().replace("+00:00", "Z")
    assert [m["archive_name"] for m in window["markers"]] == ["archive/chat-1/1"]
    assert len(listed) == 8
    # the archive holds the prefix's salient sentences (alike here: the newest user turn)
    found = api.get("/entries/search", {"q": "q002"}).json()["items"]
    assert [h["entry"]["name"] for h in found] == ["archive/chat-1/1"]


def test_keyword_search_takes_compacted_messages_from_the_archive_once(api, agent, session):
    _limit(agent, 500)
    rows = _turns(session, 4)
    api.post(f"/sessions/{session.id}/compact")

    hits = api.post("/search", {"query": "q000", "mode": "keyword"}).json()["hits"]

    assert [(h["id"], list(h["legs"])) for h in hits] == [(str(rows[0].id), ["bm25"])]


def test_a_session_compacts_any_number_of_times(api, agent, session):
    _limit(agent, 500)
    _turns(session, 4)
    api.post(f"/sessions/{session.id}/compact")
    later = _turns(session, 2, start=T0 + timedelta(hours=1))  # 400 + 400 hot: over 500

    api.post(f"/sessions/{session.id}/compact")

    markers = list(
        CompactMarker.objects.filter(session=session).values_list("archive_name", flat=True)
    )
    assert markers == ["archive/chat-1/1", "archive/chat-1/2"]
    assert SessionMeta.objects.get(session=session).start_at == later[0].created_at
    window = api.get(f"/sessions/{session.id}/window").json()
    assert [m["archive_name"] for m in window["markers"]] == markers


def test_tool_calls_stay_with_their_results(api, agent, session):
    _limit(agent, 450)
    call = [{"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]
    add(session, "q0 " + "x" * 97, start=T0)  # user, 100
    add(session, "", role="assistant", tool_calls=call, start=T0 + timedelta(minutes=1))
    tool = add(session, "r" * 100, role="tool", tool_call_id="c1", start=T0 + timedelta(minutes=2))
    add(session, "a0 " + "x" * 97, role="assistant", start=T0 + timedelta(minutes=3))
    # user at minute 4 follows a tool result, not the assistant's answer: still a pair edge
    rows = add(
        session, "q1 " + "x" * 97, "a1 " + "x" * 97, role=None, start=T0 + timedelta(minutes=4)
    )

    api.post(f"/sessions/{session.id}/compact")

    # the tool result is never the first hot message: the cut is at the next user turn
    start_at = SessionMeta.objects.get(session=session).start_at
    assert start_at == rows[0].created_at
    assert start_at > tool[0].created_at


def test_the_archive_is_the_llms_summary_when_there_is_one(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    _limit(agent, 500)
    _turns(session, 4)
    llm_server.script('{"facts": []}', "They talked about q000 to q003.")

    extract, run = api.post(f"/sessions/{session.id}/compact").json()["runs"]

    assert (extract["kind"], extract["status"]) == ("extract", "ok")  # facts first (seed 001)
    assert (run["kind"], run["status"], run["model"]) == ("compact", "ok", "test-model")
    assert Entry.objects.get(name="archive/chat-1/1").content.endswith(
        "\n\nThey talked about q000 to q003.\n"
    )
    assert "[… " not in llm_server.chats[1].body["messages"][-1]["content"]


def test_an_llm_failure_still_compacts_with_an_extractive_archive(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    _limit(agent, 500)
    _turns(session, 4)
    llm_server.script(Status(503), Status(503))

    extract, run = api.post(f"/sessions/{session.id}/compact").json()["runs"]

    assert (extract["kind"], extract["status"], extract["reason"]) == (
        "extract",
        "fallback",
        "error",
    )
    assert (run["kind"], run["status"], run["reason"]) == ("compact", "fallback", "error")
    archive = Entry.objects.get(name="archive/chat-1/1").content
    assert archive.splitlines()[2:] == ["- [2026-01-05 09:02] user: q002 " + "x" * 95]


def test_under_the_limit_the_beat_does_nothing_but_on_demand_trims_to_80_percent(
    api, agent, session
):
    from apps.lifecycle.tasks import compact_task

    rows = _turns(session, 5)  # 1000 bytes, far under 5 MiB

    assert compact_task(str(session.pk)) == 0
    assert Run.objects.count() == 0
    api.post(f"/sessions/{session.id}/compact")

    assert SessionMeta.objects.get(session=session).start_at == rows[2].created_at  # 800 kept


def test_a_marker_is_not_a_message_and_reset_clears_markers(api, agent, session):
    _limit(agent, 500)
    _turns(session, 4)
    api.post(f"/sessions/{session.id}/compact")

    context = api.post("/context", {"session_id": str(session.id), "lifecycle": "off"}).json()
    api.post(f"/sessions/{session.id}/reset")

    assert all("archive" not in m["content"] for m in context["messages"])
    assert CompactMarker.objects.count() == 0
    assert Entry.objects.filter(name="archive/chat-1/1").exists()  # archives outlive a reset
