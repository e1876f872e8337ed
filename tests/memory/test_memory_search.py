"""memory_search (seed 001): documents, entries and facts in one ranked list, sources named."""

import math

import pytest

from apps.entries.services import entry_add
from apps.facts.services import fact_save

pytestmark = pytest.mark.django_db


def test_one_ranked_list_says_where_each_hit_came_from(api, agent):
    entry_add(agent=agent, name="MEMORY.md", content="The user is learning Rust.")
    entry_add(agent=agent, name="projects/rust.md", content="Rust borrow checker notes")
    fact = fact_save(agent=agent, content="The user writes Rust every day", category="skills")
    entry_add(agent=agent, name="groceries.md", content="milk and eggs")

    response = api.post("/memory/search", {"query": "Rust"})

    assert response.status_code == 200
    items = response.json()["items"]
    assert sorted((i["source"], i["name"]) for i in items) == [
        ("document", "MEMORY.md"),
        ("entry", "projects/rust.md"),
        ("fact", f"skills/{fact.fact.key}"),
    ]
    fact_hit = next(i for i in items if i["source"] == "fact")
    assert sorted(fact_hit["legs"]) == ["bm25", "rerank", "vector"]  # the only one with states
    assert items[0]["source"] == "fact"  # found by two legs, so it fuses highest
    assert [i["score"] for i in items] == sorted((i["score"] for i in items), reverse=True)


def test_memory_search_bad_input_and_isolation(api, other_api, agent):
    entry_add(agent=agent, name="MEMORY.md", content="secret rust plans")

    assert api.post("/memory/search", {"query": ""}).status_code == 422
    assert api.post("/memory/search", {}).status_code == 422
    assert other_api.post("/memory/search", {"query": "rust"}).json() == {
        "items": [],
        "degraded": [],
    }


def _bm25(idf, tf, dl, avgdl):
    return idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avgdl))


def test_an_exact_match_has_a_bm25_score_on_the_usual_scale(api, agent):
    # Issue 28: with FTS5's idf (floored at 1e-6) the one entry of an agent scored 1.375e-06.
    # One document, in which the word is: N = n = 1, dl = avgdl (name and content: 5 tokens),
    # so the score is Lucene's idf ln(1 + 0.5/1.5) times tf's part 2.2 / 2.2.
    entry = entry_add(agent=agent, name="trip", content="Flights to Tokyo booked")

    [hit] = api.post("/memory/search", {"query": "Tokyo"}).json()["items"]

    assert (hit["source"], hit["id"]) == ("entry", entry.pk)
    assert hit["legs"] == {"bm25": pytest.approx(math.log(4 / 3), rel=1e-9)}  # 0.2877


def test_bm25_scores_in_memory_search_follow_the_hand_computation(api, agent):
    # N = 3 entries of 5, 4 and 4 tokens (avgdl 13/3); "tokyo" and "ramen" in 1 each (idf
    # ln(1 + 2.5/1.5)), "and" in 2 (ln(1 + 1.5/2.5)): no longer the ~0 that FTS5's idf gave
    # a word in most documents
    trip = entry_add(agent=agent, name="trip", content="Flights to Tokyo booked")
    food = entry_add(agent=agent, name="food", content="Ramen and sushi")
    shop = entry_add(agent=agent, name="list", content="Milk and eggs")

    items = api.post("/memory/search", {"query": "tokyo ramen"}).json()["items"]
    only_and = api.post("/memory/search", {"query": "and"}).json()["items"]

    one_in_three, two_in_three = math.log(8 / 3), math.log(1.6)
    assert [(i["id"], i["legs"]) for i in items] == [
        (food.pk, {"bm25": pytest.approx(_bm25(one_in_three, 1, 4, 13 / 3), rel=1e-9)}),
        (trip.pk, {"bm25": pytest.approx(_bm25(one_in_three, 1, 5, 13 / 3), rel=1e-9)}),
    ]  # the shorter document first
    assert [round(i["legs"]["bm25"], 4) for i in items] == [1.0127, 0.9228]
    assert sorted((i["id"], i["legs"]) for i in only_and) == [
        (food.pk, {"bm25": pytest.approx(_bm25(two_in_three, 1, 4, 13 / 3), rel=1e-9)}),
        (shop.pk, {"bm25": pytest.approx(_bm25(two_in_three, 1, 4, 13 / 3), rel=1e-9)}),
    ]
    assert round(only_and[0]["legs"]["bm25"], 4) == 0.4853
