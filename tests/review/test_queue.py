"""The review queue page and its actions: approve, edit then approve, reject, merge; as
anonymous, another team, a viewer and an editor."""

from html import unescape
from html.parser import HTMLParser

import pytest
from django.template.defaultfilters import floatformat
from django.urls import reverse

from apps.agents.models import AuditEvent
from apps.facts.models import Fact, FactStatus, FactVersion
from apps.facts.services import fact_save
from apps.facts.unit_vectors import unit

pytestmark = pytest.mark.django_db

HX = {"HX-Request": "true"}


def _pending(agent, value="The user's cat is called Whiskerino", **extra):
    return fact_save(agent=agent, content=value, pending=True, **extra).fact


def _active(agent, value="The user lives in Lyon", **extra):
    return fact_save(agent=agent, content=value, **extra).fact


def _url(name, agent, *args):
    return reverse(f"review:{name}", args=[agent.slug, *args])


def _state(fact):
    fact = Fact.objects.filter(pk=fact.pk).first()
    if fact is None:
        return None
    return (fact.status, fact.value, fact.key, fact.valid_to, fact.versions.count())


# --- the page ---


def test_queue_sends_anonymous_users_to_log_in(anon_client, agent):
    url = _url("queue", agent)

    response = anon_client.get(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_queue_is_404_for_another_team(outsider_client, agent):
    assert outsider_client.get(_url("queue", agent)).status_code == 404


def test_queue_shows_pending_facts_oldest_first_with_counts_to_a_viewer(viewer_client, agent):
    first = _pending(agent, "The user's cat is called Whiskerino")
    second = _pending(agent, "The user's sister lives in Lyon")
    _active(agent, "The user likes tea")

    response = viewer_client.get(_url("queue", agent))

    assert response.status_code == 200
    assert [f.pk for f in response.context["pending"]] == [first.pk, second.pk]
    assert response.context["counts"] == {"active": 1, "pending": 2}
    html = response.content.decode()
    assert html.index("Whiskerino") < html.index("Lyon")
    # The counter is the partial the htmx answers carry out of band (without the attribute).
    assert '<span id="queue-counts"><strong>2</strong> pending · 1 approved</span>.' in html
    # A viewer reads: no action buttons.
    assert _url("queue_approve", agent, first.pk) not in html


def test_queue_shows_the_actions_to_an_editor(editor_client, agent):
    fact = _pending(agent)
    target = _active(agent)

    response = editor_client.get(_url("queue", agent))

    html = response.content.decode()
    for name in ("queue_approve", "queue_edit", "queue_reject", "queue_merge"):
        assert _url(name, agent, fact.pk) in html
    # Merge is a link to the choice: the queue offers no target, let alone a chosen one.
    assert "<select" not in html
    assert f'value="{target.pk}"' not in html
    assert html.count("csrfmiddlewaretoken") == 3  # approve, reject; and log out


def test_pending_text_is_escaped_on_the_queue(viewer_client, agent):
    _pending(agent, "<script>alert(1)</script> is the user's password hint")

    html = viewer_client.get(_url("queue", agent)).content.decode()

    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# --- approve ---


def test_approve_sends_anonymous_users_to_log_in(anon_client, agent):
    fact = _pending(agent)
    url = _url("queue_approve", agent, fact.pk)

    response = anon_client.post(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")
    assert _state(fact)[0] == FactStatus.PENDING


def test_approve_is_404_for_another_team(outsider_client, agent):
    fact = _pending(agent)

    assert outsider_client.post(_url("queue_approve", agent, fact.pk)).status_code == 404
    assert _state(fact)[0] == FactStatus.PENDING


def test_approve_is_403_for_a_viewer_and_changes_nothing(viewer_client, agent):
    fact = _pending(agent)
    before = _state(fact)

    assert viewer_client.post(_url("queue_approve", agent, fact.pk)).status_code == 403
    assert _state(fact) == before
    assert AuditEvent.objects.count() == 0


def test_approve_by_an_editor_activates_the_fact_with_a_version_and_an_audit_event(
    editor_client, editor, agent
):
    fact = _pending(agent)

    response = editor_client.post(_url("queue_approve", agent, fact.pk))

    assert (response.status_code, response["Location"]) == (302, _url("queue", agent))
    fact.refresh_from_db()
    assert fact.status == FactStatus.ACTIVE
    assert list(fact.versions.values_list("reason", "changed_by")) == [
        ("proposed for review", "agent"),
        ("approved", "review:eddie"),
    ]
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.source, event.object_type, event.object_id) == (
        "fact.approve",
        editor,
        "review",
        "fact",
        str(fact.pk),
    )
    assert (event.before["status"], event.after["status"]) == ("pending", "active")
    assert event.after["value"] == fact.value


def test_approve_with_htmx_answers_the_row_note(editor_client, agent):
    fact = _pending(agent)

    response = editor_client.post(
        _url("queue_approve", agent, fact.pk), headers={"HX-Request": "true"}
    )

    assert response.status_code == 200
    row = f'<tr id="fact-{fact.pk}" class="queue-done"><td colspan="4">Fact #{fact.pk} approved.'
    expected = f"{row}</td></tr>\n{_counter(0, 1)}"
    assert response.content.decode().strip() == expected


def test_approving_a_fact_that_is_not_pending_is_409_and_changes_nothing(editor_client, agent):
    fact = _active(agent)
    before = _state(fact)

    response = editor_client.post(_url("queue_approve", agent, fact.pk))

    assert response.status_code == 409
    assert "not waiting for review" in response.content.decode()
    assert _state(fact) == before
    assert AuditEvent.objects.count() == 0


def test_approving_another_agent_s_fact_is_404(editor_client, agent, other_agent):
    fact = _pending(other_agent)

    assert editor_client.post(_url("queue_approve", agent, fact.pk)).status_code == 404
    assert _state(fact)[0] == FactStatus.PENDING


def test_approve_answers_get_with_405(editor_client, agent):
    fact = _pending(agent)

    assert editor_client.get(_url("queue_approve", agent, fact.pk)).status_code == 405


# --- edit then approve ---


def test_queue_edit_sends_anonymous_users_to_log_in(anon_client, agent):
    fact = _pending(agent)
    url = _url("queue_edit", agent, fact.pk)

    response = anon_client.get(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_queue_edit_is_404_for_another_team(outsider_client, agent):
    fact = _pending(agent)

    assert outsider_client.get(_url("queue_edit", agent, fact.pk)).status_code == 404
    assert outsider_client.post(_url("queue_edit", agent, fact.pk), {}).status_code == 404


def test_queue_edit_is_403_for_a_viewer_and_changes_nothing(viewer_client, agent):
    fact = _pending(agent)
    before = _state(fact)
    data = {"value": "Changed", "category": "pets", "key": "cat", "importance": "0.9"}

    assert viewer_client.get(_url("queue_edit", agent, fact.pk)).status_code == 403
    assert viewer_client.post(_url("queue_edit", agent, fact.pk), data).status_code == 403
    assert _state(fact) == before


def test_queue_edit_shows_the_form_filled_in(editor_client, agent):
    fact = _pending(agent, key="cat", category="pets")

    response = editor_client.get(_url("queue_edit", agent, fact.pk))

    assert response.status_code == 200
    assert response.context["form"].initial == {
        "value": fact.value,
        "category": "pets",
        "key": "cat",
        "importance": 0.5,
    }
    assert "csrfmiddlewaretoken" in response.content.decode()


def test_queue_edit_saves_the_changes_as_versions_then_approves(editor_client, editor, agent):
    fact = _pending(agent, key="cat", category="pets")
    data = {"value": "The user's cat is Tom", "category": "animals", "key": "cat-name",
            "importance": "0.9"}  # fmt: skip

    response = editor_client.post(_url("queue_edit", agent, fact.pk), data)

    assert (response.status_code, response["Location"]) == (302, _url("queue", agent))
    fact.refresh_from_db()
    assert (fact.status, fact.value, fact.category.name, fact.key, fact.importance) == (
        "active",
        "The user's cat is Tom",
        "animals",
        "cat-name",
        0.9,
    )
    assert list(fact.versions.values_list("old_value", "new_value", "reason")) == [
        ("", "The user's cat is called Whiskerino", "proposed for review"),
        ("The user's cat is called Whiskerino", "The user's cat is Tom", "edited in review"),
        ("The user's cat is Tom", "The user's cat is Tom", "approved"),
    ]
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.object_id) == ("fact.approve", editor, str(fact.pk))
    assert (event.before["status"], event.before["value"], event.before["category"]) == (
        "pending",
        "The user's cat is called Whiskerino",
        "pets",
    )
    assert (event.after["status"], event.after["value"], event.after["category"]) == (
        "active",
        "The user's cat is Tom",
        "animals",
    )


def test_queue_edit_with_bad_input_is_400_and_changes_nothing(editor_client, agent):
    fact = _pending(agent)
    before = _state(fact)
    data = {"value": "x", "category": "pets", "key": "cat", "importance": "7"}

    response = editor_client.post(_url("queue_edit", agent, fact.pk), data)

    assert response.status_code == 400
    assert _state(fact) == before
    assert AuditEvent.objects.count() == 0


def test_queue_edit_of_a_key_taken_by_an_approved_fact_is_409(editor_client, agent):
    _active(agent, "The user lives in Lyon", key="home", category="places")
    fact = _pending(agent, "The user lives in Paris", key="home", category="places")
    data = {"value": fact.value, "category": "places", "key": "home", "importance": "0.5"}

    response = editor_client.post(_url("queue_edit", agent, fact.pk), data)

    assert response.status_code == 409
    assert "already exists" in response.content.decode()
    assert _state(fact)[0] == "pending"
    assert AuditEvent.objects.count() == 0


def test_queue_edit_of_a_fact_that_is_not_pending_is_409(editor_client, agent):
    fact = _active(agent)

    assert editor_client.get(_url("queue_edit", agent, fact.pk)).status_code == 409


# --- reject ---


def test_reject_sends_anonymous_users_to_log_in(anon_client, agent):
    fact = _pending(agent)
    url = _url("queue_reject", agent, fact.pk)

    response = anon_client.post(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")
    assert _state(fact) is not None


def test_reject_is_404_for_another_team(outsider_client, agent):
    fact = _pending(agent)

    assert outsider_client.post(_url("queue_reject", agent, fact.pk)).status_code == 404
    assert _state(fact) is not None


def test_reject_is_403_for_a_viewer(viewer_client, agent):
    fact = _pending(agent)

    assert viewer_client.post(_url("queue_reject", agent, fact.pk)).status_code == 403
    assert _state(fact) is not None


def test_reject_deletes_the_pending_fact_and_keeps_it_in_the_audit_event(
    editor_client, editor, agent
):
    fact = _pending(agent, key="cat", category="pets")

    response = editor_client.post(_url("queue_reject", agent, fact.pk))

    assert (response.status_code, response["Location"]) == (302, _url("queue", agent))
    assert not Fact.objects.filter(pk=fact.pk).exists()
    assert not FactVersion.objects.filter(fact_id=fact.pk).exists()
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.object_type, event.object_id, event.after) == (
        "fact.reject",
        editor,
        "fact",
        str(fact.pk),
        None,
    )
    assert event.before == {
        "category": "pets",
        "key": "cat",
        "value": "The user's cat is called Whiskerino",
        "importance": 0.5,
        "status": "pending",
        "valid_to": None,
        "superseded_by_id": None,
    }


def test_rejecting_an_approved_fact_is_409_and_keeps_it(editor_client, agent):
    fact = _active(agent)

    assert editor_client.post(_url("queue_reject", agent, fact.pk)).status_code == 409
    assert _state(fact)[0] == "active"
    assert AuditEvent.objects.count() == 0


# --- merge: the choice (nothing chosen), the confirmation, the merge ---


class _Options(HTMLParser):
    """The options of the merge choice's select: (value, label, selected, disabled)."""

    def __init__(self, select_id):
        super().__init__()
        self.select_id = select_id
        self.inside = False
        self.in_option = False
        self.options: list[tuple[str, str, bool, bool]] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "select":
            self.inside = a.get("id") == self.select_id
        elif tag == "option" and self.inside:
            self.options.append((a.get("value"), "", "selected" in a, "disabled" in a))
            self.in_option = True

    def handle_data(self, data):
        if self.inside and self.in_option:
            value, label, selected, disabled = self.options[-1]
            self.options[-1] = (value, label + data, selected, disabled)

    def handle_endtag(self, tag):
        if tag == "select":
            self.inside = False
        self.in_option = False


def _options(response, fact):
    parser = _Options(f"merge-into-{fact.pk}")
    parser.feed(response.content.decode())
    return parser.options


PLACEHOLDER = ("", "choose the fact to merge into…", True, True)
PENDING = "The user lives in Lyon, France, near the Saone river"


def _lyon(agent, user=""):
    """A pending fact and three approved ones of the same owner, most to least like it."""
    fact = _pending(agent, PENDING, category="places", key="home-detail", user=user)
    near = _active(agent, "The user lives in Lyon, France", category="places", key="home",
                   user=user)  # fmt: skip
    mid = _active(agent, "The user lives in Paris", category="travel", key="trip", user=user)
    far = _active(agent, "Black coffee please", category="food", key="coffee", user=user)
    return fact, near, mid, far


def _cosines(fact, *others):
    """Each of `others`' cosine to `fact`, from their stored vectors."""
    vectors = {f.pk: unit(f.embedding) for f in Fact.objects.filter(pk__in=[fact.pk, *others])}
    return {pk: float(vectors[pk] @ vectors[fact.pk]) for pk in others}


def _label(candidate):
    f = candidate.fact
    label = f"#{f.pk} {f.category.name} / {f.key}: {f.value}"
    return label + f" (similarity {floatformat(candidate.score, 2)})"


def _unchanged(*facts):
    """The facts' state, their versions and the audit events: what a refusal leaves as is."""
    return [_state(f) for f in facts], FactVersion.objects.count(), AuditEvent.objects.count()


def test_merge_sends_anonymous_users_to_log_in(anon_client, agent):
    fact, into = _pending(agent), _active(agent)
    url = _url("queue_merge", agent, fact.pk)

    for response in (anon_client.get(url), anon_client.post(url, {"into": into.pk})):
        assert (response.status_code, response["Location"]) == (
            302,
            f"/accounts/login/?next={url}",
        )


def test_merge_is_404_for_another_team(outsider_client, agent):
    fact, into = _pending(agent), _active(agent)
    url = _url("queue_merge", agent, fact.pk)

    assert outsider_client.get(url).status_code == 404
    assert outsider_client.post(url, {"into": into.pk, "confirm": "yes"}).status_code == 404
    assert _state(fact)[0] == "pending"


def test_merge_is_403_for_a_viewer(viewer_client, agent):
    fact, into = _pending(agent), _active(agent)
    before = _unchanged(fact, into)
    url = _url("queue_merge", agent, fact.pk)

    assert viewer_client.get(url).status_code == 403
    assert viewer_client.post(url, {"into": into.pk, "confirm": "yes"}).status_code == 403
    assert _unchanged(fact, into) == before


def test_the_choice_offers_the_owner_s_approved_facts_most_similar_first_none_chosen(
    editor_client, agent, other_agent
):
    fact, near, mid, far = _lyon(agent)
    # Never offered: another user's fact, a pending one, another agent's, the fact itself.
    _active(agent, "The user lives in Lyon, France", category="places", key="home",
            user="telegram:42")  # fmt: skip
    _pending(agent, "The user lives in Lyon, France, by the river", category="misc")
    _active(other_agent, "The user lives in Lyon, France", category="places", key="home")
    cosines = _cosines(fact, near.pk, mid.pk, far.pk)

    response = editor_client.get(_url("queue_merge", agent, fact.pk))

    assert response.status_code == 200
    candidates = response.context["candidates"]
    assert sorted(cosines, key=lambda pk: -cosines[pk]) == [near.pk, mid.pk, far.pk]
    assert [(c.fact.pk, c.leg) for c in candidates] == [
        (near.pk, "vector"),
        (mid.pk, "vector"),
        (far.pk, "vector"),
    ]
    assert [c.score for c in candidates] == pytest.approx(
        [cosines[near.pk], cosines[mid.pk], cosines[far.pk]], abs=1e-5
    )
    # The select starts on the disabled placeholder: no fact is chosen until the editor does.
    assert _options(response, fact) == [
        PLACEHOLDER,
        *[(str(c.fact.pk), _label(c), False, False) for c in candidates],
    ]
    assert f"<h2>Merge #{fact.pk} into an approved fact</h2>" in response.content.decode()


def test_the_choice_in_the_row_with_htmx_is_the_same_with_the_counter(editor_client, agent):
    fact, *_ = _lyon(agent)
    page = editor_client.get(_url("queue_merge", agent, fact.pk))

    response = editor_client.get(_url("queue_merge", agent, fact.pk), headers=HX)

    assert response.status_code == 200
    html = response.content.decode()
    assert html.startswith(f'<tr id="fact-{fact.pk}" class="queue-merge"><td colspan="4">')
    assert f'hx-post="{_url("queue_merge", agent, fact.pk)}" hx-target="#fact-{fact.pk}"' in html
    assert _options(response, fact) == _options(page, fact)
    assert _options(response, fact)[0] == PLACEHOLDER
    assert _counter(1, 3) in html


def test_candidates_without_a_vector_follow_by_shared_words_then_the_rest(editor_client, agent):
    fact, near, mid, far = _lyon(agent)
    bare = _active(agent, "The user lives in Lyon", category="misc", key="city")
    Fact.objects.filter(pk=bare.pk).update(embedding=None, embedding_model="")
    url = _url("queue_merge", agent, fact.pk)

    ranked = [(c.fact.pk, c.leg) for c in editor_client.get(url).context["candidates"]]

    # The vectors rank those that have one; BM25 on the fact's key and value the others.
    assert ranked == [(near.pk, "vector"), (mid.pk, "vector"), (far.pk, "vector"),
                      (bare.pk, "bm25")]  # fmt: skip

    # Without a vector of its own (its embedding failed), BM25 ranks them all; a fact
    # sharing no word with it comes last, unranked.
    Fact.objects.filter(pk=fact.pk).update(embedding=None, embedding_model="")
    response = editor_client.get(url)

    ranked = [(c.fact.pk, c.leg) for c in response.context["candidates"]]
    assert ranked == [(near.pk, "bm25"), (bare.pk, "bm25"), (mid.pk, "bm25"), (far.pk, "")]
    options = _options(response, fact)
    assert options[0] == PLACEHOLDER
    shares = f"#{near.pk} places / home: The user lives in Lyon, France (shares words)"
    assert options[1][1] == shares
    assert options[-1][1] == f"#{far.pk} food / coffee: Black coffee please"


def test_the_search_box_narrows_the_candidates_on_the_server(editor_client, agent):
    fact, near, mid, far = _lyon(agent)
    url = _url("queue_merge", agent, fact.pk)

    def offered(query, **headers):
        response = editor_client.get(url, {"q": query}, headers=headers)
        assert response.status_code == 200
        return [value for value, *_ in _options(response, fact)]

    assert offered("PARIS") == ["", str(mid.pk)]  # key or value, any case
    assert offered("coffee", **HX) == ["", str(far.pk)]
    assert offered("lives") == ["", str(near.pk), str(mid.pk)]
    response = editor_client.get(url, {"q": "zebra"}, headers=HX)
    assert _options(response, fact) == [("", "no approved fact contains “zebra”", True, True)]


def test_merge_without_a_target_is_400_on_the_page_and_changes_nothing(editor_client, agent):
    fact, near, mid, far = _lyon(agent)
    before = _unchanged(fact, near, mid, far)
    url = _url("queue_merge", agent, fact.pk)

    for data in ({}, {"into": ""}, {"into": "x"}, {"confirm": "yes"}):
        response = editor_client.post(url, data)

        assert response.status_code == 400
        html = response.content.decode()
        error = "Choose the fact to merge into. Nothing was changed."
        assert f'<p class="error" role="alert">{error}</p>' in html
        assert _options(response, fact)[0] == PLACEHOLDER  # the choice again, nothing chosen
        assert _unchanged(fact, near, mid, far) == before

    response = editor_client.post(url, {"confirm": "yes"}, headers=HX)

    assert response.status_code == 400
    html = response.content.decode()
    assert html.startswith(f'<tr id="fact-{fact.pk}" class="queue-merge">')
    assert "Choose the fact to merge into. Nothing was changed." in html
    assert _counter(1, 3) in html
    assert _unchanged(fact, near, mid, far) == before


def test_choosing_a_target_leads_to_a_confirmation_naming_both_facts(editor_client, agent):
    fact, near, mid, far = _lyon(agent)
    before = _unchanged(fact, near, mid, far)
    url = _url("queue_merge", agent, fact.pk)

    response = editor_client.post(url, {"into": near.pk})

    assert response.status_code == 200
    assert (response.context["fact"], response.context["into"]) == (fact, near)
    html = response.content.decode()
    assert f"<h2>Merge #{fact.pk} into #{near.pk}?</h2>" in html
    kept = html[html.index('<dd class="merge-kept">') : html.index("</dd>")]
    merged = html[html.index('<dd class="merge-merged">') :]
    merged = merged[: merged.index("</dd>")]
    assert f">#{near.pk}</a>" in kept
    assert '<span class="merge-key">places / home</span>' in kept
    assert '<span class="merge-value">The user lives in Lyon, France</span>' in kept
    assert f">#{fact.pk}</a>" in merged
    assert '<span class="merge-key">places / home-detail</span>' in merged
    assert f'<span class="merge-value">{PENDING}</span>' in merged
    assert f'<input type="hidden" name="into" value="{near.pk}">' in html
    assert '<input type="hidden" name="confirm" value="yes">' in html
    assert f'<button type="submit">Merge #{fact.pk} into #{near.pk}</button>' in html
    # Nothing is written before the confirmation.
    assert _unchanged(fact, near, mid, far) == before


def test_only_the_confirmed_post_merges(editor_client, editor, agent):
    into = _active(agent, "The user lives in Lyon", key="home")
    fact = _pending(agent, "The user lives in Lyon, France", importance=0.8)
    url = _url("queue_merge", agent, fact.pk)
    before = _unchanged(fact, into)

    assert editor_client.post(url, {"into": into.pk, "confirm": ""}).status_code == 200
    assert _unchanged(fact, into) == before

    response = editor_client.post(url, {"into": into.pk, "confirm": "yes"})

    assert (response.status_code, response["Location"]) == (302, _url("queue", agent))
    into.refresh_from_db()
    fact.refresh_from_db()
    assert (into.status, into.value, into.importance, into.valid_to) == (
        "active",
        "The user lives in Lyon",
        0.8,
        None,
    )
    assert (fact.superseded_by_id, fact.valid_to is not None) == (into.pk, True)
    assert list(into.versions.values_list("reason", flat=True)) == [
        "created",
        f"merged from #{fact.pk}: proposed for review",
        f"merged #{fact.pk} into this fact",
    ]
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.object_id) == ("fact.merge", editor, str(fact.pk))
    assert (event.before["fact"]["status"], event.before["fact"]["superseded_by_id"]) == (
        "pending",
        None,
    )
    assert (event.before["into"]["value"], event.before["into"]["importance"]) == (
        "The user lives in Lyon",
        0.5,
    )
    assert event.after["fact"]["superseded_by_id"] == into.pk
    assert event.after["into"]["importance"] == 0.8


@pytest.mark.parametrize("confirm", ["", "yes"])
def test_merge_into_another_user_s_or_agent_s_fact_is_400_and_merges_nothing(
    editor_client, agent, other_agent, confirm
):
    fact = _pending(agent, "The user lives in Lyon, France")
    theirs = _active(agent, "The user lives in Lyon", user="telegram:42")
    other = _active(other_agent, "The user lives in Lyon")
    before = _unchanged(fact, theirs, other)
    url = _url("queue_merge", agent, fact.pk)

    for into, message in (
        (theirs, f"#{theirs.pk} belongs to another user than #{fact.pk}."),
        (other, f"#{other.pk} is not one of this agent's facts."),
    ):
        response = editor_client.post(url, {"into": into.pk, "confirm": confirm})

        assert response.status_code == 400
        assert f"{message} Choose the fact to merge into. Nothing was changed." in unescape(
            response.content.decode()
        )
        assert _unchanged(fact, theirs, other) == before


def test_a_user_s_pending_fact_is_offered_that_user_s_facts_only(editor_client, agent):
    fact, near, mid, far = _lyon(agent, user="telegram:42")
    _active(agent, "The user lives in Lyon, France", category="places", key="home")

    response = editor_client.get(_url("queue_merge", agent, fact.pk))

    assert [c.fact.pk for c in response.context["candidates"]] == [near.pk, mid.pk, far.pk]
    assert "the same user's approved facts" in unescape(response.content.decode())


def test_merge_into_itself_is_400_and_changes_nothing(editor_client, agent):
    fact = _pending(agent)
    before = _unchanged(fact)

    response = editor_client.post(
        _url("queue_merge", agent, fact.pk), {"into": fact.pk, "confirm": "yes"}
    )

    assert response.status_code == 400
    assert "A fact cannot be merged into itself." in response.content.decode()
    assert _unchanged(fact) == before


def test_merge_into_another_pending_fact_is_409(editor_client, agent):
    fact = _pending(agent, "The user lives in Lyon")
    other = _pending(agent, "The user has a cat")
    before = _unchanged(fact, other)

    response = editor_client.post(
        _url("queue_merge", agent, fact.pk), {"into": other.pk, "confirm": "yes"}
    )

    assert response.status_code == 409
    assert f"#{other.pk} is not an approved current fact." in response.content.decode()
    assert _unchanged(fact, other) == before


def test_merge_of_a_fact_that_is_not_pending_is_409(editor_client, agent):
    fact = _active(agent, "The user lives in Lyon")
    into = _active(agent, "The user has a cat")
    url = _url("queue_merge", agent, fact.pk)

    assert editor_client.get(url).status_code == 409
    assert editor_client.post(url, {"into": into.pk, "confirm": "yes"}).status_code == 409
    assert _state(fact)[0] == "active"


# --- the counter follows every htmx action ---


def _counter(pending, approved):
    return (
        f'<span id="queue-counts" hx-swap-oob="true"><strong>{pending}</strong> pending'
        f" · {approved} approved</span>"
    )


EDITED = {"value": "The user's cat is Tom", "category": "pets", "key": "cat", "importance": "0.5"}

# (view, the fact acted on, its POST data given the approved fact, status, counts after)
ACTIONS = [
    ("queue_approve", "pending", lambda _: {}, 200, (1, 2)),
    ("queue_reject", "pending", lambda _: {}, 200, (1, 1)),
    ("queue_edit", "pending", lambda _: EDITED, 200, (1, 2)),
    ("queue_merge", "pending", lambda into: {"into": into.pk}, 200, (2, 1)),  # confirmation
    ("queue_merge", "pending", lambda into: {"into": into.pk, "confirm": "yes"}, 200, (1, 1)),
    ("queue_approve", "approved", lambda _: {}, 409, (2, 1)),
    ("queue_reject", "approved", lambda _: {}, 409, (2, 1)),
    ("queue_edit", "pending", lambda _: {**EDITED, "importance": "7"}, 400, (2, 1)),
    ("queue_merge", "pending", lambda _: {}, 400, (2, 1)),
]


@pytest.mark.parametrize(("view", "which", "data", "status", "counts"), ACTIONS)
def test_every_htmx_action_answers_its_row_and_the_counter_as_it_now_is(
    editor_client, agent, view, which, data, status, counts
):
    pending = _pending(agent, "The user's cat is called Whiskerino", category="pets", key="cat")
    _pending(agent, "The user's sister lives in Lyon", category="family", key="sister")
    approved = _active(agent, "The user lives in Lyon", category="places", key="home")
    fact = pending if which == "pending" else approved

    response = editor_client.post(_url(view, agent, fact.pk), data(approved), headers=HX)

    assert response.status_code == status
    html = response.content.decode()
    assert html.startswith(f'<tr id="fact-{fact.pk}" class="queue-')
    assert html.count("hx-swap-oob") == 1
    assert _counter(*counts) in html
    listed = editor_client.get(_url("queue", agent)).context["counts"]
    assert (listed["pending"], listed["active"]) == counts


def test_a_refusal_with_htmx_is_the_row_saying_why(editor_client, agent):
    fact = _active(agent)

    response = editor_client.post(_url("queue_approve", agent, fact.pk), headers=HX)

    assert response.status_code == 409
    row = (
        f'<tr id="fact-{fact.pk}" class="queue-refused"><td colspan="4">'
        '<span class="error">the fact is not waiting for review</span> Nothing was changed. '
        f'<a href="{_url("queue", agent)}">Reload the queue</a></td></tr>'
    )
    assert response.content.decode().strip() == f"{row}\n{_counter(0, 1)}"


def test_edit_with_htmx_is_a_form_in_the_row(editor_client, agent):
    fact = _pending(agent, key="cat", category="pets")

    response = editor_client.get(_url("queue_edit", agent, fact.pk), headers=HX)

    assert response.status_code == 200
    html = response.content.decode()
    assert html.startswith(f'<tr id="fact-{fact.pk}" class="queue-editing"><td colspan="4">')
    url = _url("queue_edit", agent, fact.pk)
    assert f'hx-post="{url}" hx-target="#fact-{fact.pk}" hx-swap="outerHTML"' in html
    assert response.context["form"].initial["key"] == "cat"
    assert _counter(1, 0) in html


def test_a_nul_in_the_merge_search_is_a_400_naming_it(editor_client, agent):
    fact = _pending(agent)

    response = editor_client.get(_url("queue_merge", agent, fact.pk) + "?q=a%00b", headers=HX)

    assert response.status_code == 400
    assert response.content.decode() == "Bad request: q must not contain NUL characters"
