"""Celery task names shared across layers, so a lower app can announce work that a higher
app consumes without importing it (import-linter: imports go one way, down).

A domain app sends by name (`celery.signature(NAME, args=...).delay()`: the registered task
when this process has it, honouring eager mode; the broker by name otherwise); the app that
owns the task registers it under the same constant.
"""

# Seed 004: MEMORY.md over its agent's max_memory_bytes. Sent by apps.entries after a write;
# consumed by apps.lifecycle (tasks.compress_task). Argument: the agent's id.
COMPRESS_MEMORY = "lifecycle.compress"


def compress_debounce_key(agent_id: int) -> str:
    """One compression queued per agent until the task starts (both sides use this key)."""
    return f"mh:lc:compress:{agent_id}"
