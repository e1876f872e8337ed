from django.db import migrations

from apps.search.operations import AddKeywordIndex, AddVectorIndex


class Migration(migrations.Migration):
    dependencies = [("conversations", "0001_initial")]

    operations = [
        # The participant name is indexed with the content: "What did Caroline say..."
        AddKeywordIndex("conversations.message", fields=("name", "content")),
        AddVectorIndex("conversations.message", field="embedding"),
    ]
