"""Issue 39 for the rows already stored: error records and captured error learnings are
de-identified by the scrubber's pattern rules and their session user's identifier (the
user's fact terms are not applied: a migration does not read facts; the next capture or an
erasure does). The raw text of a row from a user's session moves to that user's
ErrorDetail; a row of the agent's own sessions keeps none (no user reads it raw).

Reversing puts each user's raw text back in the shared rows it came from."""

from django.db import migrations

from apps.core.scrub import Scrubber
from apps.learnings.services.error_records import error_key

RECORD_TEXT = ("error", "strategy", "resolution", "arguments", "context")


def _records(apps) -> None:
    ErrorRecord = apps.get_model("learnings", "ErrorRecord")
    ErrorDetail = apps.get_model("learnings", "ErrorDetail")
    for row in ErrorRecord.objects.select_related("session").iterator():
        user = row.session.user if row.session_id else ""
        scrub = Scrubber(user=user)
        raw = {name: getattr(row, name) for name in RECORD_TEXT}
        shared = {name: scrub.value(value) for name, value in raw.items()}
        context = shared["context"]
        if user and isinstance(context, dict):
            shared["context"] = {k: v for k, v in context.items() if k != "session"}
        if user:
            ErrorDetail.objects.create(
                agent_id=row.agent_id,
                record=row,
                user=user,
                session_id=row.session_id,
                session_key=row.session.key,
                created_at=row.created_at,
                updated_at=row.updated_at,
                **raw,
            )
        if shared != raw or user:
            for name, value in shared.items():
                setattr(row, name, value)
            row.normalized, row.origin_user = error_key(row.error), user
            if shared["error"] != raw["error"]:
                row.embedding, row.embedding_model, row.embedding_attempts = None, "", 0
            row.save()


def _learnings(apps) -> None:
    Learning = apps.get_model("learnings", "Learning")
    ErrorDetail = apps.get_model("learnings", "ErrorDetail")
    rows = Learning.objects.filter(kind="error").select_related("session")
    for row in rows.iterator():
        user = row.session.user if row.session_id else ""
        content = Scrubber(user=user).text(row.content)
        if user:
            ErrorDetail.objects.create(
                agent_id=row.agent_id,
                learning=row,
                user=user,
                session_id=row.session_id,
                session_key=row.session_key,
                content=row.content,
                created_at=row.created_at,
                updated_at=row.updated_at,
            )
        if content != row.content or user:
            # The dedup key stays: a capture matches it again when nothing was masked.
            row.content, row.origin_user = content, user
            row.session_key = "" if user else row.session_key
            row.save(update_fields=["content", "origin_user", "session_key"])


def forwards(apps, schema_editor) -> None:
    _records(apps)
    _learnings(apps)


def backwards(apps, schema_editor) -> None:
    ErrorDetail = apps.get_model("learnings", "ErrorDetail")
    for detail in ErrorDetail.objects.select_related("record", "learning").iterator():
        if detail.record_id:
            for name in RECORD_TEXT:
                setattr(detail.record, name, getattr(detail, name))
            detail.record.normalized = error_key(detail.record.error)
            detail.record.save()
        else:
            detail.learning.content = detail.content
            detail.learning.session_key = detail.session_key
            detail.learning.save(update_fields=["content", "session_key"])
    ErrorDetail.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("learnings", "0008_error_detail_delete_rules")]

    operations = [migrations.RunPython(forwards, backwards)]
