"""In real headless Chromium (issue 28): a hostile entry's markdown runs nothing (no alert,
no handler, no script or image in the rendered content, links only http(s) or mailto), and a
reset session's timeline leads to the archive the reset made, rendered and as stored."""

from datetime import UTC, datetime, timedelta

from selenium.common.exceptions import NoAlertPresentException

from apps.entries.models import Entry
from tests.review.e2e.conftest import DESKTOP, PHONE
from tests.review.test_markdown import HOSTILE, MARK

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
PAGE = "/review/agents/alice-bot"
# Payloads that would change the page, were any to run.
MUTATING = [
    "<img src=x onerror=\"document.title='pwned'\">",
    "[x](javascript:document.title='pwned')",
    "<details open ontoggle=\"document.title='pwned'\">",
]


def _ok(response, status=200) -> dict:
    assert response.status_code == status, response.content
    return response.json()


def _login(browser, start: str) -> None:
    browser.visit(start)
    assert browser.path == f"/accounts/login/?next={start}"
    browser.login("eddie", "pw-eddie")
    assert browser.path == start


def _no_alert(browser) -> bool:
    try:
        browser.driver.switch_to.alert  # noqa: B018 - raises when there is none
    except NoAlertPresentException:
        return True
    return False


def test_a_hostile_entry_runs_no_script_in_the_browser(browser, api, agent, editor):
    text = "\n\n".join([*HOSTILE, *MUTATING, "[fine](https://ok.example) [mail](mailto:a@b.c)"])
    _ok(api.post("/entries", {"name": "notes/hostile.md", "content": text}), 201)
    entry = Entry.objects.get(agent=agent, name="notes/hostile.md")
    page = f"{PAGE}/entries/{entry.pk}/"

    _login(browser, page)

    assert _no_alert(browser)
    js = browser.driver.execute_script
    assert js("return document.title") == "notes/hostile.md · alice-bot · memoryhub"
    assert MARK in browser.one(".markdown").text
    assert (
        js(
            "return document.querySelectorAll('.markdown :is(script, img, iframe, svg, style, "
            "object, embed, form, details)').length"
        )
        == 0
    )
    handlers = js(
        "return [...document.querySelectorAll('.markdown *')]"
        ".flatMap(e => [...e.attributes].map(a => a.name)).filter(n => n.startsWith('on'))"
    )
    assert handlers == []
    links = js(
        "return [...document.querySelectorAll('.markdown a[href]')].map(a => [a.protocol, a.rel])"
    )
    assert sorted({tuple(link) for link in links}) == [
        ("http:", "noopener noreferrer nofollow"),  # http://a.example/XSS-MARK, the autolink
        ("https:", "noopener noreferrer nofollow"),
        ("mailto:", "noopener noreferrer nofollow"),
    ]
    browser.show(browser.one(".markdown"), "hostile-entry")
    browser.submit(browser.one(".view-toggle a"))
    assert browser.path == f"{page}?raw=1"
    assert _no_alert(browser)
    assert browser.one("pre.entry-content").text == text
    assert js("return document.title") == "notes/hostile.md · alice-bot · memoryhub"


def test_a_reset_sessions_timeline_leads_to_its_archive(browser, api, agent, editor):
    session = _ok(api.post("/sessions", {"key": "chat-1"}), 201)
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"turn {i} about the **berlin** deploy",
            "created_at": (T0 + timedelta(minutes=i)).isoformat(),
        }
        for i in range(6)
    ]
    _ok(api.post(f"/sessions/{session['id']}/messages", {"messages": messages}), 201)
    archive_name = _ok(api.post(f"/sessions/{session['id']}/reset"))["archive"]
    archive = Entry.objects.get(agent=agent, name=archive_name)
    timeline = f"{PAGE}/sessions/{session['id']}/"

    _login(browser, timeline)

    [reset] = browser.all("ol.timeline li.reset")
    assert reset.text.startswith("Session reset ")
    assert reset.text.endswith(f": its messages are archived in {archive_name}.")
    assert browser.texts("ol.timeline li.muted") == ["No messages since."]
    assert fits_a_phone(browser) is None
    browser.show(reset, "reset-note")
    browser.submit(browser.one("li.reset a"))

    assert browser.path == f"{PAGE}/entries/{archive.pk}/"
    assert browser.one(".markdown h1").text == (
        "Session chat-1 before its reset: 6 messages kept whole"
    )
    assert browser.texts(".markdown strong") == ["berlin"] * 6
    assert fits_a_phone(browser) is None
    browser.submit(browser.one(".view-toggle a"))
    assert browser.one("pre.entry-content").text == archive.content.strip()


def fits_a_phone(browser) -> dict | None:
    """What sticks out sideways of the page on screen at 390 px (None: nothing)."""
    browser.set_width(PHONE)
    try:
        return browser.overflow()
    finally:
        browser.set_width(DESKTOP)
