"""Admins curate facts: list with search and filters, versions inline, edits versioned."""

import pytest
from django.contrib.auth.models import User

from apps.facts.models import Fact, FactVersion
from apps.facts.services import fact_save
from apps.providers.embeddings.fake import HashEmbedder

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    user = User.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(user)
    return client


def test_changelist_search_and_change_page(admin_client, agent):
    fact = fact_save(agent=agent, content="Lives in Berlin", category="profile", key="city").fact

    listing = admin_client.get("/admin/facts/fact/", {"q": "Berlin"})
    change = admin_client.get(f"/admin/facts/fact/{fact.pk}/change/")

    assert listing.status_code == 200
    assert listing.context["cl"].result_count == 1
    assert change.status_code == 200
    assert "Lives in Berlin" in change.content.decode()


def test_an_admin_edit_is_recorded_as_a_version(
    admin_client, agent, django_capture_on_commit_callbacks
):
    fact = fact_save(agent=agent, content="Lives in Berlin", category="profile", key="city").fact

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = admin_client.post(
        f"/admin/facts/fact/{fact.pk}/change/",
            {"category": fact.category_id, "key": "city", "value": "Lives in Hamburg",
             "source": "agent", "status": "active", "importance": "0.5",
             "versions-TOTAL_FORMS": "1", "versions-INITIAL_FORMS": "1",
             "versions-MIN_NUM_FORMS": "0", "versions-MAX_NUM_FORMS": "1000",
             "versions-0-id": FactVersion.objects.get(fact=fact).pk, "versions-0-fact": fact.pk},
        )  # fmt: skip

    assert response.status_code == 302
    assert list(
        FactVersion.objects.filter(fact=fact).values_list("old_value", "new_value", "changed_by")
    ) == [("", "Lives in Berlin", "agent"), ("Lives in Berlin", "Lives in Hamburg", "admin:root")]
    # the admin's view runs in a transaction: the new value is embedded after commit, by the
    # search pipeline (one task), with the vector of the new text
    assert len(callbacks) == 1
    fact.refresh_from_db()
    assert fact.embedding_model == "fake-hash@384"
    assert fact.embedding.tolist() == pytest.approx(HashEmbedder().embed(["Lives in Hamburg"])[0])


def test_salience_shows_two_decimals_and_still_sorts(admin_client, agent):
    low = fact_save(agent=agent, content="Likes tea", category="taste").fact
    high = fact_save(agent=agent, content="Lives in Berlin", category="profile").fact
    Fact.objects.filter(pk=low.pk).update(salience=0.123456789)
    Fact.objects.filter(pk=high.pk).update(salience=0.987654321)

    listing = admin_client.get("/admin/facts/fact/", {"o": "7"})  # the salience column
    change = admin_client.get(f"/admin/facts/fact/{low.pk}/change/").content.decode()

    assert [f.pk for f in listing.context["cl"].result_list] == [low.pk, high.pk]
    page = listing.content.decode()
    assert '<td class="field-salience_2dp">0.12</td>' in page
    assert '<td class="field-salience_2dp">0.99</td>' in page
    assert "0.123456789" not in page
    assert '<div class="readonly">0.12</div>' in change


def test_the_category_filter_is_titled_category(admin_client, agent):
    fact_save(agent=agent, content="Lives in Berlin", category="profile")

    response = admin_client.get("/admin/facts/fact/")

    titles = [spec.title for spec in response.context["cl"].filter_specs]
    assert titles == ["status", "source", "valid to", "user", "category", "embedding status"]
    assert "By name" not in response.content.decode()
    assert " By category " in response.content.decode()
