"""Input checks shared by the fact write paths; each raises with the caller's `loc`."""

import re

from apps.agents.models import Agent
from apps.core.errors import InvalidInput
from apps.core.validation import clean_text

MAX_KEY_CHARS = 200
MAX_CATEGORY_CHARS = 100
_CATEGORY = re.compile(r"^[a-z0-9][a-z0-9 _.\-/]*$")


def clean_value(agent: Agent, value: object, *, loc: list[str | int]) -> str:
    return clean_text(
        value, label="content", loc=loc, required=True, max_bytes=agent.config.max_content_bytes
    )


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
    return clean_text(key, label="key", loc=loc, required=True, max_chars=MAX_KEY_CHARS)


def clean_importance(value: float | None, default: float, *, loc: list[str | int]) -> float:
    if value is None:
        return default
    if not 0.0 <= float(value) <= 1.0:
        raise InvalidInput("importance must be between 0 and 1", loc=loc)
    return float(value)
