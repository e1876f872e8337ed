"""Teams get admin-set ceilings for the limits that protect the service (empty: the global
maxima of apps.agents.config)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0002_membership_auditevent"),
    ]

    operations = [
        migrations.AddField(
            model_name="team",
            name="ceilings",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
