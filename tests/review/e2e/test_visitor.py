"""The visitor's pass (issue 40, point 5): the review pages tried as a new user would, in
real headless Chromium on a 1366 px window (the phone's points are in test_phone.py).

One seed, through the JSON API: bruno books a train (an assistant message that only calls
`book_ticket`, its result, the reply), the session is compacted with no rolling summary
since, the hot window is four messages long (so its newest four would open on the tool
result), `book_ticket`'s failure is in error memory, an agent-wide fact sits beside
bruno's, and a user is erased on the review page (an audit event of counts)."""

from datetime import UTC, datetime

import pytest
from django.test import Client
from django.urls import reverse

from apps.agents.models import AuditEvent
from apps.conversations.models import CompactMarker, Message, SessionMeta, Summary
from apps.conversations.selectors import window_first
from apps.facts.models import Fact
from apps.learnings.models import ErrorRecord
from tests.support.client import ok as _ok
from tests.support.client import timed_messages

SLUG = "alice-bot"
PAGE = f"/review/agents/{SLUG}"
T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
TOOL = "book_ticket"
CALL = "call_porto_1"
ARGUMENTS = '{"to": "Porto", "day": "friday"}'


def _turns() -> list[dict]:
    filler = []
    for i in range(4):
        filler.append({"role": "user", "content": f"earlier question {i} " + "x" * 80})
        filler.append({"role": "assistant", "content": f"earlier answer {i} " + "y" * 80})
    return [
        *filler,
        {"role": "user", "content": "Book me a train to Porto on friday."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": CALL, "type": "function", "function": {"name": TOOL, "arguments": ARGUMENTS}}
            ],
        },
        {"role": "tool", "tool_call_id": CALL, "tool_name": TOOL, "content": "booked: seat 42"},
        {"role": "assistant", "content": "Booked: seat 42 on friday's train to Porto."},
        {"role": "user", "content": "Thanks!"},
        {"role": "assistant", "content": "You're welcome."},
    ]


@pytest.fixture
def visited(api, agent, editor):
    """The seed (module docstring); the chat session's id."""
    chat = _ok(api.post("/sessions", {"key": "trip", "title": "A train", "user": "bruno"}), 201)
    _ok(api.post(f"/sessions/{chat['id']}/messages", timed_messages(T0, _turns())), 201)
    # Compact the filler away (on a pair boundary), with no rolling summary written.
    _ok(api.patch("/agent/settings", {"settings": {"max_history_bytes": 700}}))
    _ok(api.post(f"/sessions/{chat['id']}/compact"))
    window = {"max_history_messages": 4, "window_includes_unsummarised": False}
    _ok(api.patch("/agent/settings", {"settings": window}))
    _ok(api.post("/facts", {"category": "travel", "key": "seat", "value": "aisle"}), 201)
    mine = {"category": "travel", "key": "station", "value": "Campanha", "user": "bruno"}
    _ok(api.post("/facts", mine), 201)
    _ok(api.post("/errors", {"tool_name": TOOL, "error": "503: the booking service is down"}), 201)
    gone = _ok(api.post("/sessions", {"key": "old", "user": "carla"}), 201)
    turns = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    _ok(api.post(f"/sessions/{gone['id']}/messages", timed_messages(T0, turns)), 201)
    _ok(api.post("/facts", {**mine, "user": "carla"}), 201)
    client = Client()
    client.force_login(editor)
    erased = client.post(reverse("review:user_erase", args=[SLUG, "carla"]))
    assert erased.status_code == 302, erased.content
    return chat["id"]


def test_the_seed_is_the_visitors(visited, agent):
    # The compaction kept the last filler pair and the booking; no rolling summary since.
    marker = CompactMarker.objects.get(session_id=visited)
    assert marker.message_count == 6  # three of the four filler pairs
    assert not Summary.objects.filter(session_id=visited).exclude(content="").exists()
    assert SessionMeta.objects.get(session_id=visited).start_at == marker.cutoff_at
    # The newest four messages alone would open on the tool result.
    meta = SessionMeta.objects.get(session_id=visited)
    session = meta.session
    first = window_first(session=session, meta=meta)
    assert Message.objects.get(pk=first.pk).role == "tool"
    assert list(AuditEvent.objects.values_list("action", flat=True)) == ["user.erase"]
    assert sorted(Fact.objects.filter(agent=agent).values_list("user", flat=True)) == ["", "bruno"]
    assert list(ErrorRecord.objects.values_list("tool_name", flat=True)) == [TOOL]


def _login(browser, path: str) -> None:
    browser.visit(path)
    browser.login("eddie", "pw-eddie")
    assert browser.path == path


def test_the_audit_log_shows_an_erasure_as_counts_not_struck_values(browser, visited):
    _login(browser, f"{PAGE}/audit/")

    [event] = AuditEvent.objects.filter(action="user.erase")
    cell = browser.one(f"#audit-{event.pk} td[data-label=Changes]")
    assert browser.one(f"#audit-{event.pk} p.erased").text == (
        "Erased 1 session, 2 messages, 1 fact, 1 fact version."
    )
    assert cell.find_elements("css selector", "del, ins, s, strike") == []
    styles = browser.driver.execute_script(
        "return [...arguments[0].querySelectorAll('*')].map("
        "e => getComputedStyle(e).textDecorationLine)",
        cell,
    )
    assert set(styles) == {"none"}
    hashed = browser.one(f"#audit-{event.pk} p.erased-user").text
    assert hashed.startswith("The user is named by a keyed hash only: ")
    assert "carla" not in cell.text
    browser.show(cell, "audit-erasure")


def test_a_tool_name_never_wraps_mid_word_at_1366px(browser, visited):
    _login(browser, f"{PAGE}/learnings/")

    record = ErrorRecord.objects.get()
    code = browser.one(f"#error-{record.pk} td[data-label=Tool] code.tool-name")
    assert code.text == TOOL
    assert browser.driver.execute_script("return arguments[0].getClientRects().length", code) == 1
    assert browser.lines(code) == [TOOL]
    assert code.value_of_css_property("word-break") == "keep-all"
    assert code.value_of_css_property("overflow-wrap") == "normal"
    browser.show(code, "learnings-tool-name")


def test_the_agent_wide_fact_says_so_in_the_user_cell(browser, visited, agent):
    _login(browser, f"{PAGE}/facts/")

    shared = Fact.objects.get(agent=agent, key="seat")
    mine = Fact.objects.get(agent=agent, key="station")
    assert browser.one(f"#fact-{shared.pk} td[data-label=User]").text == "agent-wide"
    assert browser.one(f"#fact-{mine.pk} td[data-label=User]").text == "bruno"


def test_the_timeline_names_the_call_states_the_compaction_and_keeps_the_pair(browser, visited):
    _login(browser, f"{PAGE}/sessions/{visited}/")

    call = Message.objects.get(session_id=visited, role="assistant", content="")
    result = Message.objects.get(session_id=visited, role="tool")
    header = browser.one(f"#m-{call.pk} header")
    assert browser.one(f"#m-{call.pk} header .calls").text == f"→ calls {TOOL}(…)"
    assert header.text == f"assistant\n→ calls {TOOL}(…)\n2026-03-02 08:09:00"  # flex items
    # A compaction and no rolling summary since: the card says where the summary is.
    summary = browser.one("section.summary")
    assert "No summary yet" not in browser.one("main").text
    marker = CompactMarker.objects.get(session_id=visited)
    assert browser.one("section.summary p.compacted-summary").text == (
        f"Compacted up to {marker.cutoff_at:%Y-%m-%d %H:%M:%S}: the messages before it are "
        f"summarised in {marker.archive_name}. The messages since are below, in full."
    )
    # The hot-window line opens the call's turn: never between the call and its result.
    rows = [li.get_attribute("id") for li in browser.all("ol.timeline > li")]
    line = rows.index("hot-window")
    assert rows[line + 1 : line + 3] == [f"m-{call.pk}", f"m-{result.pk}"]
    assert browser.one("#hot-window").text == (
        "Hot window: the 5 messages the agent is sent start here"
    )
    browser.show(summary, "timeline-summary")
    browser.show(browser.one("#hot-window"), "timeline-hot-window")
