from django.db import migrations

from apps.search.operations import AddContainsIndex


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0003_message_is_error"),
        ("search", "0002_one_embedding_sweep"),
    ]

    operations = [
        # contains mode and keyword mode's hot window (contains_search on content)
        AddContainsIndex("message", field="content"),
    ]
