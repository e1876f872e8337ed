"""Settings for every deployment, driven by environment variables.

With no environment set, this is the embedded default: SQLite (WAL, sqlite-vec, FTS5)
in ./var, a filesystem Celery broker and a file cache shared by web, worker and beat.
Production sets DATABASE_URL (PostgreSQL + pgvector), CELERY_BROKER_URL and CACHE_URL
(Redis), DJANGO_SECRET_KEY, DJANGO_ALLOWED_HOSTS. There is no production.py on purpose.
"""

import os
import secrets
from pathlib import Path

import environ

from memoryhub.settings.replicas import replica_databases

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()

# The tokenizers library warns (and can deadlock) when a process that used it forks, which is
# how gunicorn and Celery's prefork pool start their children.
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DATA_DIR = Path(env.str("MEMORYHUB_DATA_DIR", default=str(BASE_DIR / "var")))
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    """DJANGO_SECRET_KEY, or one generated once and kept in DATA_DIR for the embedded run."""
    if key := env.str("DJANGO_SECRET_KEY", default=""):
        return key
    path = DATA_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env.bool("DJANGO_DEBUG", default=False)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_celery_beat",
    "django_htmx",
    "ninja",
    "apps.core",
    "apps.providers",
    "apps.agents",
    "apps.conversations",
    "apps.search",
    "apps.facts",
    "apps.entries",
    "apps.learnings",
    "apps.lifecycle",
    "apps.people",
    "apps.memory",
    "apps.review",
    "apps.mcp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "apps.core.middleware.reject_unstorable_params",
    "apps.core.middleware.api_errors_as_json",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "apps.core.replicas.pin_primary_after_write",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "memoryhub.urls"
WSGI_APPLICATION = "memoryhub.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- HTTPS (docs/deploy.md) ------------------------------------------------------------
# One switch for a deployment served over HTTPS, usually behind a proxy that terminates TLS
# and sets X-Forwarded-Proto: redirect plain HTTP, HSTS, secure-only cookies, and trust the
# proxy's word on the scheme. Off by default: the embedded run is plain HTTP on localhost.
MEMORYHUB_HTTPS = env.bool("MEMORYHUB_HTTPS", default=False)
if MEMORYHUB_HTTPS:
    SECURE_SSL_REDIRECT = True
    # A load balancer probes /healthz over plain HTTP, inside the network; no redirect there.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # One year once it is known to work; start lower (3600) while trying HTTPS out, since
    # browsers remember the header for max-age whatever the server does afterwards.
    SECURE_HSTS_SECONDS = env.int("MEMORYHUB_HSTS_SECONDS", default=365 * 24 * 3600)
    # Opt-in: every subdomain must then serve HTTPS too, and preloading is hard to undo.
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("MEMORYHUB_HSTS_INCLUDE_SUBDOMAINS", default=False)
    SECURE_HSTS_PRELOAD = env.bool("MEMORYHUB_HSTS_PRELOAD", default=False)
    # Those two are choices for whoever owns the domain, not omissions: their check --deploy
    # warnings (W005, W021) are silenced unless the operator opts in.
    SILENCED_SYSTEM_CHECKS = [
        *([] if SECURE_HSTS_INCLUDE_SUBDOMAINS else ["security.W005"]),
        *([] if SECURE_HSTS_PRELOAD else ["security.W021"]),
    ]

# --- Database -----------------------------------------------------------------------------
DATABASES = {
    "default": env.db_url("DATABASE_URL", default=f"sqlite:///{DATA_DIR / 'memoryhub.sqlite3'}")
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        # Wait for a writer instead of failing with "database is locked"; web, worker
        # and beat share one file. IMMEDIATE takes the write lock up front, which avoids
        # deadlocks when a read transaction later wants to write.
        "timeout": env.int("MEMORYHUB_SQLITE_BUSY_TIMEOUT", default=20),
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DATABASE_CONN_MAX_AGE", default=60))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Read replicas (docs/deploy.md, "Read replicas"): replica1, replica2, ... beside default.
# Only the reads apps.core.replicas.replica_reads() wraps go to one, and only while it answers.
DATABASES |= replica_databases(DATABASES["default"], env.list("DATABASE_REPLICA_URL", default=[]))
MEMORYHUB_REPLICAS = [alias for alias in DATABASES if alias != "default"]
if MEMORYHUB_REPLICAS:
    DATABASE_ROUTERS = ["apps.core.replicas.ReplicaRouter"]
# Off: every read on the primary while the replicas stay configured (an operator's switch
# for a replica that lags too far; the test suite, except the tests that turn it on).
MEMORYHUB_REPLICA_READS = env.bool("MEMORYHUB_REPLICA_READS", default=True)
# How long a replica's "answers" or "does not answer" is believed before it is asked again.
MEMORYHUB_REPLICA_CHECK_SECONDS = env.float("MEMORYHUB_REPLICA_CHECK_SECONDS", default=5.0)
# After a browser's POST (a review page's form), its reads stay on the primary this long, so
# the page it is redirected to shows what it just wrote.
MEMORYHUB_REPLICA_PIN_SECONDS = env.int("MEMORYHUB_REPLICA_PIN_SECONDS", default=10)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Cache (working memory) --------------------------------------------------------------
# Web and worker are separate processes, so the cache must be shared between them: a file
# cache for the embedded default, Redis in production. Never LocMemCache.
CACHES = {"default": env.cache_url("CACHE_URL", default=f"filecache://{DATA_DIR / 'cache'}")}
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    # Redis (often the broker's too) down must not fail requests: misses instead.
    CACHES["default"]["BACKEND"] = "apps.core.cache.TolerantRedisCache"

# --- Auth, i18n, static ------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Password logins lock out per username and client address after repeated failures
# (apps/core/auth_backends.py): MEMORYHUB_LOGIN_FAILURE_LIMIT in MEMORYHUB_LOGIN_LOCKOUT_SECONDS,
# and per address over all usernames after MEMORYHUB_LOGIN_ADDRESS_FAILURE_LIMIT.
AUTHENTICATION_BACKENDS = ["apps.core.auth_backends.LockoutModelBackend"]
MEMORYHUB_LOGIN_FAILURE_LIMIT = env.int("MEMORYHUB_LOGIN_FAILURE_LIMIT", default=5)
MEMORYHUB_LOGIN_LOCKOUT_SECONDS = env.int("MEMORYHUB_LOGIN_LOCKOUT_SECONDS", default=15 * 60)
# Across usernames from one address (password spraying), in the same window.
MEMORYHUB_LOGIN_ADDRESS_FAILURE_LIMIT = env.int("MEMORYHUB_LOGIN_ADDRESS_FAILURE_LIMIT", default=50)
# People log in at /accounts/login/ (Django's auth views) and land on the review pages.
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "review:dashboard"
LOGOUT_REDIRECT_URL = "login"
LANGUAGE_CODE = "en-us"
# Seed 000 reads naive timestamps in the local time zone: a request time without an offset
# is read in TIME_ZONE and stored as UTC (apps/core/fields.py). Everything is stored in UTC.
TIME_ZONE = env.str("MEMORYHUB_TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Forgiving: without collectstatic a missing manifest entry must not turn a 404 into a 500.
    "staticfiles": {"BACKEND": "apps.core.storage.ForgivingManifestStaticFilesStorage"},
}

# A batch of 1,000 messages is legal; beyond this the request is refused with 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("MEMORYHUB_MAX_REQUEST_BYTES", default=64 * 1024 * 1024)

# --- Celery ------------------------------------------------------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="filesystem://")
if CELERY_BROKER_URL.startswith("filesystem://"):
    _queue = DATA_DIR / "broker" / "queue"
    _processed = DATA_DIR / "broker" / "processed"
    _control = DATA_DIR / "broker" / "control"
    for _folder in (_queue, _processed, _control):
        _folder.mkdir(parents=True, exist_ok=True)
    # The same folder in and out: worker and beat are separate processes on one machine.
    # control_folder defaults to ./control in the working directory; keep it in DATA_DIR.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue),
        "data_folder_out": str(_queue),
        "processed_folder": str(_processed),
        "control_folder": str(_control),
        "store_processed": False,
        # The worker's loop checks for shutdown between 2-second polls of the folder; polling
        # every 0.2 s (not 1 s) ends a Ctrl-C within honcho's 5-second grace, with margin.
        "polling_interval": 0.2,
    }
elif _visibility := env.int("CELERY_BROKER_VISIBILITY_TIMEOUT", default=0):
    # Redis: a task whose worker died unacknowledged is delivered again after this many
    # seconds (kombu's default: an hour). Keep it above every task's countdown and run time.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": _visibility}
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
# Late acks: a task whose worker dies is redelivered, and every task is idempotent.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = 300
CELERY_TASK_SOFT_TIME_LIMIT = 240
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Periodic work lives in code; the DatabaseScheduler upserts these by name at beat start.
CELERY_BEAT_SCHEDULE: dict = {
    # Every 5 minutes: enqueue rows of every corpus still without a vector (their
    # after-commit task never ran, or gave up retrying), capped per corpus and run.
    "embed-pending": {
        "task": "search.embed_pending",
        "schedule": 300.0,
        "options": {"expires": 290},
    },
    # Hourly: decay the cached salience of facts, so get_context's preselection stays tight.
    "refresh-fact-salience": {
        "task": "facts.refresh_salience",
        "schedule": 3600.0,
        "options": {"expires": 3500},
    },
    # Every 10 minutes: rolling summaries of recently active sessions whose messages left
    # the window without the append trigger firing (seed 000's cron tick).
    "summarize-due": {
        "task": "lifecycle.summarize_due",
        "schedule": 600.0,
        "options": {"expires": 590},
    },
    # Every 15 minutes: consolidate each agent whose consolidation_interval_hours (6 by
    # default, seed 002) has passed since its last beat consolidation.
    "consolidate-due": {
        "task": "lifecycle.consolidate_due",
        "schedule": 900.0,
        "options": {"expires": 890},
    },
    # Every 10 minutes: compact sessions over their agent's max_history_bytes (seed 000).
    "compact-due": {
        "task": "lifecycle.compact_due",
        "schedule": 600.0,
        "options": {"expires": 590},
    },
    # Every 10 minutes: compress each MEMORY.md over its agent's max_memory_bytes that no
    # compression has seen since its last write (seed 004; the write's own task was lost).
    "compress-due": {
        "task": "lifecycle.compress_due",
        "schedule": 600.0,
        "options": {"expires": 590},
    },
    # Hourly: delete error records past their TTL (seed 000's 90 days, refreshed on hit).
    "expire-error-memory": {
        "task": "learnings.expire_errors",
        "schedule": 3600.0,
        "options": {"expires": 3500},
    },
    # Hourly: SQLite planner statistics (PRAGMA optimize); a no-op on PostgreSQL.
    "optimize-database": {
        "task": "core.optimize_database",
        "schedule": 3600.0,
        "options": {"expires": 3500},
    },
}

# --- memoryhub ---------------------------------------------------------------------------
# get_context's system part, in budget priority order (apps/memory/context/providers.py).
MEMORYHUB_CONTEXT_PROVIDERS = [
    "apps.memory.context.providers.workspace_documents",
    "apps.memory.context.providers.rolling_summary",
    "apps.memory.context.providers.consolidation_recap",
    "apps.memory.context.providers.active_learnings",
    "apps.memory.context.providers.failure_hints",
    "apps.memory.context.providers.salient_facts",
    "apps.memory.context.providers.relevant_facts",
]
# The address printed by `manage.py bootstrap`: follows PORT, as `make run PORT=...` serves.
MEMORYHUB_PUBLIC_URL = env.str(
    "MEMORYHUB_PUBLIC_URL", default=f"http://127.0.0.1:{env.int('PORT', default=8000)}"
).rstrip("/")
# Largest batch of messages in one append.
MEMORYHUB_MAX_BATCH_MESSAGES = env.int("MEMORYHUB_MAX_BATCH_MESSAGES", default=1000)
# Rate limits (apps/core/throttle.py, counted in the shared cache). Wrong API keys per client
# address and minute, on /api/v1 and /mcp: over it, every key from that address gets 429 +
# Retry-After until the minute is up. Requests per API key and minute (0: no limit).
MEMORYHUB_AUTH_FAILURES_PER_MINUTE = env.int("MEMORYHUB_AUTH_FAILURES_PER_MINUTE", default=30)
MEMORYHUB_KEY_RATE_PER_MINUTE = env.int("MEMORYHUB_KEY_RATE_PER_MINUTE", default=0)
# How many reverse proxies in front of the app append to X-Forwarded-For; the client address
# is the entry the outermost of them wrote. 0: the header is ignored (it could be forged) and
# the address is REMOTE_ADDR. Set it to the real count behind a proxy (docs/deploy.md).
MEMORYHUB_TRUSTED_PROXIES = env.int("MEMORYHUB_TRUSTED_PROXIES", default=0)
# How often an API key's last_used_at is written: once a minute is plenty and keeps every
# request from becoming a write.
MEMORYHUB_KEY_TOUCH_SECONDS = env.int("MEMORYHUB_KEY_TOUCH_SECONDS", default=60)

# The embedding pipeline (apps/search/embedding.py), the same for every corpus: rows per
# batch (one embedder call, one UPDATE) and the characters a batch may hold (a remote API
# limits a request's tokens; MiniLM pads each of its model batches to the longest text),
# attempts before a row waits for `manage.py reembed`, the first retry delay (doubling each
# attempt), and rows the beat sweep enqueues per corpus and run (also the rows one agent's
# sweep takes before it queues itself again behind other agents').
MEMORYHUB_EMBEDDING_BATCH_SIZE = env.int("MEMORYHUB_EMBEDDING_BATCH_SIZE", default=256)
MEMORYHUB_EMBEDDING_BATCH_CHARS = env.int("MEMORYHUB_EMBEDDING_BATCH_CHARS", default=200_000)
MEMORYHUB_EMBEDDING_MAX_ATTEMPTS = env.int("MEMORYHUB_EMBEDDING_MAX_ATTEMPTS", default=5)
MEMORYHUB_EMBEDDING_RETRY_SECONDS = env.float("MEMORYHUB_EMBEDDING_RETRY_SECONDS", default=30.0)
MEMORYHUB_EMBEDDING_SWEEP_LIMIT = env.int("MEMORYHUB_EMBEDDING_SWEEP_LIMIT", default=2000)
# An agent's sweep starts no batch after this many seconds and queues itself again: the
# task's soft time limit is 240 s, and one batch may take the embedder's timeout (30 s) more.
MEMORYHUB_EMBEDDING_SWEEP_SECONDS = env.float("MEMORYHUB_EMBEDDING_SWEEP_SECONDS", default=120.0)
# A provider (embedder, LLM) called inside an open transaction: "log" a warning with the
# stack, "raise" (the test suite), or "off" (apps/providers/guard.py).
MEMORYHUB_PROVIDER_GUARD = env.str("MEMORYHUB_PROVIDER_GUARD", default="log")
# /healthz, in order: each returns (key, body, ok). Only a failing check named in
# MEMORYHUB_HEALTH_CRITICAL answers 503; any other failure answers 200 "degraded", so a load
# balancer keeps a node that can still serve (keyword search, stored appends).
MEMORYHUB_HEALTH_CHECKS = [
    "apps.core.health_checks.database_report",
    "apps.core.health_checks.broker_report",
    "apps.providers.provider_health.providers_report",
    "apps.search.embedding_health.embedding_backlog_report",
    *(["apps.core.replicas.replicas_report"] if MEMORYHUB_REPLICAS else []),
]
MEMORYHUB_HEALTH_CRITICAL = ["database"]
# Provider probes (apps/providers/provider_health.py): each answer is cached this long, so /healthz
# stays cheap and a down provider is not hammered; each probe waits at most the timeout.
MEMORYHUB_HEALTH_PROBE_SECONDS = env.int("MEMORYHUB_HEALTH_PROBE_SECONDS", default=30)
MEMORYHUB_HEALTH_PROBE_TIMEOUT = env.float("MEMORYHUB_HEALTH_PROBE_TIMEOUT", default=3.0)
# The lifecycle (apps/lifecycle): how long an automatic trigger waits before it may enqueue
# the same session's task again, and how long a lease outlives the LLM call it covers (a
# worker that dies mid-call frees it after that).
MEMORYHUB_LIFECYCLE_DEBOUNCE_SECONDS = env.int("MEMORYHUB_LIFECYCLE_DEBOUNCE_SECONDS", default=30)
MEMORYHUB_LIFECYCLE_LEASE_MARGIN_SECONDS = env.float(
    "MEMORYHUB_LIFECYCLE_LEASE_MARGIN_SECONDS", default=30.0
)
# Search: the longest query accepted, in bytes.
MEMORYHUB_SEARCH_MAX_QUERY_BYTES = env.int("MEMORYHUB_SEARCH_MAX_QUERY_BYTES", default=4096)

_LLM_URL = env.str("MEMORYHUB_LLM_URL", default="")
# The LLM's context window in tokens: prompt plus max_tokens must fit it (8192 when unknown).
MEMORYHUB_LLM_CONTEXT_TOKENS = env.int("MEMORYHUB_LLM_CONTEXT_TOKENS", default=8192)
# Unset: the server's default. Not 0: greedy decoding makes a small local model repeat
# itself until max_tokens (SmolLM2-135M's summaries did; docs/providers.md).
_LLM_TEMPERATURE = env.str("MEMORYHUB_LLM_TEMPERATURE", default="").strip()
# Background lifecycle calls' time limit: a CPU model needs minutes, not seed 004's 30 s.
MEMORYHUB_LLM_BACKGROUND_TIMEOUT = env.float("MEMORYHUB_LLM_BACKGROUND_TIMEOUT", default=600.0)
MEMORYHUB_PROVIDERS = {
    "embedding": (
        {
            "CLASS": "apps.providers.embeddings.openai.OpenAIEmbedder",
            "CONFIG": {
                "URL": env.str("MEMORYHUB_EMBEDDING_URL"),
                # Required: vectors are labelled with this name, so it must be the real model.
                "MODEL": env.str("MEMORYHUB_EMBEDDING_MODEL"),
                "API_KEY": env.str("MEMORYHUB_EMBEDDING_API_KEY", default=""),
                "DIMENSIONS": 384,
                "TIMEOUT": env.float("MEMORYHUB_EMBEDDING_TIMEOUT", default=30.0),
            },
        }
        if env.str("MEMORYHUB_EMBEDDING_URL", default="")
        else {
            "CLASS": env.str(
                "MEMORYHUB_EMBEDDER", default="apps.providers.embeddings.minilm.MiniLMEmbedder"
            ),
            "CONFIG": {
                # 0: every core this process may use (one worker per machine); with
                # several workers or a busy web process on the machine, cores / processes.
                "THREADS": env.int("MEMORYHUB_EMBEDDING_THREADS", default=0),
                "BATCH_SIZE": 32,
                # onnxruntime's busy-waiting (docs/providers.md "Spinning"); off where
                # the cores are shared with other busy processes.
                "SPIN": env.bool("MEMORYHUB_EMBEDDING_SPIN", default=True),
            },
        }
    ),
    "llm": (
        {
            "CLASS": "apps.providers.llm.openai.OpenAIChat",
            "CONFIG": {
                "URL": _LLM_URL,
                "MODEL": env.str("MEMORYHUB_LLM_MODEL", default="gpt-4o-mini"),
                "API_KEY": env.str("MEMORYHUB_LLM_API_KEY", default=""),
                "TIMEOUT": env.float("MEMORYHUB_LLM_TIMEOUT", default=30.0),
                # Per-call bound on output tokens when the caller gives none.
                "MAX_TOKENS": env.int("MEMORYHUB_LLM_MAX_TOKENS", default=1024),
                "TEMPERATURE": float(_LLM_TEMPERATURE) if _LLM_TEMPERATURE else None,
                # auto negotiates json_schema > json_object_schema > json_object > prompt.
                "STRUCTURED": env.str("MEMORYHUB_LLM_STRUCTURED", default="auto"),
            },
        }
        if _LLM_URL
        else None
    ),
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("MEMORYHUB_LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "INFO"}},
}
