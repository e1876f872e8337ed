"""Checks for /healthz. Each entry of MEMORYHUB_HEALTH_CHECKS is a callable returning
`(key, body, ok)`: `body` appears under `key` in the JSON. A failing check whose key is in
MEMORYHUB_HEALTH_CRITICAL (the database) answers 503; any other answers 200 "degraded".
Apps contribute their own (providers, the embedding backlog) through the setting, so this
module imports none of them. Name each check `<key>_report`: a check that raises is shown
as `{"ok": false}` under that key."""

from django.conf import settings
from django.db import connection
from kombu import Connection

# A check's /healthz entry: (key, body, ok).
Report = tuple[str, dict[str, object], bool]


def _report(key: str, ok: bool, detail: str) -> Report:
    return key, {"ok": ok, "detail": detail}, ok


def _database_state() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                row = cursor.fetchone()
                detail = f"postgresql, pgvector {row[0]}" if row else "postgresql, NO pgvector"
                return row is not None, detail
            cursor.execute("SELECT sqlite_version(), vec_version()")
            sqlite_version, vec_version = cursor.fetchone()
            return True, f"sqlite {sqlite_version}, sqlite-vec {vec_version}"
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"


def _broker_state(timeout: float = 2.0) -> tuple[bool, str]:
    try:
        # A fresh connection, not the app's pool: the check must see the broker as it is now.
        with Connection(
            settings.CELERY_BROKER_URL,
            transport_options=getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}),
            connect_timeout=timeout,
        ) as conn:
            # kombu passes the timeout on as seconds; celery-types' stub says int.
            conn.ensure_connection(max_retries=1, timeout=timeout)  # type: ignore[arg-type]
            return True, conn.as_uri()
    except Exception as exc:
        return False, f"{type(exc).__name__}: {exc}"


def database_report() -> Report:
    return _report("database", *_database_state())


def broker_report() -> Report:
    return _report("broker", *_broker_state())
