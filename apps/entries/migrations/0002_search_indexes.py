from django.db import migrations

from apps.search.operations import AddKeywordIndex


class Migration(migrations.Migration):
    dependencies = [("entries", "0001_initial"), ("search", "0001_message_indexes")]

    operations = [
        # Seed 003: BM25 over name and content; aliases live in another table, add no tokens.
        AddKeywordIndex("entry", fields=("name", "content")),
    ]
