"""What MemoryHubStore sends and how it reads the answers: the entries calls of an op acting
for one user (or none), and the pure steps between (an item's value, who sees an entry,
a batch's last puts, the namespace prefix test)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from langgraph.store.base import Op, PutOp

from memoryhub_client.errors import NotFound
from memoryhub_client.langgraph.vectors import ServerIndex

# The keyword search's largest page (GET /entries/search's limit).
SEARCH_WINDOW = 200
# GET /entries' largest page: a store of a few hundred items is listed in one request.
LIST_PAGE = 500


def item_value(content: str) -> dict[str, Any] | None:
    try:
        value = json.loads(content)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def search_entries(
    hub: Any, *, query: str, user: str | None, prefix: str = "", mode: str | None = None
) -> Any:
    """The server's search of the entries under `prefix` (a name prefix), best first."""
    return hub.entries.search(
        query, limit=SEARCH_WINDOW, user=user, prefix=prefix or None, mode=mode
    )


def list_entries(hub: Any, user: str | None, folder: str = "", content: bool = False) -> Any:
    """The entries `user` sees whose names start with `folder`, with content when asked."""
    return hub.entries.list(limit=LIST_PAGE, user=user, prefix=folder or None, content=content)


def get_or_none(hub: Any, name: str, user: str | None) -> Any:
    try:
        return hub.entries.get(name, user=user)
    except NotFound:
        return None


def visible(entry: Any, user: str | None) -> bool:
    """Whether an op acting for `user` sees this entry: the agent's, or `user`'s own (the
    server's rule too: checked here as well, so an item is never another user's)."""
    return entry.user is None or entry.user == user


def check_owner(entry: Any, owner: str | None) -> None:
    """ValueError when memoryhub stored a put's entry as someone else's than the op's user:
    a key bound to one end user writes as them whatever the call names, and the store would
    not read the item back in its namespace."""
    if entry.user != owner:
        stored = f"user {entry.user!r}'s" if entry.user else "the agent's"
        meant = f"user {owner!r}'s" if owner else "the agent's"
        raise ValueError(
            f"memoryhub stored {entry.name!r} as {stored}, not as {meant}: with a key bound "
            f"to one user, give the store that user (MemoryHubStore(user=...))"
        )


def content_of(op: PutOp, server: ServerIndex | None = None) -> tuple[str, bool | list[str]]:
    """A put's entry content (its value as JSON) and `index`: with a server-side index the
    JSON paths embedded (ServerIndex.put_index), else whether it is searched."""
    value = op.value
    assert value is not None  # a delete is handled before
    content = json.dumps(dict(value), ensure_ascii=False)
    return content, server.put_index(op.index) if server else op.index is not False


def last_puts(ops: list[Op]) -> list[PutOp]:
    """The batch's puts, one per item (the last), in the order the items first appear."""
    last: dict[tuple[tuple[str, ...], str], PutOp] = {}
    for op in ops:
        if isinstance(op, PutOp):
            last[(tuple(op.namespace), op.key)] = op
    return list(last.values())


def sort_time(at: datetime) -> float:
    return at.timestamp()


def within(namespace: tuple[str, ...], prefix: tuple[str, ...]) -> bool:
    return tuple(namespace[: len(prefix)]) == tuple(prefix)
