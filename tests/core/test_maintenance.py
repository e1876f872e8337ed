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


def _all_visible_pages(table: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT relallvisible FROM pg_class WHERE relname = %s", [table])
        return cursor.fetchone()[0]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_optimize_vacuums_postgres_bm25_tables_so_index_only_scans_skip_the_heap(agent):
    # given postings just written (no VACUUM yet: no page is marked all-visible)
    MessageFactory.create_batch(200, session=SessionFactory(agent=agent))
    post = "conversations_message_bm25post"
    assert _all_visible_pages(post) == 0

    # when the hourly task runs (outside any transaction, as a worker runs it)
    assert optimize_database_task.delay().get() is True

    # then the postings' pages are all-visible
    with connection.cursor() as cursor:
        cursor.execute("SELECT relpages FROM pg_class WHERE relname = %s", [post])
        pages = cursor.fetchone()[0]
    assert pages > 0
    assert _all_visible_pages(post) == pages


@pytest.mark.postgres
def test_inside_a_transaction_postgres_is_left_alone():
    # VACUUM cannot run in a transaction block; the task says it did nothing
    assert optimize_database_task.delay().get() is False
