"""Team members get a role (Membership, the M2M's new through model) and changes made by
people are audited. Existing members become editors: they could already change their
teams' objects in the admin."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def copy_members(apps, schema_editor):
    Team = apps.get_model("agents", "Team")
    Membership = apps.get_model("agents", "Membership")
    rows = Team.members.through.objects.all()
    Membership.objects.bulk_create(
        [Membership(team_id=r.team_id, user_id=r.user_id, role="editor") for r in rows]
    )


def copy_back(apps, schema_editor):
    pass  # the old table is re-created empty; memberships are dropped with their model


class Migration(migrations.Migration):
    dependencies = [
        ("agents", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Membership",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("role", models.CharField(choices=[("viewer", "Viewer"), ("editor", "Editor")], default="viewer", max_length=16)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("team", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to="agents.team")),
                ("user", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="memberships", to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "ordering": ["team", "user"],
                "constraints": [
                    models.UniqueConstraint(fields=("team", "user"), name="membership_unique"),
                    models.CheckConstraint(condition=models.Q(("role__in", ["viewer", "editor"])), name="membership_role"),
                ],
            },
        ),
        migrations.RunPython(copy_members, copy_back),
        migrations.RemoveField(model_name="team", name="members"),
        migrations.AddField(
            model_name="team",
            name="members",
            field=models.ManyToManyField(blank=True, related_name="teams", through="agents.Membership", to=settings.AUTH_USER_MODEL),
        ),
        migrations.CreateModel(
            name="AuditEvent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("username", models.CharField(max_length=150)),
                ("source", models.CharField(max_length=16)),
                ("action", models.CharField(max_length=64)),
                ("object_type", models.CharField(max_length=64)),
                ("object_id", models.CharField(blank=True, default="", max_length=64)),
                ("before", models.JSONField(blank=True, null=True)),
                ("after", models.JSONField(blank=True, null=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("agent", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name="audit_events", to="agents.agent")),
                ("user", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name="+", to=settings.AUTH_USER_MODEL)),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [models.Index(fields=["agent", "-created_at", "-id"], name="audit_agent_time")],
            },
        ),
    ]
