"""semantic_scope: semantic mode over all history (default), or seed 000's "recent" tier,
where only messages after each session's compact cutoff keep a vector."""

from datetime import timedelta

import pytest

from apps.conversations.models import SessionMeta
from tests.search.conftest import T0, add

pytestmark = pytest.mark.django_db

OLD = "the lighthouse keeper painted the stairs blue"
NEW = "the lighthouse keeper bought a new lamp"


@pytest.fixture
def compacted(session, embed_now):
    """One archived message (before the cutoff) and one hot message, both embedded."""
    with embed_now():
        old, new = add(session, OLD, NEW, step=timedelta(hours=1))
    SessionMeta.objects.update_or_create(
        session=session, defaults={"start_at": T0 + timedelta(minutes=30)}
    )
    return old, new


def _search(api, query):
    response = api.post("/search", {"query": query, "mode": "semantic", "k": 10})
    assert response.status_code == 200, response.content
    return [h["id"] for h in response.json()["hits"]]


def test_by_default_semantic_mode_finds_archived_messages_too(api, compacted):
    old, new = compacted

    hits = _search(api, OLD)

    assert hits[0] == str(old.id)
    assert set(hits) == {str(old.id), str(new.id)}


def test_recent_scope_is_seed_000s_semantic_tier(api, compacted):
    old, new = compacted
    patched = api.patch("/agent/settings", {"settings": {"semantic_scope": "recent"}})
    assert patched.status_code == 200, patched.content

    assert _search(api, OLD) == [str(new.id)]
    # keyword mode still reaches the archive (seed 000's FTS5 tier)
    keyword = api.post("/search", {"query": "stairs", "mode": "keyword"}).json()["hits"]
    assert [h["id"] for h in keyword] == [str(old.id)]


def test_an_unknown_scope_is_422(api):
    response = api.patch("/agent/settings", {"settings": {"semantic_scope": "hot"}})

    assert response.status_code == 422
    assert "semantic_scope" in str(response.json()["detail"])
