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
    dependencies = [("facts", "0003_embedding_attempts")]

    operations = [
        DropVectorIndex("fact", field="embedding", vendors=SQLITE),
        DropKeywordIndex("fact", fields=("key", "value"), vendors=SQLITE),
        migrations.AddField(
            model_name="fact",
            name="status",
            field=models.CharField(
                choices=[("active", "Active"), ("pending", "Pending")],
                default="active",
                max_length=16,
            ),
        ),
        AddKeywordIndex("fact", fields=("key", "value"), vendors=SQLITE),
        AddVectorIndex("fact", field="embedding", vendors=SQLITE),
    ]
