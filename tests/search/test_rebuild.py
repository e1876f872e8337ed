"""`manage.py search_rebuild` repairs SQLite's rowid-keyed side tables (e.g. after VACUUM)."""

from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection

from apps.providers.embeddings import get_embedder, vector_label
from apps.search.legs import keyword_search, vector_search
from tests.factories import MessageFactory

pytestmark = pytest.mark.django_db


def _run() -> str:
    out = StringIO()
    call_command("search_rebuild", stdout=out)
    return out.getvalue()


@pytest.fixture
def indexed(session):
    vector = np.zeros(384, dtype=np.float32)
    vector[0] = 1.0
    return MessageFactory(
        session=session,
        content="the sandbox runs nightly",
        embedding=vector,
        embedding_model=vector_label(get_embedder()),
    )


def _found(agent) -> tuple[list, list]:
    probe = np.zeros(384, dtype=np.float32)
    probe[0] = 1.0
    words = keyword_search("messages", agent_id=agent.pk, query="sandbox", limit=5)
    near = vector_search("messages", agent_id=agent.pk, vector=probe, limit=5)
    return [h.object_id for h in words], [h.object_id for h in near]


@pytest.mark.sqlite
def test_rebuild_restores_emptied_side_tables(agent, indexed):
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO conversations_message_fts(conversations_message_fts) VALUES('delete-all')"
        )
        cursor.execute("DELETE FROM conversations_message_vec")
    assert _found(agent) == ([], [])

    output = _run()

    assert _found(agent) == ([indexed.pk], [indexed.pk])
    # every corpus with side tables; categories have vectors but no index to rebuild
    names = ("entries", "errors", "facts", "history", "learnings", "messages")
    assert output.splitlines() == [f"Rebuilt the search index of {name}." for name in names]


@pytest.mark.postgres
def test_rebuild_is_not_needed_on_postgres(agent, indexed):
    output = _run()

    assert output == "Nothing to rebuild: PostgreSQL keys its search tables by id.\n"
    assert _found(agent) == ([indexed.pk], [indexed.pk])
