from django.db import migrations

from apps.core.delete_rules import match_delete_rules


class Migration(migrations.Migration):
    atomic = False  # each key's swap commits alone (apps/core/delete_rules.py)
    # Every app whose models hold a foreign key, at its newest migration.
    dependencies = [
        ("core", "0001_pgvector"),
        ("agents", "0004_team_agents_md"),
        ("conversations", "0006_session_user"),
        ("entries", "0006_entry_unindexed"),
        ("facts", "0006_fact_user"),
        ("learnings", "0006_learning_user"),
        ("lifecycle", "0007_user"),
    ]
    operations = [match_delete_rules()]
