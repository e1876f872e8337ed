"""Test settings: base plus speed-ups. The database, broker and cache still come from the
environment, so the same suite runs against SQLite and against PostgreSQL + Redis."""

import atexit
import os
import shutil
import tempfile

if not os.environ.get("MEMORYHUB_DATA_DIR"):
    # A data dir of the run's own, removed when this process ends; child processes (a real
    # worker, the MCP stdio server) inherit the variable and neither create nor remove one.
    _tmp = tempfile.mkdtemp(prefix="memoryhub-test-")
    os.environ["MEMORYHUB_DATA_DIR"] = _tmp
    _owner = os.getpid()

    def _remove_tmp() -> None:
        if os.getpid() == _owner:
            shutil.rmtree(_tmp, ignore_errors=True)

    atexit.register(_remove_tmp)

from memoryhub.settings.base import *  # noqa: F403
from memoryhub.settings.base import DATABASES, MEMORYHUB_PROVIDERS, MEMORYHUB_REPLICAS

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not pytest-django's shared-cache in-memory database: shared cache locks whole
    # tables ("database table is locked") when a real worker thread writes, and WAL and the
    # busy timeout, which production relies on, only exist for files.
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}
# A replica (DATABASE_REPLICA_URL) reads the primary's test database, which reaches it by
# streaming: MIRROR gives its alias the test database's name and creates nothing on it (a
# standby is read-only). Reads go to it only in the tests that turn replica reads on
# (tests/replica): elsewhere a read right after a write must not depend on the lag.
for _alias in MEMORYHUB_REPLICAS:
    DATABASES[_alias]["TEST"] = {"MIRROR": "default"}
MEMORYHUB_REPLICA_READS = False
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns when it is missing
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Tasks run inline unless a test starts a real worker (tests/support/celery_worker.py).
CELERY_TASK_ALWAYS_EAGER = True
# Most tests use the deterministic hashing embedder; tests of meaning switch to MiniLM.
MEMORYHUB_PROVIDERS = {
    **MEMORYHUB_PROVIDERS,
    "embedding": {"CLASS": "apps.providers.embeddings.fake.HashEmbedder", "CONFIG": {}},
}
MEMORYHUB_KEY_TOUCH_SECONDS = 0
# A provider called while the code under test holds a transaction fails the test
# (pytest-django's own test transaction does not count: apps/providers/guard.py).
MEMORYHUB_PROVIDER_GUARD = "raise"
