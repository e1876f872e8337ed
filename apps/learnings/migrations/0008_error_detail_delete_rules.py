from django.db import migrations

from apps.core.delete_rules import match_delete_rules


class Migration(migrations.Migration):
    # Its own migration: the keys 0007 creates exist only once that migration has ended.
    atomic = False  # each key's swap commits alone (apps/core/delete_rules.py)
    dependencies = [("learnings", "0007_error_details")]

    operations = [match_delete_rules()]
