"""Vector search restricted to one session: the exact scan and the ANN index agree."""

import numpy as np
import pytest

from apps.conversations.models import Message
from apps.providers.embeddings import get_embedder, vector_label
from apps.search.legs import vector_search
from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db


def unit(*components: float) -> np.ndarray:
    v = np.zeros(384, dtype=np.float32)
    v[: len(components)] = components
    return v / np.linalg.norm(v)


@pytest.fixture
def two_sessions(agent):
    """Six vectors in the target session, decoys at the query itself in another session."""
    label = vector_label(get_embedder())
    target, other = SessionFactory(agent=agent), SessionFactory(agent=agent)
    angles = [0.1, 0.5, 0.9, 1.3, 1.7, 2.1]
    rows = [
        MessageFactory(session=target, content=f"t{a}", embedding=unit(np.cos(a), np.sin(a)),
                       embedding_model=label)
        for a in angles
    ]  # fmt: skip
    for i in range(3):
        MessageFactory(session=other, content=f"decoy {i}", embedding=unit(1.0, 0.0),
                       embedding_model=label)  # fmt: skip
    return target, rows, angles


@pytest.mark.parametrize("exact", [True, False])
def test_session_scoped_vector_search_ranks_by_exact_cosine(agent, two_sessions, exact):
    target, rows, angles = two_sessions

    hits = vector_search(
        "messages",
        agent_id=agent.pk,
        vector=unit(1.0, 0.0),
        limit=4,
        queryset=Message.objects.filter(session=target),
        exact=exact,
    )

    assert [h.object_id for h in hits] == [r.pk for r in rows[:4]]
    assert [round(h.score, 5) for h in hits] == [round(float(np.cos(a)), 5) for a in angles[:4]]
    assert {h.leg for h in hits} == {"vector"}


def test_exact_scan_skips_rows_without_a_vector_or_of_another_model(agent, two_sessions):
    target, rows, _ = two_sessions
    Message.objects.filter(pk=rows[0].pk).update(embedding=None, embedding_model="")
    Message.objects.filter(pk=rows[1].pk).update(embedding_model="old-model@384")

    hits = vector_search(
        "messages",
        agent_id=agent.pk,
        vector=unit(1.0, 0.0),
        limit=10,
        queryset=Message.objects.filter(session=target),
        exact=True,
    )

    assert [h.object_id for h in hits] == [r.pk for r in rows[2:]]


def test_exact_scan_never_crosses_agents(agent, other_agent, two_sessions):
    target, _, _ = two_sessions

    hits = vector_search(
        "messages",
        agent_id=other_agent.pk,
        vector=unit(1.0, 0.0),
        limit=10,
        queryset=Message.objects.filter(session=target),
        exact=True,
    )

    assert hits == []
