"""memoryhub: durable memory for LLM agents.

The embedded default needs SQLite extensions (sqlite-vec, FTS5). pyenv and python.org
builds of CPython lack `enable_load_extension`, so swap in `sqlean` (a drop-in sqlite3)
before Django imports its SQLite backend.

numpy's OpenBLAS is limited to one thread before numpy is imported: left to itself it starts
a thread per core for every matrix product, and on a small box shared with the database and
onnxruntime those threads wait on each other, so the rerank stage's 3,500 x 64 product took
6 ms instead of 0.06 (issue 24). Scale with processes, as the embedder does (docs/providers.md).
"""

import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

try:
    import sqlite3 as _sqlite3

    if not hasattr(_sqlite3.Connection, "enable_load_extension"):
        raise ImportError("sqlite3 cannot load extensions")
except ImportError:  # pragma: no cover - depends on the Python build
    import sqlean

    sys.modules["sqlite3"] = sqlean
    sys.modules["sqlite3.dbapi2"] = sqlean.dbapi2

from memoryhub.celery import app as celery_app

__all__ = ["celery_app"]
