"""The review queue page and its actions: approve, edit then approve, reject, merge; as
anonymous, another team, a viewer and an editor."""

import pytest
from django.urls import reverse

from apps.agents.models import AuditEvent
from apps.facts.models import Fact, FactStatus, FactVersion
from apps.facts.services import fact_save

pytestmark = pytest.mark.django_db


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
    assert "<strong>2</strong> pending" in html
    # A viewer reads: no action buttons.
    assert _url("queue_approve", agent, first.pk) not in html


def test_queue_shows_the_actions_to_an_editor(editor_client, agent):
    fact = _pending(agent)
    target = _active(agent)

    response = editor_client.get(_url("queue", agent))

    html = response.content.decode()
    for name in ("queue_approve", "queue_edit", "queue_reject", "queue_merge"):
        assert _url(name, agent, fact.pk) in html
    assert f'<option value="{target.pk}">' in html
    assert html.count("csrfmiddlewaretoken") == 4  # approve, reject, merge; and log out


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
    assert response.content.decode().strip() == (
        f'<tr id="fact-{fact.pk}" class="queue-done"><td colspan="4">'
        f"Fact #{fact.pk} approved.</td></tr>"
    )


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


# --- merge ---


def test_merge_sends_anonymous_users_to_log_in(anon_client, agent):
    fact, into = _pending(agent), _active(agent)
    url = _url("queue_merge", agent, fact.pk)

    response = anon_client.post(url, {"into": into.pk})

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_merge_is_404_for_another_team(outsider_client, agent):
    fact, into = _pending(agent), _active(agent)

    assert (
        outsider_client.post(_url("queue_merge", agent, fact.pk), {"into": into.pk}).status_code
        == 404
    )
    assert _state(fact)[0] == "pending"


def test_merge_is_403_for_a_viewer(viewer_client, agent):
    fact, into = _pending(agent), _active(agent)
    before = (_state(fact), _state(into))

    assert (
        viewer_client.post(_url("queue_merge", agent, fact.pk), {"into": into.pk}).status_code
        == 403
    )
    assert (_state(fact), _state(into)) == before


def test_merge_copies_the_pending_fact_s_versions_onto_the_approved_one(
    editor_client, editor, agent
):
    into = _active(agent, "The user lives in Lyon", key="home")
    fact = _pending(agent, "The user lives in Lyon, France", importance=0.8)

    response = editor_client.post(_url("queue_merge", agent, fact.pk), {"into": into.pk})

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


def test_merge_into_itself_is_400_and_changes_nothing(editor_client, agent):
    fact = _pending(agent)
    before = _state(fact)

    response = editor_client.post(_url("queue_merge", agent, fact.pk), {"into": fact.pk})

    assert response.status_code == 400
    assert _state(fact) == before
    assert AuditEvent.objects.count() == 0


def test_merge_into_another_agent_s_fact_is_400_and_changes_nothing(
    editor_client, agent, other_agent
):
    fact = _pending(agent)
    theirs = _active(other_agent)
    before = (_state(fact), _state(theirs))

    response = editor_client.post(_url("queue_merge", agent, fact.pk), {"into": theirs.pk})

    assert response.status_code == 400
    assert (_state(fact), _state(theirs)) == before
    assert AuditEvent.objects.count() == 0


def test_merge_into_another_pending_fact_is_409(editor_client, agent):
    fact = _pending(agent, "The user lives in Lyon")
    other = _pending(agent, "The user has a cat")
    before = (_state(fact), _state(other))

    response = editor_client.post(_url("queue_merge", agent, fact.pk), {"into": other.pk})

    assert response.status_code == 409
    assert (_state(fact), _state(other)) == before


def test_merge_of_an_approved_fact_is_409(editor_client, agent):
    fact = _active(agent, "The user lives in Lyon")
    into = _active(agent, "The user has a cat")

    assert (
        editor_client.post(_url("queue_merge", agent, fact.pk), {"into": into.pk}).status_code
        == 409
    )
    assert _state(fact)[0] == "active"


def test_merge_without_a_target_is_400(editor_client, agent):
    fact = _pending(agent)

    assert editor_client.post(_url("queue_merge", agent, fact.pk), {"into": "x"}).status_code == 400
    assert _state(fact)[0] == "pending"
