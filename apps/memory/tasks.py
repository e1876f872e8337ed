"""The memory tools and get_context run in the request; nothing is queued here."""
