from django.db import migrations

from apps.search.token_owner_ddl import token_owner_cascade


class Migration(migrations.Migration):
    dependencies = [("conversations", "0006_session_user")]
    operations = [token_owner_cascade("conversations", "MessageTokens")]
