"""The memory lifecycle: every LLM-driven step, and its fallbacks, in one place.

summary (seed 000's rolling summary), compaction (seeds 000 and 003: archive + marker),
consolidation (seed 004: HISTORY and MEMORY.md), compression (seed 004: MEMORY.md over
max_memory_bytes), flush and write-then-compact (seed 001's context manager), reset
(consolidate, archive what is left, delete). Each step calls the LLM outside any
transaction, then locks the agent and writes; each logs a Run. Summary, compaction,
consolidation and flush fill in one template, step.LifecycleStep, run by step.run_step.
"""

from apps.lifecycle.services.compaction import (
    compaction_due,
    session_compact,
    session_write_then_compact,
)
from apps.lifecycle.services.compress import compression_due, memory_compress
from apps.lifecycle.services.consolidation import consolidation_due, session_consolidate
from apps.lifecycle.services.flush import session_flush
from apps.lifecycle.services.history import history_files, history_import
from apps.lifecycle.services.reset import ResetOutcome, session_reset
from apps.lifecycle.services.step import Busy
from apps.lifecycle.services.summary import pending_summary, session_summarize, summary_due

__all__ = [
    "Busy",
    "ResetOutcome",
    "compaction_due",
    "compression_due",
    "consolidation_due",
    "history_files",
    "history_import",
    "memory_compress",
    "pending_summary",
    "session_compact",
    "session_consolidate",
    "session_flush",
    "session_reset",
    "session_summarize",
    "session_write_then_compact",
    "summary_due",
]
