"""The review queue at the API (issue 11): with the agent's fact_review on, facts saved with
`review: true` and facts the lifecycle proposes wait as pending; a pending fact is not
recalled, searched or put in get_context until an editor approves it."""

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from apps.agents.models import MemberRole
from apps.agents.services import membership_set
from apps.entries.models import Entry
from apps.facts.models import Fact, FactStatus, FactVersion
from apps.lifecycle.models import Run
from tests.lifecycle.helpers import add, use_llm
from tests.support.llm_server import Completion

pytestmark = pytest.mark.django_db

CAT = "The user's cat is called Whiskerino"


@pytest.fixture
def editor_client(agent):
    user = get_user_model().objects.create_user(username="eddie", password="pw")
    membership_set(team=agent.team, user=user, role=MemberRole.EDITOR)
    client = Client()
    client.force_login(user)
    return client


def _review_on(agent):
    agent.settings = {"fact_review": True}
    agent.save()


def _recalled(api, query=CAT):
    items = api.post("/memory/recall", {"query": query}).json()["items"]
    return [item["fact"]["id"] for item in items]


def _searched(api, query="Whiskerino"):
    return [
        (h["source"], h["id"]) for h in api.post("/memory/search", {"query": query}).json()["items"]
    ]


def _context_facts(api, session):
    body = api.post("/context", {"session_id": str(session.id), "lifecycle": "off"}).json()
    return [f["id"] for f in body["system"]["facts"]]


def test_fact_review_is_off_by_default(agent):
    assert agent.config.fact_review is False


def test_with_fact_review_on_a_save_with_review_true_waits_unseen_until_approved(
    api, agent, session, editor_client
):
    _review_on(agent)

    response = api.post("/memory/save", {"content": CAT, "importance": 1.0, "review": True})

    assert response.status_code == 200
    body = response.json()
    fact = Fact.objects.get(agent=agent)
    assert (body["action"], body["fact"]["id"], body["fact"]["status"], body["log"]) == (
        "created",
        fact.pk,
        "pending",
        "",
    )
    assert fact.status == FactStatus.PENDING
    assert not Entry.objects.filter(agent=agent, name__startswith="memory/").exists()
    assert _recalled(api) == []
    assert _searched(api) == []
    assert _context_facts(api, session) == []

    approved = editor_client.post(reverse("review:queue_approve", args=[agent.slug, fact.pk]))

    assert approved.status_code == 302
    fact.refresh_from_db()
    assert fact.status == FactStatus.ACTIVE
    assert _recalled(api) == [fact.pk]
    assert ("fact", fact.pk) in _searched(api)
    assert _context_facts(api, session) == [fact.pk]


def test_with_fact_review_off_review_true_is_active_at_once(api, agent, session):
    response = api.post("/memory/save", {"content": CAT, "importance": 1.0, "review": True})

    body = response.json()
    assert (body["fact"]["status"], body["log"].startswith("memory/")) == ("active", True)
    assert _recalled(api) == [body["fact"]["id"]]
    assert _context_facts(api, session) == [body["fact"]["id"]]


def test_with_fact_review_on_a_save_without_review_is_active(api, agent):
    _review_on(agent)

    body = api.post("/memory/save", {"content": CAT}).json()

    assert body["fact"]["status"] == "active"
    assert Fact.objects.get().status == FactStatus.ACTIVE


def test_post_facts_with_review_true_creates_a_pending_fact(api, agent):
    _review_on(agent)

    response = api.post("/facts", {"value": CAT, "key": "cat", "review": True})

    assert response.status_code == 201
    assert (response.json()["fact"]["status"], response.json()["fact"]["key"]) == ("pending", "cat")
    assert list(Fact.objects.values_list("status", flat=True)) == ["pending"]
    assert api.get(f"/facts/{response.json()['fact']['id']}").json()["status"] == "pending"


def test_post_facts_with_review_true_and_fact_review_off_is_active(api, agent):
    response = api.post("/facts", {"value": CAT, "review": True})

    assert (response.status_code, response.json()["fact"]["status"]) == (201, "active")


def test_a_pending_save_of_an_approved_fact_s_text_reinforces_it_without_review(api, agent):
    _review_on(agent)
    first = api.post("/facts", {"value": CAT, "key": "cat", "importance": 0.5}).json()["fact"]

    again = api.post(
        "/memory/save",
        {"content": "the user's CAT is called whiskerino!", "importance": 1.0, "review": True},
    ).json()

    assert (again["action"], again["fact"]["id"], again["fact"]["status"]) == (
        "reinforced",
        first["id"],
        "active",
    )
    fact = Fact.objects.get()
    # The value and importance of an approved fact are not changed by a proposal.
    assert (fact.value, fact.importance, fact.access_count) == (CAT, 0.5, 1)


def test_a_pending_save_under_an_approved_key_is_a_new_pending_fact_not_an_update(api, agent):
    _review_on(agent)
    first = api.post("/facts", {"value": CAT, "key": "cat", "category": "pets"}).json()["fact"]

    response = api.post(
        "/facts",
        {"value": "The user's cat is called Tom", "key": "cat", "category": "pets", "review": True},
    )

    body = response.json()
    assert (response.status_code, body["action"], body["fact"]["status"], body["fact"]["key"]) == (
        201,
        "created",
        "pending",
        "cat-2",
    )
    kept = Fact.objects.get(pk=first["id"])
    assert (kept.value, kept.status, kept.versions.count()) == (CAT, "active", 1)


def test_a_pending_paraphrase_of_an_approved_fact_is_a_new_pending_fact(api, agent):
    agent.settings = {"fact_review": True, "fact_dedup_threshold": 0.0}  # everything "same"
    agent.save()
    first = api.post("/facts", {"value": CAT, "category": "pets"}).json()["fact"]

    body = api.post(
        "/facts", {"value": "Whiskerino is the cat", "category": "pets", "review": True}
    ).json()

    assert (body["action"], body["fact"]["status"]) == ("created", "pending")
    assert Fact.objects.get(pk=first["id"]).value == CAT


def test_with_fact_review_on_a_flush_proposes_pending_facts_linked_to_their_run(
    api, agent, session, settings, llm_server
):
    _review_on(agent)
    use_llm(settings, llm_server)
    add(session, "Hi.", "Hello.", "My cat is called Whiskerino.", "Nice.", "Bye.", "Bye.",
        "One.", "Two.", "Three.", "Four.", role=None)  # fmt: skip
    llm_server.script(
        Completion(json.dumps({"facts": [{"content": CAT, "category": "pets", "importance": 1.0}]}))
    )

    [run] = api.post(f"/sessions/{session.id}/flush").json()["runs"]

    fact = Fact.objects.get(agent=agent)
    assert (run["status"], fact.value, fact.status, fact.category.name) == (
        "ok",
        CAT,
        FactStatus.PENDING,
        "pets",
    )
    assert list(Run.objects.get(pk=run["id"]).facts.values_list("pk", flat=True)) == [fact.pk]
    assert list(FactVersion.objects.filter(fact=fact).values_list("reason", flat=True)) == [
        "proposed for review"
    ]
    # Not in MEMORY.md (get_context reads it) while it waits.
    assert run["details"]["memory"] == "unchanged"
    assert not Entry.objects.filter(agent=agent, name="MEMORY.md").exists()
    assert _recalled(api) == []
    assert _context_facts(api, session) == []


def test_with_fact_review_off_a_flush_stores_active_facts(
    api, agent, session, settings, llm_server
):
    use_llm(settings, llm_server)
    add(session, "Hi.", "Hello.", "My cat is called Whiskerino.", "Nice.", "Bye.", "Bye.",
        "One.", "Two.", "Three.", "Four.", role=None)  # fmt: skip
    llm_server.script(Completion(json.dumps({"facts": [CAT]})))

    api.post(f"/sessions/{session.id}/flush")

    assert list(Fact.objects.values_list("value", "status")) == [(CAT, "active")]


def test_with_fact_review_on_the_no_llm_fallback_also_proposes_pending_facts(api, agent, session):
    _review_on(agent)
    add(session, "Hi.", "Hello.", "My cat is called Whiskerino.", "Nice.", "Bye.", "Bye.",
        "One.", "Two.", "Three.", "Four.", role=None)  # fmt: skip

    [run] = api.post(f"/sessions/{session.id}/flush").json()["runs"]

    assert run["status"] == "fallback"
    assert list(Fact.objects.values_list("value", "status")) == [
        ("My cat is called Whiskerino.", "pending")
    ]


def test_a_pending_fact_superseded_through_the_api_has_a_pending_successor(api, agent):
    _review_on(agent)
    fact = api.post("/facts", {"value": CAT, "review": True}).json()["fact"]

    successor = api.post(f"/facts/{fact['id']}/supersede", {"value": "The cat is Tom"}).json()

    assert successor["status"] == "pending"
