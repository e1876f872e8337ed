from django.db import migrations

from apps.search.operations import AddKeywordIndex, AddVectorIndex


class Migration(migrations.Migration):
    dependencies = [("lifecycle", "0001_initial"), ("search", "0001_message_indexes")]

    operations = [
        # Seed 004's history: BM25 and vectors, for memory_search.
        AddKeywordIndex("historyentry", fields=("content",)),
        AddVectorIndex("historyentry", field="embedding"),
    ]
