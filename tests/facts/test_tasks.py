"""Fact tasks (run eagerly): late embedding and salience decay."""

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.facts.models import Fact
from apps.facts.services import fact_save
from apps.facts.tasks import embed_pending_facts_task, refresh_salience_task
from tests.memory.helpers import BROKEN, HASH, use_embedder


@pytest.mark.django_db
def test_pending_facts_are_embedded_when_the_embedder_is_back(agent, settings):
    use_embedder(settings, BROKEN)
    fact = fact_save(agent=agent, content="Lives in Berlin", category="profile").fact
    use_embedder(settings, HASH)

    result = embed_pending_facts_task.delay().get()

    fact.refresh_from_db()
    assert (result, fact.embedding_model, fact.embedding_error) == (1, "fake-hash@384", "")


@pytest.mark.django_db
def test_refresh_salience_applies_decay(agent):
    fact = fact_save(agent=agent, content="x", category="c", importance=0.8).fact
    Fact.objects.filter(pk=fact.pk).update(created_at=timezone.now() - timedelta(days=2))

    assert refresh_salience_task.delay().get() == 1

    fact.refresh_from_db()
    assert round(fact.salience, 6) == round(0.8 * 0.95**2, 6)
