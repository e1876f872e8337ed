"""Background embedding of messages (search issue). Filled in by the search work."""

import uuid


def schedule_embedding(*, message_ids: list[uuid.UUID]) -> None:
    """Enqueue embedding of the given messages once the current transaction commits."""
