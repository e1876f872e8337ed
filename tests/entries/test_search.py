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


def memory_search(api, q):
    response = api.post("/memory/search", {"query": q, "k": 50})
    assert response.status_code == 200
    return [(h["source"], h["name"]) for h in response.json()["items"]]


def test_an_entry_written_with_index_false_is_left_out_of_every_search(api, agent):
    added = api.post("/entries", {"name": "prefs/food.json", "content": '{"likes": "ramen"}',
                                  "index": False})  # fmt: skip
    api.post("/entries", {"name": "notes.md", "content": "ramen shops to try"})

    assert added.status_code == 201
    assert added.json()["index"] is False
    assert [n for n, _ in search(api, "ramen")] == ["notes.md"]
    assert memory_search(api, "ramen") == [("entry", "notes.md")]
    # Still read by name, and listed, with its flag.
    assert api.get("/entries/prefs/food.json").json()["content"] == '{"likes": "ramen"}'
    listed = {e["name"]: e["index"] for e in api.get("/entries").json()["items"]}
    assert listed == {"prefs/food.json": False, "notes.md": True}


def test_a_write_keeps_the_index_flag_unless_it_names_one(api, agent):
    api.post("/entries", {"name": "a.md", "content": "kiwi", "index": False})

    kept = api.put("/entries/a.md", {"content": "kiwi and mango"})
    assert (kept.status_code, kept.json()["index"]) == (200, False)
    assert search(api, "mango") == []

    back = api.put("/entries/a.md", {"content": "kiwi and mango", "index": True})
    assert back.json()["index"] is True
    assert [n for n, _ in search(api, "mango")] == ["a.md"]

    api.put("/entries/a.md", {"content": "papaya", "index": False})
    assert search(api, "papaya") == []
    assert memory_search(api, "papaya") == []


def test_a_users_unindexed_entry_is_left_out_of_their_searches_too(api, agent):
    api.post("/entries", {"name": "u.md", "content": "secret plum", "user": "alice",
                          "index": False})  # fmt: skip
    api.post("/entries", {"name": "v.md", "content": "public plum", "user": "alice"})

    response = api.get("/entries/search", {"q": "plum", "user": "alice"})
    assert [h["entry"]["name"] for h in response.json()["items"]] == ["v.md"]
    found = api.post("/memory/search", {"query": "plum", "user": "alice"}).json()["items"]
    assert [h["name"] for h in found] == ["v.md"]


def test_index_must_be_a_boolean(api):
    response = api.post("/entries", {"name": "b.md", "content": "x", "index": "sometimes"})
    assert response.status_code == 422
    assert api.get("/entries/b.md").status_code == 404
