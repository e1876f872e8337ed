"""End-to-end flows in real headless Chromium: log in, the dashboard, a session timeline
with a compact marker, a search that finds a message, approving a pending fact and editing a
learning, filtering sessions by user and opening a user's page. Each page visited is
screenshotted when MEMORYHUB_SCREENSHOTS is set.

Data comes in through the JSON API (the `api` fixture), the agents' own write path; the
editor works through the pages like a person would."""

from datetime import UTC, datetime, timedelta

from selenium.webdriver.support.ui import Select, WebDriverWait

from apps.agents.models import AuditEvent
from apps.conversations.models import CompactMarker
from apps.entries.models import Entry
from apps.facts.models import Fact, FactStatus
from apps.learnings.models import Learning
from tests.review.e2e.conftest import WAIT_SECONDS
from tests.review.users_seed import ALICE, seed_three

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
PAGE = "/review/agents/alice-bot"


def _ok(response, status=200) -> dict:
    assert response.status_code == status, response.content
    return response.json()


def _session(api, key: str, texts: list[str], start=T0) -> dict:
    """A session with user and assistant turns, one minute apart."""
    session = _ok(api.post("/sessions", {"key": key}), 201)
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": text,
            "created_at": (start + timedelta(minutes=i)).isoformat(),
        }
        for i, text in enumerate(texts)
    ]
    _ok(api.post(f"/sessions/{session['id']}/messages", {"messages": messages}), 201)
    return session


def _login(browser, start: str) -> None:
    """Open a review page logged out, log in through the form, and land back on it."""
    browser.visit(start)
    assert browser.path == f"/accounts/login/?next={start}"
    browser.login("eddie", "pw-eddie")
    assert browser.path == start


def test_log_in_and_the_dashboard_lists_the_agent_with_its_counts(browser, api, editor):
    _session(api, "chat-1", ["hello", "hi there", "how are you?"])
    _ok(api.post("/facts", {"category": "food", "key": "coffee", "value": "black"}), 201)
    _ok(api.patch("/agent/settings", {"settings": {"fact_review": True}}))
    _ok(api.post("/memory/save", {"content": "The user's dog is called Rex", "review": True}))

    browser.visit("/review/")
    assert browser.path == "/accounts/login/?next=/review/"
    browser.login("eddie", "pw-eddie")

    assert browser.path == "/review/"
    browser.assert_stylesheet_applied()
    assert browser.one("h1").text == "Agents"
    [card] = browser.all(".agent-card")
    assert card.get_attribute("id") == "agent-alice-bot"
    assert browser.one("#agent-alice-bot h2 a").text == "alice-bot"
    counts = {
        name: browser.one(f"#agent-alice-bot dd.{name}").text
        for name in ("sessions", "messages", "facts", "pending", "backlog", "consolidation")
    }
    assert counts == {
        "sessions": "1",
        "messages": "3",
        "facts": "2",
        "pending": "1",
        "backlog": "0",
        "consolidation": "never",
    }
    assert len(browser.all("#agent-alice-bot figure.activity svg")) == 1

    browser.submit(browser.one("#agent-alice-bot h2 a"))

    assert browser.path == f"{PAGE}/"
    assert browser.one("nav.crumbs .role").text == "editor"


def test_a_session_timeline_shows_its_compact_marker_linking_to_the_archive(
    browser, api, agent, editor
):
    texts = [f"turn {i:02d} about the berlin deploy " + "x" * 60 for i in range(12)]
    session = _session(api, "chat-1", texts)
    _ok(api.patch("/agent/settings", {"settings": {"max_history_bytes": 600}}))
    _ok(api.post(f"/sessions/{session['id']}/compact"))
    marker = CompactMarker.objects.get(session_id=session["id"])
    # 12 messages of 92 bytes over 600: at most 480 kept, on a pair boundary: the last 4.
    assert (marker.archive_name, marker.message_count) == ("archive/chat-1/1", 8)
    archive = Entry.objects.get(agent=agent, name=marker.archive_name)
    timeline = f"{PAGE}/sessions/{session['id']}/"

    _login(browser, timeline)

    assert browser.one("h1").text == "chat-1"
    assert len(browser.all("ol.timeline li.msg")) == 12
    divider = browser.one(f"ol.timeline li.marker#marker-{marker.pk}")
    assert divider.text == (
        f"Compacted: {marker.message_count} messages (2026-01-05 09:00 \N{EN DASH} "
        f"{marker.last_message_at:%Y-%m-%d %H:%M}) archived in {marker.archive_name}"
    )
    # The divider sits right before the first message the compaction kept, where the hot
    # window starts too (12 messages are fewer than max_history_messages).
    items = browser.all("ol.timeline > li")
    index = [i.get_attribute("id") for i in items].index(f"marker-{marker.pk}")
    after = items[index + 1 : index + 3]
    assert [i.get_attribute("class") for i in after] == ["hot-boundary", "msg user hot-start"]
    assert f"turn {marker.message_count:02d} about" in after[1].text
    link = browser.one(f"#marker-{marker.pk} a")
    assert link.text == "archive/chat-1/1"
    browser.show(divider, "compact-marker")

    browser.submit(link)

    assert browser.path == f"{PAGE}/entries/{archive.pk}/"
    assert browser.one("h1").text == "archive/chat-1/1"
    assert browser.one(".markdown h1").text.startswith("Archive of session chat-1: ")
    browser.submit(browser.one(".view-toggle a"))  # the text as stored
    assert browser.path == f"{PAGE}/entries/{archive.pk}/?raw=1"
    content = browser.one("pre.entry-content").text
    assert content.startswith("# Archive of session chat-1: ")
    # Without a model the archive is the salient sentences
    # (apps/lifecycle/services/sentence_salience.py).
    assert "user: turn 06 about the berlin deploy" in content


def test_a_search_finds_the_message_highlighted_and_links_to_its_place(browser, api, editor):
    filler = [f"small talk number {i}" for i in range(10)]
    session = _session(api, "chat-1", [*filler, "The release train leaves from Rotterdam", "ok"])
    target = _ok(api.get(f"/sessions/{session['id']}/messages", {"limit": 100}))["items"][10]
    search = f"{PAGE}/search/"

    _login(browser, search)
    browser.one("input[name=q]").send_keys("rotterdam")
    browser.one("select[name=mode] option[value=keyword]").click()
    browser.submit(browser.one("form.search-form button[type=submit]"))

    # user=+: the user filter's "everyone" (a blank; "" would be the agent's own sessions).
    assert browser.path == f"{search}?q=rotterdam&mode=keyword&session=&user=+"
    assert len(browser.all("ol.hits > li.block")) == 1
    # Keyword mode: BM25 over the archive, a substring match in the hot window.
    assert browser.texts("li.is-hit .leg") == ["substring #1"]
    assert browser.texts("li.block li.is-hit mark") == ["Rotterdam"]
    assert browser.one("li.is-hit .text").text == "The release train leaves from Rotterdam"
    # the hit with its 2 messages before and 1 after, in one block naming its session
    assert browser.texts("li.block li.msg .text") == [
        "small talk number 8", "small talk number 9",
        "The release train leaves from Rotterdam", "ok",
    ]  # fmt: skip
    assert browser.one("li.block .block-session").text.startswith("Session chat-1")
    link = browser.one("li.is-hit .hit-head a")

    browser.submit(link)

    assert browser.path == f"{PAGE}/sessions/{session['id']}/?around={target['id']}"
    shown = browser.wait_for(f"li#m-{target['id']}")
    assert "The release train leaves from Rotterdam" in shown.text


def test_an_editor_approves_a_pending_fact_in_the_review_queue(browser, api, agent, editor):
    _ok(api.patch("/agent/settings", {"settings": {"fact_review": True}}))
    _ok(api.post("/memory/save", {"content": "The user's dog is called Rex", "review": True}))
    fact = Fact.objects.get(agent=agent)
    assert fact.status == FactStatus.PENDING
    queue = f"{PAGE}/queue/"

    _login(browser, queue)
    assert browser.one(".queue-counts strong").text == "1"
    row = browser.one(f"tr#fact-{fact.pk}")
    assert "The user's dog is called Rex" in row.text
    row.find_element("xpath", ".//button[normalize-space()='Approve']").click()

    done = browser.wait_for(f"tr#fact-{fact.pk}.queue-done")
    assert done.text == f"Fact #{fact.pk} approved."
    browser.screenshot("approved")
    fact.refresh_from_db()
    assert fact.status == FactStatus.ACTIVE
    assert list(AuditEvent.objects.values_list("action", "user__username")) == [
        ("fact.approve", "eddie")
    ]
    browser.visit(queue)
    assert browser.one(".queue-counts strong").text == "0"
    assert browser.all("tr.queue-row") == []
    browser.visit(f"{PAGE}/facts/{fact.pk}/")
    assert "The user's dog is called Rex" in browser.one("main").text


def test_an_editor_edits_a_learning(browser, api, agent, editor):
    created = _ok(api.post("/learnings", {"kind": "correction", "content": "Ask first."}), 201)
    learnings = f"{PAGE}/learnings/"

    _login(browser, learnings)
    row = browser.one(f"tr#learning-{created['id']}")
    assert "Ask first." in row.text
    browser.submit(row.find_element("link text", "Edit"))
    assert browser.path == f"{PAGE}/learnings/{created['id']}/edit/"
    content = browser.one("textarea[name=content]")
    content.clear()
    content.send_keys("Ask before every deploy to berlin.")
    browser.submit(browser.one("main form button[type=submit]"))

    assert browser.path == learnings
    assert browser.texts("ul.messages li") == [f"Learning #{created['id']} saved."]
    row = browser.one(f"tr#learning-{created['id']}")
    assert row.find_elements("css selector", "td")[1].text == "Ask before every deploy to berlin."
    learning = Learning.objects.get(pk=created["id"])
    assert learning.content == "Ask before every deploy to berlin."
    [event] = AuditEvent.objects.filter(action="learning.update")
    assert (event.before["content"], event.after["content"]) == (
        "Ask first.",
        "Ask before every deploy to berlin.",
    )


def test_sessions_filter_by_user_in_the_form_and_a_label_opens_the_users_page(
    browser, agent, editor
):
    owners = seed_three(agent)
    sessions = f"{PAGE}/sessions/"

    def choose(label: str) -> list[str]:
        Select(browser.one("select[name=user]")).select_by_visible_text(label)
        browser.submit(browser.one("form.filters button[type=submit]"))
        return browser.texts("table.sessions tbody tr td:first-child")

    _login(browser, sessions)
    assert browser.texts("table.sessions tbody tr td:first-child") == [
        "bob-chat",
        "alice-chat",
        "agent-chat",
    ]
    assert choose(ALICE) == ["alice-chat"]
    assert browser.path == f"{sessions}?q=&user=telegram%3A42"
    assert choose("agent only") == ["agent-chat"]
    assert browser.path == f"{sessions}?q=&user="
    assert choose("everyone") == ["bob-chat", "alice-chat", "agent-chat"]

    browser.submit(browser.one(f"tr#session-{owners[ALICE].session.pk} a.user-label"))

    assert browser.path == f"{PAGE}/users/telegram:42/"
    assert browser.one("h1").text == "User telegram:42"
    assert browser.texts("#user-sessions tbody tr td:first-child") == ["alice-chat"]
    assert sorted(browser.texts("#user-facts tbody tr td:nth-child(2)")) == sorted(
        f.key for f in owners[ALICE].facts
    )


# -- the review queue: the counter follows htmx, a merge is chosen then confirmed (issue 28) --


def _pending_fact(api, agent, value: str, **fields) -> Fact:
    body = {"value": value, "review": True, **fields}
    created = _ok(api.post("/facts", body), 201)
    fact = Fact.objects.get(agent=agent, pk=created["fact"]["id"])
    assert fact.status == FactStatus.PENDING
    return fact


def _mark_document(browser) -> None:
    """A flag on this document's window: still there after htmx swaps, gone after a load."""
    browser.driver.execute_script("window.__memoryhubSameDocument = true;")


def _same_document(browser) -> bool:
    return browser.driver.execute_script("return window.__memoryhubSameDocument === true")


def test_the_queue_counter_follows_an_htmx_approve_without_a_reload(browser, api, agent, editor):
    _ok(api.post("/facts", {"category": "food", "key": "coffee", "value": "black"}), 201)
    _ok(api.patch("/agent/settings", {"settings": {"fact_review": True}}))
    rex = _pending_fact(api, agent, "The user's dog is called Rex", category="pets", key="dog")
    _pending_fact(api, agent, "The user's cat is called Tom", category="pets", key="cat")

    _login(browser, f"{PAGE}/queue/")
    assert browser.one("#queue-counts").text == "2 pending · 1 approved"
    _mark_document(browser)
    approve = f"tr#fact-{rex.pk} button"
    assert browser.one(approve).text == "Approve"
    browser.one(approve).click()

    assert browser.wait_for(f"tr#fact-{rex.pk}.queue-done").text == f"Fact #{rex.pk} approved."
    counter = browser.wait_for("#queue-counts", text="1 pending · 2 approved")
    assert counter.text == "1 pending · 2 approved"
    assert len(browser.all("#queue-counts")) == 1
    assert _same_document(browser), "the page was reloaded"
    browser.show(counter, "counter-after-approve")


def _option_values(browser, select_css: str) -> list[str]:
    return browser.driver.execute_script(
        "return [...document.querySelectorAll(arguments[0] + ' option')].map(o => o.value)",
        select_css,
    )


def test_merge_selects_nothing_until_the_editor_picks_then_confirms_naming_both_facts(
    browser, api, agent, editor
):
    near = _ok(api.post("/facts", {"category": "places", "key": "home",
                                   "value": "The user lives in Lyon, France"}), 201)  # fmt: skip
    mid = _ok(api.post("/facts", {"category": "travel", "key": "trip",
                                  "value": "The user lives in Paris"}), 201)  # fmt: skip
    far = _ok(api.post("/facts", {"category": "food", "key": "coffee",
                                  "value": "Black coffee please"}), 201)  # fmt: skip
    near, mid, far = (str(f["fact"]["id"]) for f in (near, mid, far))
    _ok(api.patch("/agent/settings", {"settings": {"fact_review": True}}))
    fact = _pending_fact(api, agent, "The user lives in Lyon, France, near the Saone river",
                         category="places", key="home-detail")  # fmt: skip
    select = f"tr#fact-{fact.pk} select#merge-into-{fact.pk}"

    _login(browser, f"{PAGE}/queue/")
    _mark_document(browser)
    browser.one(f"tr#fact-{fact.pk} a.merge").click()

    # The choice opens in the row, on its placeholder: no fact is selected.
    element = browser.wait_for(select)
    assert element.get_attribute("value") == ""
    chosen = Select(element).first_selected_option
    assert (chosen.get_attribute("value"), chosen.text) == ("", "choose the fact to merge into…")
    assert chosen.get_attribute("disabled") == "true"
    assert browser.driver.execute_script("return arguments[0].selectedIndex", element) == 0
    assert _option_values(browser, select) == ["", near, mid, far]  # the most similar first
    browser.show(element, "merge-choice")

    # Continue with nothing chosen (the browser's own check taken away): a 400 in the row.
    browser.driver.execute_script("arguments[0].removeAttribute('required')", element)
    browser.one(f"tr#fact-{fact.pk} form.merge button[type=submit]").click()
    error = browser.wait_for(f"tr#fact-{fact.pk} p.error")
    assert error.text == "Choose the fact to merge into. Nothing was changed."
    browser.driver.get_log("browser")  # Chromium logs the 400 answer; it was meant
    assert browser.one(select).get_attribute("value") == ""
    fact.refresh_from_db()
    assert (fact.status, fact.valid_to) == (FactStatus.PENDING, None)

    # The search narrows the candidates on the server; still nothing is chosen.
    search = browser.one(f"tr#fact-{fact.pk} input[name=q]")
    browser.driver.execute_script("arguments[0].value = 'lyon'", search)
    browser.one(f"tr#fact-{fact.pk} form.merge-search button").click()
    WebDriverWait(browser.driver, WAIT_SECONDS).until(
        lambda _: _option_values(browser, select) == ["", near]
    )
    assert browser.one(select).get_attribute("value") == ""

    Select(browser.one(select)).select_by_value(near)
    assert browser.one(select).get_attribute("value") == near
    browser.one(f"tr#fact-{fact.pk} form.merge button[type=submit]").click()

    # The confirmation names both facts and which one is kept; nothing is merged yet.
    confirm = browser.wait_for(f"tr#fact-{fact.pk} .merge-confirm")
    assert browser.one(".merge-confirm h2").text == f"Merge #{fact.pk} into #{near}?"
    assert browser.one(".merge-kept").text == (
        f"#{near} places / home agent-wide\nThe user lives in Lyon, France"
    )
    assert browser.one(".merge-merged").text == (
        f"#{fact.pk} places / home-detail agent-wide\n"
        "The user lives in Lyon, France, near the Saone river"
    )
    browser.show(confirm, "merge-confirmation")
    fact.refresh_from_db()
    assert (fact.status, fact.valid_to) == (FactStatus.PENDING, None)
    assert AuditEvent.objects.count() == 0

    merge = browser.one(f"tr#fact-{fact.pk} .merge-confirm button[type=submit]")
    assert merge.text == f"Merge #{fact.pk} into #{near}"
    merge.click()

    done = browser.wait_for(f"tr#fact-{fact.pk}.queue-done")
    assert done.text == f"Fact #{fact.pk} merged into #{near}."
    assert browser.wait_for("#queue-counts", text="0 pending").text == "0 pending · 3 approved"
    assert _same_document(browser), "the page was reloaded"
    fact.refresh_from_db()
    assert fact.superseded_by_id == int(near)
    assert list(AuditEvent.objects.values_list("action", "object_id")) == [
        ("fact.merge", str(fact.pk))
    ]
