"""Facts CRUD at /api/v1/facts: versions, supersede with validity, isolation."""

import pytest

from apps.facts.models import Fact, FactVersion

pytestmark = pytest.mark.django_db


def create(api, value, **extra):
    return api.post("/facts", {"value": value, **extra})


def test_create_then_duplicate_returns_the_existing_fact(api, agent):
    first = create(api, "Lives in Berlin", category="profile", key="city", source="user")
    again = create(api, "lives in Berlin.", category="profile")

    assert first.status_code == 201
    assert again.status_code == 200
    assert (again.json()["deduped"], again.json()["existing_id"]) == (
        True,
        first.json()["fact"]["id"],
    )
    assert first.json()["fact"]["source"] == "user"
    assert Fact.objects.count() == 1


def test_patch_records_old_value_who_when_and_why(api, agent):
    fact_id = create(api, "Lives in Berlin", category="profile", key="city").json()["fact"]["id"]

    response = api.patch(
        f"/facts/{fact_id}", {"value": "Lives in Hamburg", "reason": "moved", "source": "user"}
    )
    versions = api.get(f"/facts/{fact_id}/versions").json()

    assert response.status_code == 200
    assert response.json()["value"] == "Lives in Hamburg"
    assert [(v["number"], v["old_value"], v["new_value"], v["changed_by"], v["reason"])
            for v in versions] == [
        (1, "", "Lives in Berlin", "agent", "created"),
        (2, "Lives in Berlin", "Lives in Hamburg", "user", "moved"),
    ]  # fmt: skip


def test_patch_to_a_taken_key_is_409(api, agent):
    create(api, "a", category="c", key="one")
    second = create(api, "b", category="c", key="two").json()["fact"]["id"]

    response = api.patch(f"/facts/{second}", {"key": "one"})

    assert response.status_code == 409
    assert response.json()["detail"] == "key 'one' already exists in category 'c'"
    assert Fact.objects.get(pk=second).key == "two"


def test_supersede_keeps_history_with_validity(api, agent):
    old_id = create(api, "Works at Acme", category="work", key="employer").json()["fact"]["id"]

    response = api.post(f"/facts/{old_id}/supersede", {"value": "Works at Globex"})

    assert response.status_code == 201
    new = response.json()
    old = api.get(f"/facts/{old_id}").json()
    assert (new["key"], new["category"], new["valid_to"]) == ("employer", "work", None)
    assert old["valid_to"] == new["valid_from"]
    assert old["superseded_by"] == new["id"]
    assert [f["id"] for f in api.get("/facts").json()["items"]] == [new["id"]]
    listed = api.get("/facts", {"include_superseded": True}).json()["items"]
    assert [f["id"] for f in listed] == [old_id, new["id"]]
    assert FactVersion.objects.filter(fact_id=old_id).count() == 2
    again = api.post(f"/facts/{old_id}/supersede", {"value": "x"})
    assert (again.status_code, again.json()["detail"]) == (409, "the fact is already superseded")
    edit = api.patch(f"/facts/{old_id}", {"value": "x"})
    assert edit.status_code == 409


def test_delete_removes_the_fact_and_its_versions(api, agent):
    fact_id = create(api, "x", category="c").json()["fact"]["id"]

    assert api.delete(f"/facts/{fact_id}").status_code == 204
    assert api.get(f"/facts/{fact_id}").status_code == 404
    assert FactVersion.objects.count() == 0


def test_list_filters_by_category_and_pages_by_id(api, agent):
    ids = [create(api, f"fact {n}", category="c" if n % 2 else "d").json()["fact"]["id"]
           for n in range(5)]  # fmt: skip

    page = api.get("/facts", {"limit": 2}).json()
    rest = api.get("/facts", {"limit": 2, "cursor": page["next_cursor"]}).json()
    only_c = api.get("/facts", {"category": "c"}).json()

    assert [f["id"] for f in page["items"]] == ids[:2]
    assert [f["id"] for f in rest["items"]] == ids[2:4]
    assert [f["id"] for f in only_c["items"]] == [ids[1], ids[3]]


def test_bad_input_is_422(api, agent):
    assert create(api, "").status_code == 422
    assert create(api, "x", importance=-0.1).status_code == 422
    assert create(api, "x", source="robot").status_code == 422
    assert api.get("/facts/not-a-number").status_code == 404
    assert Fact.objects.count() == 0


def test_another_agents_key_gets_404_and_changes_nothing(api, other_api, agent):
    fact_id = create(api, "mine", category="c", key="k").json()["fact"]["id"]

    responses = [
        other_api.get(f"/facts/{fact_id}"),
        other_api.patch(f"/facts/{fact_id}", {"value": "theirs"}),
        other_api.post(f"/facts/{fact_id}/supersede", {"value": "theirs"}),
        other_api.get(f"/facts/{fact_id}/versions"),
        other_api.delete(f"/facts/{fact_id}"),
    ]

    assert [r.status_code for r in responses] == [404] * 5
    assert other_api.get("/facts").json() == {"items": [], "next_cursor": None}
    fact = Fact.objects.get()
    assert (fact.value, fact.valid_to, FactVersion.objects.count()) == ("mine", None, 1)
