from django.db import migrations

from apps.search.token_owner_ddl import token_owner_cascade


class Migration(migrations.Migration):
    dependencies = [("lifecycle", "0007_user")]
    operations = [token_owner_cascade("lifecycle", "HistoryEntryTokens")]
