from django.db import migrations, models

BATCH = 500


def backfill(apps, schema_editor):
    """Count the tokens of every existing entry, as the entry services now do on write."""
    # The counter is a pure function of the text (a vendored tokenizer file), safe to import.
    from apps.providers.token_counts import count_tokens_batch

    Entry = apps.get_model("entries", "Entry")
    last = 0
    while True:
        batch = list(Entry.objects.filter(id__gt=last).only("id", "content").order_by("id")[:BATCH])
        if not batch:
            return
        counts = count_tokens_batch([e.content for e in batch])
        for entry, tokens in zip(batch, counts, strict=True):
            entry.token_count = tokens
        Entry.objects.bulk_update(batch, ["token_count"])
        last = batch[-1].id


class Migration(migrations.Migration):
    dependencies = [("entries", "0002_search_indexes")]

    operations = [
        migrations.AddField(
            model_name="entry",
            name="token_count",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
    ]
