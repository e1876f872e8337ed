from django.db import migrations

from apps.search.operations import AddContainsIndex


class Migration(migrations.Migration):
    dependencies = [
        ("learnings", "0003_learnings_from_entries"),
        ("search", "0002_one_embedding_sweep"),
    ]

    operations = [
        # errors_search's substring leg (contains_search on error)
        AddContainsIndex("errorrecord", field="error"),
    ]
