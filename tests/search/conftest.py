from datetime import UTC, datetime, timedelta

import pytest

from apps.conversations.models import SessionMeta
from apps.conversations.services import NewMessage, messages_append

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def add(session, *texts, name="", role="user", start=T0, step=timedelta(minutes=1)):
    """Append messages (one per text) at fixed times; returns the stored rows in order."""
    batch = [
        NewMessage(role=role, content=t, name=name, created_at=start + i * step)
        for i, t in enumerate(texts)
    ]
    return messages_append(session=session, messages=batch).messages


def archive_all(session, at=datetime(2100, 1, 1, tzinfo=UTC)):
    """Set the compaction cutoff after every message: the whole session is archive."""
    SessionMeta.objects.update_or_create(session=session, defaults={"start_at": at})


@pytest.fixture
def embed_now(django_capture_on_commit_callbacks):
    """Run after-commit callbacks (the embedding tasks, eager) at the end of the block."""
    return lambda: django_capture_on_commit_callbacks(execute=True)
