"""get_context with a query includes the facts relevant to it, beside the salient ones."""

import pytest

from apps.agents.services import agent_update_settings
from apps.facts.models import Fact
from apps.facts.services import fact_save
from tests.factories import SessionFactory
from tests.memory.helpers import BROKEN, MINILM, use_embedder

pytestmark = pytest.mark.django_db

CAT = "The user's cat is called Whiskerino"


def context(api, session, **extra):
    response = api.post("/context", {"session_id": str(session.id), **extra})
    assert response.status_code == 200
    return response.json()


def facts_of(body):
    return [(f["id"], f["value"]) for f in body["system"]["facts"]]


def test_a_fact_saved_a_moment_earlier_is_in_the_context_for_its_subject(api, agent, session):
    # given a fact saved through the API just now, at salience 0.5 (under the 0.8 at which
    # facts are salient)
    saved = api.post("/memory/save", {"content": CAT}).json()["fact"]
    assert Fact.objects.get(pk=saved["id"]).salience == 0.5

    # when the agent asks about its subject
    body = context(api, session, query="cat")

    # then the fact is in the system part, counted in the fact tokens
    assert facts_of(body) == [(saved["id"], CAT)]
    assert body["tokens"]["facts"] > 0
    assert body["warnings"] == []


def test_without_a_query_only_salient_facts_are_included(api, agent, session):
    api.post("/memory/save", {"content": CAT})

    assert facts_of(context(api, session)) == []


def test_a_semantic_match_counts_above_the_threshold_and_not_below(
    api, agent, session, settings, django_capture_on_commit_callbacks
):
    # given the real MiniLM embedder and the fact's vector stored
    use_embedder(settings, MINILM)
    with django_capture_on_commit_callbacks(execute=True):
        fact = fact_save(agent=agent, content=CAT, category="pets").fact
    # a question sharing no word with the fact (cosine 0.49 with MiniLM)
    question = "What is the name of my kitty?"

    # then it is found at the default threshold (0.4) ...
    assert facts_of(context(api, session, query=question)) == [(fact.pk, CAT)]
    # ... and not once the agent raises the threshold above its similarity
    agent_update_settings(agent=agent, changes={"context_fact_relevance_threshold": 0.6})
    assert facts_of(context(api, session, query=question)) == []
    # while a keyword match still counts whatever the threshold
    assert facts_of(context(api, session, query="Whiskerino")) == [(fact.pk, CAT)]


def test_a_fact_both_salient_and_relevant_is_given_once_salient_first(api, agent, session):
    salient = fact_save(agent=agent, content="The cat is allergic to fish", category="pets",
                        importance=0.9).fact  # fmt: skip
    relevant = fact_save(agent=agent, content=CAT, category="pets").fact

    body = context(api, session, query="cat")

    assert facts_of(body) == [(salient.pk, "The cat is allergic to fish"), (relevant.pk, CAT)]


def test_the_limit_and_the_budget_bound_relevant_facts(api, agent, session):
    facts = [
        fact_save(agent=agent, content=f"The cat number {n} sleeps a lot", category="pets",
                  key=f"cat-{n}").fact
        for n in range(4)
    ]  # fmt: skip
    agent_update_settings(agent=agent, changes={"context_relevant_fact_limit": 2})

    body = context(api, session, query="cat")
    assert len(facts_of(body)) == 2
    assert {i for i, _ in facts_of(body)} <= {f.pk for f in facts}

    # a budget with room for nothing drops them, and says so
    body = context(api, session, query="cat", max_tokens=1)
    assert facts_of(body) == []
    assert sorted(d["name"] for d in body["dropped"] if d["kind"] == "fact") == sorted(
        f"fact:{i}" for i, _ in facts_of(context(api, session, query="cat"))
    )


def test_pending_and_other_agents_facts_never_appear(api, agent, other_agent, session):
    agent_update_settings(agent=agent, changes={"fact_review": True})
    api.post("/memory/save", {"content": CAT, "review": True})
    fact_save(agent=other_agent, content="Mallory's cat is called Shadow", category="pets")
    SessionFactory(agent=other_agent, key="theirs")

    assert facts_of(context(api, session, query="cat")) == []


def test_with_the_embedder_down_keyword_matches_still_count(api, agent, session, settings):
    fact = fact_save(agent=agent, content=CAT, category="pets").fact
    use_embedder(settings, BROKEN)

    body = context(api, session, query="cat")

    assert facts_of(body) == [(fact.pk, CAT)]
    assert len(body["warnings"]) == 1
    assert body["warnings"][0].startswith("relevance leg skipped: ")
