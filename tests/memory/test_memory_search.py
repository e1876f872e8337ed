"""memory_search (seed 001): documents, entries and facts in one ranked list, sources named."""

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
