from django.db import migrations

from apps.search.token_owner_ddl import token_owner_cascade


class Migration(migrations.Migration):
    dependencies = [("facts", "0006_fact_user")]
    operations = [token_owner_cascade("facts", "FactTokens")]
