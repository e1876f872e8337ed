from django.db import migrations

from apps.search.operations import AddKeywordIndex, AddVectorIndex


class Migration(migrations.Migration):
    dependencies = [("facts", "0001_initial"), ("search", "0001_message_indexes")]

    operations = [
        AddKeywordIndex("fact", fields=("key", "value")),
        AddVectorIndex("fact", field="embedding"),
    ]
