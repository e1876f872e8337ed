import pytest
from django.db import connection

from apps.conversations.models import Message
from apps.core.tasks import optimize_database_task
from apps.search.backends.base import exact_candidates_sql
from apps.search.corpora import get_corpus
from tests.factories import MessageFactory, SessionFactory

pytestmark = pytest.mark.django_db


def _plan(session) -> str:
    """The plan of the exact vector scan of one session (as get_context's relevance leg)."""
    sql, params = exact_candidates_sql(
        get_corpus("messages"),
        Message.objects.filter(session=session),
        agent_id=session.agent_id,
        model_name="m@384",
    )
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + sql, params)
        return " ".join(row[-1] for row in cursor.fetchall())


@pytest.mark.sqlite
def test_optimize_gives_sqlite_the_statistics_to_pick_the_session_index(agent):
    sessions = [SessionFactory(agent=agent) for _ in range(30)]
    for s in sessions:
        MessageFactory.create_batch(10, session=s)
    # No statistics: SQLite walks the agent's index (all 300 rows) to find 10.
    assert "(agent_id=?)" in _plan(sessions[0])

    assert optimize_database_task.delay().get() is True

    assert "(session_id=?)" in _plan(sessions[0])


@pytest.mark.postgres
def test_optimize_leaves_postgres_to_autovacuum():
    assert optimize_database_task.delay().get() is False
