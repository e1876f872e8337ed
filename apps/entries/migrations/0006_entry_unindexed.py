from django.db import migrations, models


class Migration(migrations.Migration):
    """Entry.unindexed: True for an entry written with `index: false` (left out of every
    search). Nullable, so SQLite adds it with ALTER TABLE ADD COLUMN and keeps the search
    triggers a table remake would drop."""

    dependencies = [
        ("entries", "0005_entry_user"),
    ]

    operations = [
        migrations.AddField(
            model_name="entry",
            name="unindexed",
            field=models.BooleanField(blank=True, null=True),
        ),
    ]
