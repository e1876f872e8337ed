from django.db import migrations, models

from apps.search.operations import (
    AddKeywordIndex,
    AddVectorIndex,
    DropKeywordIndex,
    DropVectorIndex,
)

# SQLite adds a NOT NULL column by remaking the table, which drops the FTS5 and vec0
# triggers: the side tables are dropped first and built again from the rows afterwards.
SQLITE = ("sqlite",)


class Migration(migrations.Migration):
    dependencies = [("facts", "0002_search_indexes")]

    operations = [
        migrations.AddField(
            model_name="category",
            name="embedding_attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        DropVectorIndex("fact", field="embedding", vendors=SQLITE),
        DropKeywordIndex("fact", fields=("key", "value"), vendors=SQLITE),
        migrations.AddField(
            model_name="fact",
            name="embedding_attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
        AddKeywordIndex("fact", fields=("key", "value"), vendors=SQLITE),
        AddVectorIndex("fact", field="embedding", vendors=SQLITE),
    ]
