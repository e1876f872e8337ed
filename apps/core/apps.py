from django.apps import AppConfig
from django.db.backends.signals import connection_created


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        # Infrastructure, not domain behaviour: every SQLite connection loads sqlite-vec.
        from apps.core.sqlite_connection import on_connection_created

        connection_created.connect(on_connection_created, dispatch_uid="memoryhub_sqlite_ext")
