"""The facts pages: the list by category with salience, one fact with its diffed versions
and supersede chain; editors edit and delete."""

import pytest
from django.urls import reverse

from apps.agents.models import AuditEvent
from apps.facts.models import Fact
from apps.facts.services import fact_merge, fact_save, fact_supersede, fact_update
from apps.review.curation import word_diff

pytestmark = pytest.mark.django_db


def _fact(agent, value="The user's cat is called Whiskerino", **extra):
    return fact_save(agent=agent, content=value, **extra).fact


def _url(name, agent, *args):
    return reverse(f"review:{name}", args=[agent.slug, *args])


def _state(fact):
    fact = Fact.objects.filter(pk=fact.pk).first()
    if fact is None:
        return None
    return (fact.value, fact.key, fact.category.name, fact.importance, fact.versions.count())


# --- the list ---


def test_facts_send_anonymous_users_to_log_in(anon_client, agent):
    url = _url("facts", agent)

    response = anon_client.get(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_facts_are_404_for_another_team(outsider_client, agent):
    assert outsider_client.get(_url("facts", agent)).status_code == 404


def test_facts_are_grouped_by_category_with_salience_and_status(viewer_client, agent, other_agent):
    cat = _fact(agent, "The user's cat is called Whiskerino", category="pets", importance=0.9)
    dog = _fact(agent, "The user's dog is called Rex", category="pets", importance=0.2)
    home = _fact(agent, "The user lives in Lyon", category="places")
    pending = fact_save(
        agent=agent, content="The user likes tea", category="food", pending=True
    ).fact
    old = _fact(agent, "The user drinks coffee", category="food")
    fact_supersede(agent=agent, fact=old, value="The user drinks tea", changed_by="agent")
    _fact(other_agent, "The other agent's secret")

    response = viewer_client.get(_url("facts", agent))

    assert response.status_code == 200
    groups = [(g.category, [f.pk for f in g.facts]) for g in response.context["groups"]]
    successor = Fact.objects.get(value="The user drinks tea")
    assert groups[1:] == [("pets", [cat.pk, dog.pk]), ("places", [home.pk])]
    assert groups[0][0] == "food"
    assert sorted(groups[0][1]) == sorted([pending.pk, successor.pk])
    html = response.content.decode()
    cat.refresh_from_db()
    assert f'<meter min="0" max="1" value="{cat.salience:f}">' in html
    assert f'<span class="num">{cat.salience:.2f}</span>' in html
    assert '<span class="badge status-pending">pending</span>' in html
    assert _url("fact", agent, cat.pk) in html
    assert "The user drinks coffee" not in html  # superseded: not current
    assert "secret" not in html


# --- one fact ---


def test_fact_detail_sends_anonymous_users_to_log_in(anon_client, agent):
    fact = _fact(agent)
    url = _url("fact", agent, fact.pk)

    response = anon_client.get(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_fact_detail_is_404_for_another_team_and_for_another_agent_s_fact(
    outsider_client, viewer_client, agent, other_agent
):
    fact = _fact(agent)
    theirs = _fact(other_agent)

    assert outsider_client.get(_url("fact", agent, fact.pk)).status_code == 404
    assert viewer_client.get(_url("fact", agent, theirs.pk)).status_code == 404


def test_fact_detail_shows_versions_diffed_and_the_supersede_chain(viewer_client, agent):
    first = _fact(agent, "The user lives in Lyon", key="home")
    fact_update(agent=agent, fact=first, changed_by="agent", value="The user lives in <Paris>")
    second = fact_supersede(
        agent=agent, fact=first, value="The user lives in Rome", changed_by="agent"
    )
    third = fact_supersede(
        agent=agent, fact=second, value="The user lives in Oslo", changed_by="agent"
    )

    response = viewer_client.get(_url("fact", agent, second.pk))

    assert response.status_code == 200
    chain = response.context["chain"]
    assert ([f.pk for f in chain.predecessors], [f.pk for f in chain.successors]) == (
        [first.pk],
        [third.pk],
    )
    html = response.content.decode()
    assert html.index(f"#{first.pk}</a>") < html.index(f"<strong>#{second.pk}</strong>")
    assert html.index(f"<strong>#{second.pk}</strong>") < html.index(f"#{third.pk}</a>")
    # second's versions: "supersedes #first" (Paris -> Rome), then "superseded by #third".
    assert "The user lives in <del>&lt;Paris&gt;</del><ins>Rome</ins>" in html
    assert "The user lives in <del>Rome</del><ins>Oslo</ins>" in html

    first_page = viewer_client.get(_url("fact", agent, first.pk)).content.decode()
    assert "The user lives in <del>Lyon</del><ins>&lt;Paris&gt;</ins>" in first_page


def test_a_merged_fact_lists_every_fact_it_absorbed(viewer_client, agent):
    keep = _fact(agent, "The user lives in Lyon")
    a = _fact(agent, "The user has a cat")
    b = _fact(agent, "The user has a dog")
    fact_merge(agent=agent, keep=keep, other=a, changed_by="x")
    fact_merge(agent=agent, keep=keep, other=b, changed_by="x")

    response = viewer_client.get(_url("fact", agent, keep.pk))

    assert [f.pk for f in response.context["chain"].predecessors] == [a.pk, b.pk]


def test_word_diff_escapes_and_marks_changes():
    assert str(word_diff("a <b> c", "a <b> d & e")) == (
        "a &lt;b&gt; <del>c</del><ins>d &amp; e</ins>"
    )
    assert str(word_diff("", "new")) == "<ins>new</ins>"


def test_fact_detail_shows_edit_and_delete_to_editors_only(viewer_client, editor_client, agent):
    fact = _fact(agent)
    edit, delete = _url("fact_edit", agent, fact.pk), _url("fact_delete", agent, fact.pk)

    as_viewer = viewer_client.get(_url("fact", agent, fact.pk)).content.decode()
    as_editor = editor_client.get(_url("fact", agent, fact.pk)).content.decode()

    assert (edit in as_viewer, delete in as_viewer) == (False, False)
    assert (edit in as_editor, delete in as_editor) == (True, True)


# --- edit ---


def test_fact_edit_sends_anonymous_users_to_log_in(anon_client, agent):
    fact = _fact(agent)
    url = _url("fact_edit", agent, fact.pk)

    response = anon_client.get(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")


def test_fact_edit_is_404_for_another_team(outsider_client, agent):
    fact = _fact(agent)

    assert outsider_client.get(_url("fact_edit", agent, fact.pk)).status_code == 404
    assert outsider_client.post(_url("fact_edit", agent, fact.pk), {}).status_code == 404


def test_fact_edit_is_403_for_a_viewer_and_changes_nothing(viewer_client, agent):
    fact = _fact(agent)
    before = _state(fact)
    data = {"value": "Changed", "category": "x", "key": "y", "importance": "0.1"}

    assert viewer_client.get(_url("fact_edit", agent, fact.pk)).status_code == 403
    assert viewer_client.post(_url("fact_edit", agent, fact.pk), data).status_code == 403
    assert _state(fact) == before
    assert AuditEvent.objects.count() == 0


def test_fact_edit_shows_the_form(editor_client, agent):
    fact = _fact(agent, key="cat", category="pets")

    response = editor_client.get(_url("fact_edit", agent, fact.pk))

    assert response.status_code == 200
    assert response.context["form"].initial["key"] == "cat"
    assert "csrfmiddlewaretoken" in response.content.decode()


def test_fact_edit_updates_with_a_version_and_an_audit_event(editor_client, editor, agent):
    fact = _fact(agent, key="cat", category="pets")
    data = {"value": "The user's cat is Tom", "category": "animals", "key": "cat-name",
            "importance": "0.9"}  # fmt: skip

    response = editor_client.post(_url("fact_edit", agent, fact.pk), data)

    assert (response.status_code, response["Location"]) == (302, _url("fact", agent, fact.pk))
    assert _state(fact) == ("The user's cat is Tom", "cat-name", "animals", 0.9, 2)
    version = fact.versions.order_by("-number").first()
    assert (version.old_value, version.new_value, version.changed_by, version.reason) == (
        "The user's cat is called Whiskerino",
        "The user's cat is Tom",
        "review:eddie",
        "edited on the review page",
    )
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.source, event.object_id) == (
        "fact.update",
        editor,
        "review",
        str(fact.pk),
    )
    assert (event.before["value"], event.before["category"], event.before["importance"]) == (
        "The user's cat is called Whiskerino",
        "pets",
        0.5,
    )
    assert (event.after["value"], event.after["category"], event.after["key"]) == (
        "The user's cat is Tom",
        "animals",
        "cat-name",
    )


def test_fact_edit_with_an_importance_out_of_range_is_400(editor_client, agent):
    fact = _fact(agent)
    before = _state(fact)
    data = {"value": "v", "category": "c", "key": "k", "importance": "1.5"}

    response = editor_client.post(_url("fact_edit", agent, fact.pk), data)

    assert response.status_code == 400
    assert _state(fact) == before
    assert AuditEvent.objects.count() == 0


def test_fact_edit_to_a_taken_key_is_409(editor_client, agent):
    _fact(agent, "The user lives in Lyon", key="home", category="places")
    fact = _fact(agent, "The user works in Paris", key="work", category="places")
    before = _state(fact)
    data = {"value": fact.value, "category": "places", "key": "home", "importance": "0.5"}

    response = editor_client.post(_url("fact_edit", agent, fact.pk), data)

    assert response.status_code == 409
    assert "already exists" in response.content.decode()
    assert _state(fact) == before
    assert AuditEvent.objects.count() == 0


def test_editing_a_superseded_fact_is_409(editor_client, agent):
    fact = _fact(agent)
    fact_supersede(agent=agent, fact=fact, value="New", changed_by="agent")

    assert editor_client.get(_url("fact_edit", agent, fact.pk)).status_code == 409


# --- delete ---


def test_fact_delete_sends_anonymous_users_to_log_in(anon_client, agent):
    fact = _fact(agent)
    url = _url("fact_delete", agent, fact.pk)

    response = anon_client.post(url)

    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={url}")
    assert _state(fact) is not None


def test_fact_delete_is_404_for_another_team(outsider_client, agent):
    fact = _fact(agent)

    assert outsider_client.post(_url("fact_delete", agent, fact.pk)).status_code == 404
    assert _state(fact) is not None


def test_fact_delete_is_403_for_a_viewer(viewer_client, agent):
    fact = _fact(agent)

    assert viewer_client.post(_url("fact_delete", agent, fact.pk)).status_code == 403
    assert _state(fact) is not None


def test_fact_delete_of_another_agent_s_fact_is_404(editor_client, agent, other_agent):
    theirs = _fact(other_agent)

    assert editor_client.post(_url("fact_delete", agent, theirs.pk)).status_code == 404
    assert _state(theirs) is not None


def test_fact_delete_removes_it_and_records_the_before_state(editor_client, editor, agent):
    fact = _fact(agent, key="cat", category="pets")

    response = editor_client.post(_url("fact_delete", agent, fact.pk))

    assert (response.status_code, response["Location"]) == (302, _url("facts", agent))
    assert not Fact.objects.filter(pk=fact.pk).exists()
    [event] = AuditEvent.objects.all()
    assert (event.action, event.user, event.object_id, event.after) == (
        "fact.delete",
        editor,
        str(fact.pk),
        None,
    )
    assert event.before == {
        "category": "pets",
        "key": "cat",
        "value": "The user's cat is called Whiskerino",
        "importance": 0.5,
        "status": "active",
        "valid_to": None,
        "superseded_by_id": None,
    }
