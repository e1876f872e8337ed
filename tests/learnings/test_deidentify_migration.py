"""Issue 39's data migration (learnings 0009): error memory stored before it is scrubbed by
the patterns and the session user's identifier; a user's raw text moves to their
ErrorDetail; reversing puts it back."""

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from tests.factories import AgentFactory, SessionFactory

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("learnings", "0008_error_detail_delete_rules")]
AFTER = [("learnings", "0009_deidentify_error_memory")]
RAW = "refused for ana@example.com from 10.0.0.5 (ana)"
SHARED = "refused for [email] from [ip] ([user])"


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)
    return executor.loader.project_state(target).apps


def test_existing_rows_are_deidentified_and_the_raw_text_moves_to_the_user():
    agent = AgentFactory(slug="old-bot")
    theirs = SessionFactory(agent=agent, key="ana-chat", user="ana")
    own = SessionFactory(agent=agent, key="agent-chat")
    apps = migrate(BEFORE)
    ErrorRecord = apps.get_model("learnings", "ErrorRecord")
    Learning = apps.get_model("learnings", "Learning")
    later = timezone.now() + timedelta(days=90)
    for session in (theirs, own):
        ErrorRecord.objects.create(agent_id=agent.pk, session_id=session.pk, tool_name="mail",
                                   error=RAW, normalized="x", arguments={"to": "ana@example.com"},
                                   expires_at=later)  # fmt: skip
        Learning.objects.create(agent_id=agent.pk, session_id=session.pk, kind="error",
                                session_key=session.key, content=f"mail failed with {RAW}",
                                source="capture", dedup_key=session.key)  # fmt: skip

    apps = migrate(AFTER)
    records = apps.get_model("learnings", "ErrorRecord").objects.order_by("pk")
    learnings = apps.get_model("learnings", "Learning").objects.order_by("pk")
    details = apps.get_model("learnings", "ErrorDetail").objects.order_by("pk")

    # the agent's own session has no user: its identifier is not a term, the patterns hold
    assert [(r.error, r.arguments, r.origin_user) for r in records] == [
        (SHARED, {"to": "[email]"}, "ana"),
        ("refused for [email] from [ip] (ana)", {"to": "[email]"}, ""),
    ]
    assert [(row.content, row.session_key, row.origin_user) for row in learnings] == [
        (f"mail failed with {SHARED}", "", "ana"),
        ("mail failed with refused for [email] from [ip] (ana)", "agent-chat", ""),
    ]
    assert [(d.user, d.error, d.arguments, d.content, d.session_key) for d in details] == [
        ("ana", RAW, {"to": "ana@example.com"}, "", "ana-chat"),
        ("ana", "", {}, f"mail failed with {RAW}", "ana-chat"),
    ]

    apps = migrate(BEFORE)
    records = apps.get_model("learnings", "ErrorRecord").objects.order_by("pk")
    learnings = apps.get_model("learnings", "Learning").objects.order_by("pk")
    assert [r.error for r in records] == [RAW, "refused for [email] from [ip] (ana)"]
    assert [row.session_key for row in learnings] == ["ana-chat", "agent-chat"]
    assert apps.get_model("learnings", "ErrorDetail").objects.count() == 0
    migrate(AFTER)
