"""Entries: entry_add, entry_rename, entry_alias, entry_write, entry_remove, entry_search.
`name` is the entry's name or alias, as in the API's path."""

from collections.abc import Callable
from typing import Any

from ninja import Schema
from pydantic import Field

from apps.agents.schemas import ScopedWrite
from apps.api import entries as entries_api
from apps.api.registry import Endpoint
from apps.core.schemas import Input
from apps.entries.schemas import (
    EntryAliasIn,
    EntryIn,
    EntryRename,
    EntryWrite,
    SearchQuery,
)
from apps.mcp.tools import words
from apps.mcp.tools.base import READ, About, Tool, on_path, part, whole, write

NAME = Field(..., description=words.ENTRY_NAME)
NEW_NAME = "a relative path such as notes/trip.md"


class EntryRef(Input):
    name: str = NAME


class ScopedRef(EntryRef, ScopedWrite):
    """An entry of the agent's, or (with `user`) of one of its users."""


class RenameIn(ScopedRef):
    new_name: str = Field(..., description=f"The new name ({NEW_NAME}).")


class AliasIn(EntryAliasIn):
    name: str = NAME


class WriteIn(EntryWrite):
    name: str = NAME


# The owner of an existing entry: the words of every tool on one.
_OWNER = {"user": words.USER_ENTRY, "scope": words.SCOPE_ENTRY}


def _named(
    name: str,
    endpoint: Endpoint,
    params: type[Schema],
    body: Callable[[Any], Schema],  # Any: the tool's arguments (Tool.call says why)
    about: About,
) -> Tool:
    """A tool over /entries/{name}...: `name` goes in the path, body(args) is the body."""
    return on_path(name, endpoint, params, about, path="name", body=body)


ADD = About(
    title="Create a note",
    brief=(
        "Create a note: a named text such as projects/trip.md (MEMORY.md and USER.md are notes "
        "too). Fails if the name is taken; then use entry_write. Returns the entry."
    ),
    brief_omits=("kind", "index"),
    description="""
        Create an entry: a named text in your memory, such as notes, a list or a plan.
        Names look like file paths (projects/trip.md). The workspace documents are entries
        too: MEMORY.md, USER.md, SOUL.md and AGENTS.md appear in every get_context. Fails
        when the name is already an entry's name or alias; to change an entry, use
        entry_write.

        Returns the entry: `name`, `aliases`, `kind`, `content`, its size in `bytes`, and
        times.
        """,
    # A repeat finds the name taken and changes nothing.
    hints=write(destructive=False, idempotent=True),
    docs={
        "user": words.USER_WRITES,
        "scope": words.SCOPE_WRITES,
        "name": f"The entry's name, {NEW_NAME}, unique among its owner's entries.",
        "content": "The text (default: empty).",
        "kind": "note (the default) or archive (a record kept for reference, like those "
        "written when a session is compacted).",
    },
)

RENAME = About(
    title="Rename a note",
    description="""
        Give an entry a new name. Fails when the new name is already a name or an alias. An
        archive entry keeps its old name as an alias, so what refers to it still finds it;
        a note's old name stops working.

        Returns the entry.
        """,
    hints=write(destructive=False, idempotent=True),
    docs=_OWNER,
)

ALIAS = About(
    title="Give a note another name",
    description="""
        Give an entry an extra name, an alias: every entry tool then finds it by either
        name. Fails when the alias is already a name or an alias.

        Returns the `alias` and the `entry` (without its content).
        """,
    hints=write(destructive=False, idempotent=True),
    docs={**_OWNER, "alias": f"The extra name ({NEW_NAME})."},
)

WRITE = About(
    title="Replace a note's text",
    brief=(
        "Replace the whole text of an existing note, e.g. to update MEMORY.md: include "
        "everything that should stay. Returns the entry."
    ),
    description="""
        Replace the whole text of an existing entry, for example to update MEMORY.md or a
        plan. The entry then holds the new text alone, so include everything that should
        stay; the previous text is kept in the entry's change history. Fails when there is
        no such entry (create it with entry_add), unless `create` is true.

        Returns the entry.
        """,
    brief_omits=("create",),
    hints=write(destructive=True, idempotent=True),
    docs={
        **_OWNER,
        "content": "The new, complete text of the entry.",
        "create": "true: when there is no such entry, create it (a note) with this text.",
    },
)

REMOVE = About(
    title="Delete a note",
    description="""
        Delete an entry with all its aliases. Its text stays in the change history, but no
        tool finds the entry any more.

        Returns an empty object.
        """,
    hints=write(destructive=True, idempotent=True),
    docs=_OWNER,
)

SEARCH = About(
    title="Search notes",
    description="""
        Search your entries (notes, archives and the workspace documents) for words in their
        name and text, best match first. Aliases are not searched.

        Returns `items`, each with its `score` and the whole `entry`.
        """,
    hints=READ,
    docs={
        "user": words.USER_READS,
        "all_users": words.ALL_USERS,
        "q": "The words to look for.",
        "limit": "How many entries to return at most.",
    },
)

TOOLS = [
    whole("entry_add", entries_api.add_entry, EntryIn, ADD),
    _named(
        "entry_rename",
        entries_api.rename_entry,
        RenameIn,
        lambda args: EntryRename(name=args.new_name, user=args.user, scope=args.scope),
        RENAME,
    ),
    _named(
        "entry_alias",
        entries_api.alias_entry,
        AliasIn,
        lambda args: part(args, EntryAliasIn),
        ALIAS,
    ),
    _named(
        "entry_write",
        entries_api.write_entry,
        WriteIn,
        lambda args: part(args, EntryWrite),
        WRITE,
    ),
    on_path(
        "entry_remove",
        entries_api.remove_entry,
        ScopedRef,
        REMOVE,
        path="name",
        query=ScopedWrite,
    ),
    whole("entry_search", entries_api.search_entries, SearchQuery, SEARCH, into="query"),
]
