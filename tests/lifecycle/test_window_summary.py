"""Issue 22, seed 000: the window carries the messages that left it until the rolling
summary covers them (window_includes_unsummarised), so none sits in neither."""

import pytest

from tests.lifecycle.helpers import add, use_llm
from tests.support.llm_server import Status

pytestmark = pytest.mark.django_db

ALL = [f"message {i}" for i in range(20)]
NEWEST_16 = ALL[4:]


def _twenty(session):
    return add(session, *ALL, role=None)


def _window(api, session):
    body = api.get(f"/sessions/{session.id}/window").json()
    return [m["content"] for m in body["messages"]], body["unsummarised"], body["summary"]


def _recency_leg(api, session):
    body = api.post("/context", {"session_id": str(session.id), "lifecycle": "off"}).json()
    assert all(m["legs"] == ["recency"] for m in body["messages"])
    return [m["content"] for m in body["messages"]]


def test_the_window_holds_what_left_it_until_a_summary_run_covers_it(
    api, session, settings, llm_server
):
    use_llm(settings, llm_server)
    _twenty(session)  # 4 left the 16-message window: under the trigger, no summary yet
    before = _window(api, session)
    llm_server.script("They counted from 0 to 3.")

    runs = api.post(f"/sessions/{session.id}/summarize").json()["runs"]

    assert before == (ALL, 4, None)
    assert [(r["status"], r["message_count"]) for r in runs] == [("ok", 4)]
    assert _window(api, session) == (NEWEST_16, 0, "They counted from 0 to 3.")


def test_get_contexts_recency_leg_reaches_back_to_the_summary_too(
    api, session, settings, llm_server
):
    use_llm(settings, llm_server)
    _twenty(session)
    before = _recency_leg(api, session)
    llm_server.script("They counted from 0 to 3.")
    api.post(f"/sessions/{session.id}/summarize")

    # the leg's own 10, and back without a gap over the 4 not yet summarised
    assert before == ALL
    assert _recency_leg(api, session) == ALL[10:]


def test_a_failing_summary_leaves_the_messages_in_the_window(api, session, settings, llm_server):
    use_llm(settings, llm_server)
    _twenty(session)
    llm_server.script(Status(500))

    runs = api.post(f"/sessions/{session.id}/summarize").json()["runs"]

    assert [r["status"] for r in runs] == ["failed"]
    assert _window(api, session) == (ALL, 4, None)


def test_without_an_llm_the_extractive_summary_covers_them(api, session):
    _twenty(session)

    runs = api.post(f"/sessions/{session.id}/summarize").json()["runs"]

    messages, unsummarised, summary = _window(api, session)
    assert [(r["status"], r["reason"], r["message_count"]) for r in runs] == [
        ("fallback", "not_configured", 4)
    ]
    assert (messages, unsummarised) == (NEWEST_16, 0)
    # "message N" says nothing salient: the extractive summary notes the newest line
    assert summary == "- [2026-01-05 09:03] assistant: message 3"


def test_off_is_seed_000s_plain_window_and_recency_leg(api, session):
    _twenty(session)
    api.patch("/agent/settings", {"settings": {"window_includes_unsummarised": False}})

    assert _window(api, session) == (NEWEST_16, 0, None)
    assert _recency_leg(api, session) == ALL[10:]
