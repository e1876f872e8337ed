"""Input checks shared by the fact write paths; each raises with the caller's `loc`."""

import re

from apps.agents.models import Agent
from apps.core.errors import InvalidInput, PayloadTooLarge
from apps.core.validation import text_problem

MAX_KEY_CHARS = 200
MAX_CATEGORY_CHARS = 100
_CATEGORY = re.compile(r"^[a-z0-9][a-z0-9 _.\-/]*$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def clean_value(agent: Agent, value: object, *, loc: list[str | int]) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput("content must not be empty", loc=loc)
    problem = text_problem(value)  # the API checks bodies already; MCP calls come here
    if problem:
        raise InvalidInput(f"content {problem}", loc=loc)
    size = len(value.encode("utf-8"))
    if size > agent.config.max_content_bytes:
        raise PayloadTooLarge(
            f"content is {size} bytes; the limit is {agent.config.max_content_bytes}", loc=loc
        )
    return value.strip()


def clean_category(name: object, *, loc: list[str | int]) -> str:
    """Categories are lower-cased; letters, digits, space, '_', '.', '-', '/'."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("category must not be empty", loc=loc)
    name = " ".join(name.strip().lower().split())
    if len(name) > MAX_CATEGORY_CHARS or not _CATEGORY.match(name):
        raise InvalidInput(
            f"category must be at most {MAX_CATEGORY_CHARS} of a-z 0-9 space _ . - /", loc=loc
        )
    return name


def clean_key(key: object, *, loc: list[str | int]) -> str:
    if not isinstance(key, str) or not key.strip():
        raise InvalidInput("key must not be empty", loc=loc)
    key = key.strip()
    if len(key) > MAX_KEY_CHARS or _CONTROL.search(key):
        raise InvalidInput(
            f"key must be at most {MAX_KEY_CHARS} characters, no control characters", loc=loc
        )
    return key


def clean_importance(value: float | None, default: float, *, loc: list[str | int]) -> float:
    if value is None:
        return default
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInput("importance must be between 0 and 1", loc=loc)
    return float(value)
