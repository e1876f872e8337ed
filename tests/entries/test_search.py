"""Entry search (seed 003): BM25 over name + content; aliases resolve but add no tokens."""

import pytest

from apps.entries.services import entry_add, entry_alias, entry_rename, entry_write

pytestmark = pytest.mark.django_db


def search(api, q, **params):
    response = api.get("/entries/search", {"q": q, **params})
    assert response.status_code == 200
    return [(h["entry"]["name"], h["score"]) for h in response.json()["items"]]


def test_search_ranks_by_bm25_over_name_and_content_with_scores(api, agent):
    entry_add(agent=agent, name="travel.md", content="Flights to Tokyo booked for March.")
    entry_add(agent=agent, name="tokyo.md", content="Restaurants in Tokyo, Tokyo ramen list.")
    entry_add(agent=agent, name="shopping.md", content="Milk, eggs.")

    hits = search(api, "tokyo")

    assert [name for name, _ in hits] == ["tokyo.md", "travel.md"]
    assert hits[0][1] > hits[1][1] > 0


def test_aliases_resolve_but_add_no_search_tokens(api, agent):
    entry_add(agent=agent, name="a.md", content="plain text")
    entry_alias(agent=agent, ref="a.md", alias="zebra")

    assert search(api, "zebra") == []
    assert api.get("/entries/zebra").json()["name"] == "a.md"


def test_archives_are_searched_with_notes(api, agent):
    entry_add(agent=agent, name="archive/0001", content="we discussed the deploy", kind="archive")
    entry_add(agent=agent, name="deploy.md", content="deploy checklist")

    assert sorted(name for name, _ in search(api, "deploy")) == ["archive/0001", "deploy.md"]


def test_index_follows_write_rename_and_remove(api, agent):
    entry_add(agent=agent, name="old-name.md", content="apples")
    entry_write(agent=agent, ref="old-name.md", content="bananas")
    entry_rename(agent=agent, ref="old-name.md", new_name="notes/fruit basket")

    assert search(api, "apples") == []
    assert [n for n, _ in search(api, "bananas")] == ["notes/fruit basket"]
    assert [n for n, _ in search(api, "basket")] == ["notes/fruit basket"]
    api.delete("/entries/notes/fruit basket")
    assert search(api, "bananas") == []


def test_operators_in_the_query_are_plain_words(api, agent):
    entry_add(agent=agent, name="n.md", content='say "hello" NEAR(x) OR -bug')

    assert [n for n, _ in search(api, 'hello" OR (x NEAR')] == ["n.md"]


def test_search_is_per_agent(api, other_api, agent):
    entry_add(agent=agent, name="secret.md", content="launch codes")

    assert search(other_api, "launch") == []
    assert api.get("/entries/search").status_code == 422
