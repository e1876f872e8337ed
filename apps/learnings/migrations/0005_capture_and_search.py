"""Issue 22: a failing tool message becomes an error learning (source "capture", deduplicated
by `dedup_key`, counted by `seen_count` and `last_seen_at`), and learnings are a search
corpus (BM25 over their content) for memory_search.

The learning table has no search triggers before this migration, so SQLite may remake it
for the new NOT NULL columns; the keyword index is created after."""

from django.db import migrations, models

from apps.search.operations import AddKeywordIndex


class Migration(migrations.Migration):
    dependencies = [
        ("learnings", "0004_trgm_contains_index"),
        ("search", "0003_postings_impact_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="learning",
            name="dedup_key",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
        migrations.AddField(
            model_name="learning",
            name="last_seen_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="learning",
            name="seen_count",
            field=models.PositiveIntegerField(default=1),
        ),
        migrations.AlterField(
            model_name="learning",
            name="source",
            field=models.CharField(
                choices=[
                    ("agent", "Agent"),
                    ("user", "User"),
                    ("consolidation", "Consolidation"),
                    ("admin", "Admin"),
                    ("capture", "Capture"),
                ],
                default="agent",
                max_length=16,
            ),
        ),
        migrations.AddConstraint(
            model_name="learning",
            constraint=models.UniqueConstraint(
                condition=models.Q(("dedup_key", ""), _negated=True),
                fields=("agent", "dedup_key"),
                name="learning_capture_dedup",
            ),
        ),
        # memory_search's learnings leg (seed 001: BM25 across all files).
        AddKeywordIndex("learning", fields=("content",)),
    ]
