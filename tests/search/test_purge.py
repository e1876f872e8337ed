"""search_index_purge on SQLite leaves no term of the deleted rows in the FTS5 pages, whatever
shape earlier writes left the index in (levels emptied by earlier merges)."""

import pytest
from django.db import connection, transaction

from apps.conversations.models import Message
from apps.search.services import search_index_purge
from tests.factories import MessageFactory

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite]


def _pages_with(word: str) -> int:
    """Pages of the message index holding `word`, once FTS5 wrote out what it holds in memory
    (it does at each savepoint)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM conversations_message_fts_data WHERE instr(block, %s) > 0",
            [word.encode()],
        )
        return cursor.fetchone()[0]


def _written_one_at_a_time(session, texts: list[str]) -> None:
    for text in texts:
        with transaction.atomic():  # a savepoint: FTS5 writes a segment for each
            MessageFactory(session=session, content=text)


def test_a_purge_leaves_no_term_of_the_deleted_rows_after_levels_were_emptied(session):
    # Enough segments for merges up several levels, then all deleted and merged away: the
    # index keeps its levels, empty.
    _written_one_at_a_time(session, [f"earlier note {i}" for i in range(300)])
    Message.objects.all().delete()
    search_index_purge(agent_id=session.agent_id, models=[Message])
    _written_one_at_a_time(session, ["my zanzibar", "the quokka", "a zanzibar again"])
    assert _pages_with("zanzibar") > 0

    Message.objects.filter(content__contains="zanzibar").delete()
    search_index_purge(agent_id=session.agent_id, models=[Message])

    assert _pages_with("zanzibar") == 0
    assert _pages_with("quokka") == 1
