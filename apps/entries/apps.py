from django.apps import AppConfig


class EntriesConfig(AppConfig):
    name = "apps.entries"
    label = "entries"
