"""Entry names: what is valid, and which names are the workspace documents (seeds 001, 004).

A name doubles as a path in an exported workspace folder, so it must be a safe relative path:
segments joined by '/', no empty, '.' or '..' segment, no backslash, no control character.
"""

import re
from datetime import date

from apps.core.errors import InvalidInput

MAX_NAME_CHARS = 200
MAX_NAME_BYTES = 255

SOUL = "SOUL.md"
AGENTS = "AGENTS.md"
USER = "USER.md"
MEMORY = "MEMORY.md"
HEARTBEAT = "HEARTBEAT.md"
RESERVED_DOCUMENTS = (AGENTS, SOUL, USER, MEMORY, HEARTBEAT)
LEARNINGS_ERRORS = "learnings/errors.md"
LEARNINGS_CORRECTIONS = "learnings/corrections.md"
LEARNINGS = (LEARNINGS_ERRORS, LEARNINGS_CORRECTIONS)
# Export metadata lives here; no entry may take a name under it.
META_DIR = ".memoryhub"
# Names that are also API routes under /entries, so could never be addressed by path.
ROUTE_NAMES = frozenset({"search"})

_DAILY_LOG = re.compile(r"^memory/\d{4}-\d{2}-\d{2}\.md$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def daily_log_name(day: date) -> str:
    """`memory/YYYY-MM-DD.md`, seed 001's daily session log."""
    return f"memory/{day.isoformat()}.md"


def is_document(name: str) -> bool:
    """Workspace documents: the reserved names, daily logs and learnings files."""
    return name in RESERVED_DOCUMENTS or name in LEARNINGS or bool(_DAILY_LOG.match(name))


def validate_name(name: object, *, loc: list[str | int]) -> str:
    """The name unchanged if it is a safe entry name; raise InvalidInput otherwise."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("name must not be empty", loc=loc)
    if len(name) > MAX_NAME_CHARS or len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise InvalidInput(
            f"name is longer than {MAX_NAME_CHARS} characters or {MAX_NAME_BYTES} bytes", loc=loc
        )
    if _CONTROL.search(name):
        raise InvalidInput("name must not contain NUL, newlines or control characters", loc=loc)
    if "\\" in name:
        raise InvalidInput("name must not contain a backslash", loc=loc)
    if name != name.strip():
        raise InvalidInput("name must not start or end with whitespace", loc=loc)
    if name.startswith("/"):
        raise InvalidInput("name must be a relative path (no leading '/')", loc=loc)
    if ".." in name:
        raise InvalidInput("name must not contain '..'", loc=loc)
    segments = name.split("/")
    if any(not s or s == "." for s in segments):
        raise InvalidInput("name must not have empty or '.' path segments", loc=loc)
    if segments[0] == META_DIR:
        raise InvalidInput(f"names under '{META_DIR}/' are reserved", loc=loc)
    if name in ROUTE_NAMES or (len(segments) > 1 and segments[-1] == "aliases"):
        # /entries/search and /entries/<name>/aliases are API routes.
        raise InvalidInput(f"'{name}' is reserved by the API", loc=loc)
    return name


def parent_paths(name: str) -> list[str]:
    """'a/b/c.md' -> ['a', 'a/b']: the folders an exported file needs."""
    segments = name.split("/")
    return ["/".join(segments[:i]) for i in range(1, len(segments))]
