"""No provider I/O inside a database transaction.

An embedding request, an ONNX inference or an LLM call can take seconds; made while a
transaction is open it holds row locks (PostgreSQL) or the whole write lock (SQLite) for
that long. Every provider calls `check_outside_transaction()` before its work. The setting
`MEMORYHUB_PROVIDER_GUARD` decides what a violation does: "raise" (the test suite), "log"
(the default) or "off".
"""

import logging

from django.conf import settings
from django.db import connections

logger = logging.getLogger(__name__)


class ProviderCallInTransaction(RuntimeError):
    """A provider was called while the calling code held an open atomic block."""


def _open_atomic_blocks() -> int:
    """Atomic blocks opened by the code on this thread's connections.

    Django's TestCase (and so pytest-django's `db`) wraps each test in atomic blocks marked
    `_from_testcase`; those are the test's, not the code's, and do not count.
    """
    return sum(
        1
        for connection in connections.all(initialized_only=True)
        for block in connection.atomic_blocks
        if not getattr(block, "_from_testcase", False)
    )


def check_outside_transaction(what: str) -> None:
    """Raise or log (per MEMORYHUB_PROVIDER_GUARD) when called inside a transaction."""
    mode = getattr(settings, "MEMORYHUB_PROVIDER_GUARD", "log")
    if mode == "off":
        return
    depth = _open_atomic_blocks()
    if not depth:
        return
    message = f"{what} called inside {depth} open atomic block(s): compute first, then write"
    if mode == "raise":
        raise ProviderCallInTransaction(message)
    logger.warning(message, stack_info=True)
