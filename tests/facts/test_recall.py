"""memory_recall (seed 001): 3-tier recall, reinforcement, salience; Whiskerino end to end."""

import math
from datetime import UTC, datetime, timedelta

import pytest

from apps.facts.models import Fact
from apps.facts.salience_score import salience
from tests.memory.helpers import MINILM, use_embedder

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_whiskerino_end_to_end_across_a_reset(api, agent, settings):
    use_embedder(settings, MINILM)
    # 1. session 1: the user says it, the agent saves it
    s1 = api.post("/sessions", {"key": "session-1"}).json()
    api.post(
        f"/sessions/{s1['id']}/messages",
        {"messages": [{"role": "user", "content": "My cat's name is Whiskerino"}]},
    )
    api.post("/memory/save", {"content": "My cat's name is Whiskerino", "session_id": s1["id"]})
    for distractor in [
        "The user prefers green tea",
        "The quarterly budget review is on Monday",
        "My dog's name is Rex",
    ]:
        api.post("/memory/save", {"content": distractor})
    # 2. the chat is reset
    assert api.post(f"/sessions/{s1['id']}/reset").status_code == 200
    # 3. session 2 asks
    api.post("/sessions", {"key": "session-2"})

    response = api.post("/memory/recall", {"query": "What is my cat's name?"})

    # 4. the fact comes first
    assert response.status_code == 200
    items = response.json()["items"]
    assert items[0]["fact"]["value"] == "My cat's name is Whiskerino"
    assert [i["fact"]["value"] for i in items] == [
        "My cat's name is Whiskerino",
        "My dog's name is Rex",
        "The user prefers green tea",
        "The quarterly budget review is on Monday",
    ]
    assert round(items[0]["similarity"], 3) == 0.754


@pytest.mark.slow
def test_recall_searches_matching_categories_then_falls_back_flat(api, agent, settings):
    use_embedder(settings, MINILM)
    api.post("/memory/save", {"content": "My cat's name is Whiskerino", "category": "pets"})
    api.post("/memory/save", {"content": "The user prefers green tea", "category": "food"})

    body = api.post("/memory/recall", {"query": "What is my cat's name?", "k": 2}).json()

    assert body["categories"] == ["pets"]
    assert body["fell_back"] is True  # 1 scoped hit < min(k, recall_scoped_min) = 2
    assert [(i["fact"]["value"], i["tier"]) for i in body["items"]] == [
        ("My cat's name is Whiskerino", "scoped"),
        ("The user prefers green tea", "flat"),
    ]


def test_recall_with_enough_scoped_hits_does_not_fall_back(api, agent):
    agent.settings = {"recall_scoped_min": 1, "category_match_threshold": 0.0}
    agent.save()
    api.post("/memory/save", {"content": "tea time", "category": "tea"})

    body = api.post("/memory/recall", {"query": "tea", "k": 1}).json()

    assert (body["fell_back"], body["categories"]) == (False, ["tea"])
    assert [i["tier"] for i in body["items"]] == ["scoped"]


def test_recall_with_a_category_only_searches_it(api, agent):
    api.post("/memory/save", {"content": "green tea", "category": "food"})
    api.post("/memory/save", {"content": "green car", "category": "things"})

    body = api.post("/memory/recall", {"query": "green", "category": "things"}).json()

    assert [(i["fact"]["value"], i["tier"]) for i in body["items"]] == [("green car", "category")]


def test_recall_raises_access_count_and_last_accessed_at(api, agent):
    saved = api.post("/memory/save", {"content": "green tea", "category": "food"}).json()
    before = datetime.now(UTC)

    api.post("/memory/recall", {"query": "green tea"})
    body = api.post("/memory/recall", {"query": "green tea"}).json()

    fact = Fact.objects.get(pk=saved["fact"]["id"])
    assert fact.access_count == 2
    assert fact.last_accessed_at >= before
    assert body["items"][0]["fact"]["access_count"] == 2


def test_recall_bad_input(api, agent):
    assert api.post("/memory/recall", {"query": ""}).status_code == 422
    assert api.post("/memory/recall", {"query": "x", "k": 0}).status_code == 422
    unknown = api.post("/memory/recall", {"query": "x", "category": "nope"})
    assert (unknown.status_code, unknown.json()["detail"]) == (404, "no category 'nope'")


def test_recall_never_sees_another_agents_facts(api, other_api, agent):
    api.post("/memory/save", {"content": "secret plan", "category": "plans"})

    body = other_api.post("/memory/recall", {"query": "secret plan"}).json()

    assert body == {"items": [], "categories": [], "fell_back": True, "degraded": []}
    assert other_api.post("/memory/recall", {"query": "x", "category": "plans"}).status_code == 404
    assert Fact.objects.get().access_count == 0


def test_salience_formula():
    now = datetime(2026, 1, 10, tzinfo=UTC)
    kwargs = {"decay_per_day": 0.95, "access_boost": 0.2, "now": now}

    fresh = salience(importance=0.5, access_count=0, last_used_at=now, **kwargs)
    ten_days = salience(
        importance=0.5, access_count=0, last_used_at=now - timedelta(days=10), **kwargs
    )
    used = salience(importance=0.5, access_count=19, last_used_at=now, **kwargs)
    capped = salience(importance=0.9, access_count=1000, last_used_at=now, **kwargs)

    assert fresh == 0.5
    assert ten_days == pytest.approx(0.5 * 0.95**10, abs=1e-12)
    assert used == pytest.approx(0.5 * (1 + 0.2 * math.log(20)), abs=1e-12)
    assert capped == 1.0
