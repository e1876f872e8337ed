"""Checks for /healthz. Each entry of MEMORYHUB_HEALTH_CHECKS is a callable returning
`(key, body, ok)`: `body` appears under `key` in the JSON. A failing check whose key is in
MEMORYHUB_HEALTH_CRITICAL (the database) answers 503; any other answers 200 "degraded".
Apps contribute their own (providers, the embedding backlog) through the setting, so this
module imports none of them. Name each check `<key>_report`: a check that raises is shown
as `{"ok": false}` under that key."""

from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from kombu import Connection


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def check_database() -> Check:
    try:
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                row = cursor.fetchone()
                detail = f"postgresql, pgvector {row[0]}" if row else "postgresql, NO pgvector"
                return Check("database", row is not None, detail)
            cursor.execute("SELECT sqlite_version(), vec_version()")
            sqlite_version, vec_version = cursor.fetchone()
            return Check("database", True, f"sqlite {sqlite_version}, sqlite-vec {vec_version}")
    except Exception as exc:
        return Check("database", False, f"{type(exc).__name__}: {exc}")


def check_broker(timeout: float = 2.0) -> Check:
    try:
        # A fresh connection, not the app's pool: the check must see the broker as it is now.
        with Connection(
            settings.CELERY_BROKER_URL,
            transport_options=getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {}),
            connect_timeout=timeout,
        ) as conn:
            # kombu passes the timeout on as seconds; celery-types' stub says int.
            conn.ensure_connection(max_retries=1, timeout=timeout)  # type: ignore[arg-type]
            return Check("broker", True, conn.as_uri())
    except Exception as exc:
        return Check("broker", False, f"{type(exc).__name__}: {exc}")


def database_report() -> tuple[str, dict, bool]:
    check = check_database()
    return check.name, {"ok": check.ok, "detail": check.detail}, check.ok


def broker_report() -> tuple[str, dict, bool]:
    check = check_broker()
    return check.name, {"ok": check.ok, "detail": check.detail}, check.ok
