"""Tolerant parsing of the JSON objects LLMs are asked for (seed 004's three tiers).

Models wrap JSON in markdown fences, surround it with prose, put raw newlines inside
strings, or stop mid-answer; each tier recovers more of those cases than the one before.
"""

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_FIELDS = ("history_entry", "memory_update")

# Opening fence with an optional language tag; the closing fence may be missing when the
# answer was cut off.
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5|javascript)?[ \t]*\r?\n?(.*?)(?:```|\Z)", re.S)
# Starting points tried by tier 2; bounds the work on long answers full of braces.
_MAX_OBJECT_STARTS = 64


def _loads_object(text: str) -> dict[str, Any] | None:  # Any: JSON values (json.loads' own type)
    try:
        # strict=False accepts raw control characters (newlines, tabs) inside strings.
        value = json.loads(text, strict=False)
    except (json.JSONDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _strip_fences(text: str) -> str:
    match = _FENCE.search(text)
    return (match.group(1) if match else text).strip()


def _matching_brace(text: str, start: int) -> int | None:
    """Index of the `}` closing the `{` at `start`, skipping braces inside JSON strings."""
    depth = 0
    in_string = escaped = False
    for i in range(start, len(text)):
        char = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _balanced_objects(text: str) -> Iterator[str]:
    start = text.find("{")
    for _ in range(_MAX_OBJECT_STARTS):
        if start == -1:
            return
        end = _matching_brace(text, start)
        if end is None:
            # Cut off: an object nested inside would be a fragment, not the answer.
            return
        yield text[start : end + 1]
        # Continue after the block, not inside it, for the same reason.
        start = text.find("{", end + 1)


def _unescape(raw: str) -> str:
    try:
        return json.loads(f'"{raw}"', strict=False)
    except json.JSONDecodeError:
        # An invalid escape such as \q: keep the text, undoing only the common escapes.
        return raw.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


# Any: JSON values (json.loads' own type)
def _extract_fields(text: str, fields: Sequence[str]) -> dict[str, Any] | None:
    found: dict[str, Any] = {}  # Any: JSON values (json.loads' own type)
    for field in fields:
        pattern = re.compile(
            r'"' + re.escape(field) + r'"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(null)\b)', re.S
        )
        match = pattern.search(text)
        if match:
            found[field] = None if match.group(2) else _unescape(match.group(1))
    return found or None


@dataclass(frozen=True)
class Parsed:
    """What an answer held, and the tier (1, 2 or 3) that read it."""

    value: dict[str, Any]  # Any: JSON values (json.loads' own type)
    tier: int


def parse_llm_json_tiered(text: str, fields: Sequence[str] = DEFAULT_FIELDS) -> Parsed | None:
    """The JSON object in an LLM answer with the tier that found it, or None.

    Tiers: (1) the whole answer, fences stripped; (2) the first balanced {...} block that
    parses; (3) the string (or null) values of `fields`, found one by one.
    """
    if not text or not text.strip():
        return None
    stripped = _strip_fences(text)
    parsed = _loads_object(stripped)
    if parsed is not None:
        return Parsed(parsed, 1)
    for source in dict.fromkeys((stripped, text)):  # the fenced part first, then all
        for candidate in _balanced_objects(source):
            parsed = _loads_object(candidate)
            if parsed is not None:
                return Parsed(parsed, 2)
    found = _extract_fields(text, fields)
    return Parsed(found, 3) if found is not None else None


# Any: JSON values (json.loads' own type)
def parse_llm_json(text: str, fields: Sequence[str] = DEFAULT_FIELDS) -> dict[str, Any] | None:
    """The JSON object in an LLM answer, or None when nothing parses (see the tiered form)."""
    parsed = parse_llm_json_tiered(text, fields)
    return parsed.value if parsed is not None else None


def extract_all(text: str, field: str) -> list[str]:
    """Every string value of `field` in `text`, in order: tier 3 for a list of objects."""
    pattern = re.compile(r'"' + re.escape(field) + r'"\s*:\s*"((?:[^"\\]|\\.)*)"', re.S)
    return [_unescape(m.group(1)) for m in pattern.finditer(text or "")]
