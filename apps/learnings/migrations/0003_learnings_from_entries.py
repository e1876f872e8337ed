"""learnings/errors.md and learnings/corrections.md were Note entries; they are now rendered
from Learning rows. Each file's bullet items (or its whole text, if it has none) become
learnings, then the entry goes. Its content stays in the entry change log."""

import re

from django.db import migrations
from django.utils import timezone

FILES = {"learnings/errors.md": "error", "learnings/corrections.md": "correction"}
_ITEM = re.compile(r"^\s*[-*]\s+(.*\S)\s*$")


def items(text: str) -> list[str]:
    found = [m.group(1) for line in text.splitlines() if (m := _ITEM.match(line))]
    return found or ([text.strip()] if text.strip() else [])


def forwards(apps, schema_editor):
    Entry = apps.get_model("entries", "Entry")
    EntryChange = apps.get_model("entries", "EntryChange")
    EntryAlias = apps.get_model("entries", "EntryAlias")
    Learning = apps.get_model("learnings", "Learning")
    for entry in Entry.objects.filter(name__in=list(FILES)):
        now = timezone.now()
        Learning.objects.bulk_create(
            Learning(agent_id=entry.agent_id, kind=FILES[entry.name], content=item,
                     source="agent", status="active", created_at=entry.created_at,
                     updated_at=now)
            for item in items(entry.content)
        )
        EntryChange.objects.create(
            agent_id=entry.agent_id, entry=None, entry_name=entry.name, kind=entry.kind,
            action="remove", previous_content=entry.content, changed_by="migration",
            detail="moved into learnings", changed_at=now,
        )
        EntryAlias.objects.filter(entry=entry).delete()
        entry.delete()


class Migration(migrations.Migration):
    dependencies = [("learnings", "0002_search_indexes"), ("entries", "0004_entrychange")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
