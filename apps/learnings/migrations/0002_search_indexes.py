from django.db import migrations

from apps.search.operations import AddKeywordIndex, AddVectorIndex


class Migration(migrations.Migration):
    dependencies = [("learnings", "0001_initial"), ("search", "0001_message_indexes")]

    operations = [
        # Seed 000's error memory: keyword (Contains, BM25) and vectors.
        AddKeywordIndex("errorrecord", fields=("tool_name", "error", "strategy", "resolution")),
        AddVectorIndex("errorrecord", field="embedding"),
    ]
