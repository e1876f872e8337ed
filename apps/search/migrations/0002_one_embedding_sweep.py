from django.db import migrations

# The per-app sweeps became one (search.embed_pending, beat entry "embed-pending"). Beat's
# DatabaseScheduler upserts the entries in settings but never deletes old ones, which would
# keep sending tasks no worker knows.
OLD = ["embed-pending-messages", "embed-pending-facts"]


def forwards(apps, schema_editor):
    PeriodicTask = apps.get_model("django_celery_beat", "PeriodicTask")
    PeriodicTask.objects.filter(name__in=OLD).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("search", "0001_message_indexes"),
        ("django_celery_beat", "0019_alter_periodictasks_options"),
    ]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
