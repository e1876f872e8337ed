"""The new-user path, through the API, with an OpenAI-compatible model on the loopback
server and a real Celery worker on the configured broker (filesystem or Redis)."""

import time

import pytest
from django.core.exceptions import ObjectDoesNotExist

from apps.conversations.models import CompactMarker, Summary
from apps.entries.models import Entry
from apps.lifecycle.models import HistoryEntry
from tests.lifecycle.helpers import faithful, task_of, use_llm
from tests.support.llm_server import Completion, Delay, Reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.celery_worker]


def _model(mode: dict):
    def answer(body):
        if task_of(body) == "consolidate" and mode.get("consolidate") == "garbage":
            return Completion("Sorry, I can only chat.")
        if mode.get("hang"):
            return Delay(60, then="too late")
        return faithful(body)

    return Reply(answer, repeat=True)


def _eventually(check, seconds=60.0):
    deadline = time.monotonic() + seconds
    while True:
        try:
            return check()
        except (AssertionError, ObjectDoesNotExist, ValueError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def _append(api, session_id, texts, offset=0):
    body = {
        "messages": [
            {"role": "user" if (i + offset) % 2 == 0 else "assistant", "content": t}
            for i, t in enumerate(texts)
        ]
    }
    response = api.post(f"/sessions/{session_id}/messages", body)
    assert response.status_code == 201, response.content
    return response.json()


def test_sixty_messages_give_history_memory_and_summary_with_no_further_call(
    api, agent, settings, llm_server, celery_worker
):
    use_llm(settings, llm_server)
    mode: dict = {}
    llm_server.script(_model(mode))
    session = api.post("/sessions", {"key": "telegram:42"}).json()["id"]

    appended = _append(api, session, [f"line {i}: my cat is Whiskerino" for i in range(60)])

    assert appended["lifecycle"] == ["summary", "consolidate"]

    def written():
        entry = HistoryEntry.objects.get(agent=agent)
        assert entry.kind == "ok"
        assert "line 34: my cat is Whiskerino" in entry.content  # 60 - 25 kept = 35 messages
        assert "line 35" not in entry.content
        assert Entry.objects.get(agent=agent, name="MEMORY.md").content.startswith("# Memory\n")
        summary = Summary.objects.get(session_id=session).content
        assert "line 43: my cat is Whiskerino" in summary  # 60 - 16 left the window
        assert "line 44" not in summary

    _eventually(written)
    runs = api.get("/runs").json()["items"]
    assert sorted((r["kind"], r["trigger"], r["status"]) for r in runs) == [
        ("consolidate", "auto", "ok"),
        ("summary", "auto", "ok"),
    ]

    # a garbage answer yields a [raw-fallback] entry
    mode["consolidate"] = "garbage"
    _append(api, session, [f"more {i}" for i in range(30)], offset=60)

    def fell_back():
        kinds = list(HistoryEntry.objects.filter(agent=agent).values_list("kind", flat=True))
        assert kinds == ["ok", "raw-fallback"]

    _eventually(fell_back)
    fallback = HistoryEntry.objects.get(kind="raw-fallback")
    assert fallback.content.startswith("[raw-fallback] [")
    # 25 kept + 30 new = 55 unconsolidated: all but the newest 25, up to "more 4"
    assert fallback.content.splitlines()[0].endswith(" 30 messages, the last 10:")
    assert fallback.content.splitlines()[-1].endswith("] user: more 4")


def test_a_reset_with_a_hung_model_returns_within_its_timeout_and_loses_nothing(
    api, agent, settings, llm_server, celery_worker
):
    use_llm(settings, llm_server)
    api.patch("/agent/settings", {"settings": {"consolidation_timeout_seconds": 3}})
    llm_server.script(_model({"hang": True}))
    session = api.post("/sessions", {"key": "hung"}).json()["id"]
    texts = [f"precious {i} " + "detail " * 60 for i in range(12)]
    _append(api, session, texts)

    started = time.monotonic()
    body = api.post(f"/sessions/{session}/reset").json()
    took = time.monotonic() - started

    assert took < 3 + 3
    assert body["deleted_messages"] == 12
    kept = Entry.objects.get(agent=agent, name=body["archive"]).content
    kept += "".join(HistoryEntry.objects.filter(agent=agent).values_list("content", flat=True))
    assert [t for t in texts if t not in kept] == []


def test_a_session_past_max_history_bytes_is_compacted_and_lists_every_message(
    api, agent, settings, llm_server, celery_worker
):
    use_llm(settings, llm_server)
    llm_server.script(_model({}))
    api.patch("/agent/settings", {"settings": {"max_history_bytes": 4000}})
    session = api.post("/sessions", {"key": "big"}).json()["id"]

    texts = [f"turn {i} " + "x" * 400 for i in range(12)]  # ~4.9 kB
    assert _append(api, session, texts)["lifecycle"] == ["compact"]

    def compacted():
        [marker] = CompactMarker.objects.filter(session_id=session)
        assert marker.archive_name == "archive/big/1"
        window = api.get(f"/sessions/{session}/window").json()
        assert window["start_at"] is not None
        assert [m["archive_name"] for m in window["markers"]] == ["archive/big/1"]

    _eventually(compacted)
    archive = api.get("/entries/archive/big/1").json()
    assert archive["kind"] == "archive"
    listed = api.get(f"/sessions/{session}/messages", {"limit": 100}).json()["items"]
    assert [m["content"] for m in listed] == texts
