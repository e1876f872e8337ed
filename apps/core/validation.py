"""Input checks every API request passes once, before any schema or database sees it, and
the checks of single values that every write path shares (free-form JSON, text).

PostgreSQL text cannot hold NUL, and a lone UTF-16 surrogate cannot be encoded at all, so
both are refused at the edge with the offending field named; so are numbers JSON cannot
round-trip (NaN, Infinity, overflowing floats, integers past 64 bits).
"""

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from apps.core.errors import BadRequest, InvalidInput, PayloadTooLarge

# Whole-body nesting bound: keeps json.loads far from the interpreter's recursion limit.
# Free-form fields have their own, lower, bound (check_json_limits).
MAX_BODY_DEPTH = 64
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
# Free-form JSON a client stores with a row (metadata, tool calls, arguments, context).
MAX_JSON_BYTES = 64 * 1024
MAX_JSON_DEPTH = 20

_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")
# Names and keys are one line of printable text.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# After strict UTF-8 decoding, NUL and surrogates can only come from these JSON escapes
# (strict json.loads refuses raw control characters), so most bodies skip the walk.
_BAD_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class _Rejected:
    """Stands in for a number the hooks refused, so the walk can say where it was."""

    def __init__(self, message: str) -> None:
        self.message = message


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as text (NUL or lone surrogate), or None."""
    match = _BAD_CHAR.search(value)
    if match is None:
        return None
    if match.group() == "\x00":
        return "must not contain NUL characters"
    return "must not contain lone UTF-16 surrogates"


def has_control(value: str) -> bool:
    """Whether `value` holds a control character (NUL, newline, tab, DEL, ...)."""
    return _CONTROL.search(value) is not None


def clean_text(
    value: object,
    *,
    label: str,
    loc: Sequence[str | int],
    required: bool = False,
    max_bytes: int | None = None,
    max_chars: int | None = None,
) -> str:
    """`value` stripped (None is ""), if it is text a row can store; else InvalidInput, or
    PayloadTooLarge past `max_bytes` of UTF-8, each message led by `label`. With
    `max_chars`, a name: at most that many characters, no control characters."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise InvalidInput(f"{label} must be a string", loc=loc)
    if required and not value.strip():
        raise InvalidInput(f"{label} must not be empty", loc=loc)
    problem = text_problem(value)  # the API checks bodies already; other callers come here
    if problem:
        raise InvalidInput(f"{label} {problem}", loc=loc)
    size = len(value.encode("utf-8"))
    if max_bytes is not None and size > max_bytes:
        raise PayloadTooLarge(f"{label} is {size} bytes; the limit is {max_bytes}", loc=loc)
    value = value.strip()
    if max_chars is not None and (len(value) > max_chars or has_control(value)):
        raise InvalidInput(
            f"{label} must be at most {max_chars} characters, no control characters", loc=loc
        )
    return value


# Any: any JSON value (json.loads' own type)
def check_json_limits(value: Any, *, loc: Sequence[str | int] | None = None) -> None:
    """Raise InvalidInput when `value` nests deeper than MAX_JSON_DEPTH, PayloadTooLarge when
    it is over MAX_JSON_BYTES serialised (json_size). Depth first: serialising a deeper
    value could reach the recursion limit."""
    depth = json_depth(value)
    if depth > MAX_JSON_DEPTH:
        raise InvalidInput(
            f"JSON is nested {depth} levels deep; the limit is {MAX_JSON_DEPTH}", loc=loc
        )
    size = json_size(value)
    if size > MAX_JSON_BYTES:
        raise PayloadTooLarge(
            f"JSON is {size} bytes serialised; the limit is {MAX_JSON_BYTES}", loc=loc
        )


def printable(value: str) -> str:
    """`value` with NUL and surrogates written as \\uXXXX, safe to echo in a `loc`."""
    return _BAD_CHAR.sub(lambda m: f"\\u{ord(m.group()):04x}", value)


def parse_json_body(raw: bytes) -> Any:  # Any: json.loads' own type
    """The body as JSON, or InvalidInput naming the first offending field under `body`.
    Bytes that are not UTF-8 JSON raise ValueError (the API answers 400)."""
    text = raw.decode("utf-8")
    if _too_deep(text, MAX_BODY_DEPTH):
        raise InvalidInput(f"JSON is nested deeper than {MAX_BODY_DEPTH} levels", loc=["body"])
    rejected: list[_Rejected] = []

    def reject(message: str) -> _Rejected:
        rejected.append(_Rejected(message))
        return rejected[-1]

    def parse_int(token: str) -> int | _Rejected:
        # Checked on the text first: int() of a few thousand digits raises on its own.
        if len(token.lstrip("-")) > 19 or not MIN_INT <= int(token) <= MAX_INT:
            return reject("integer is out of range (64-bit)")
        return int(token)

    def parse_float(token: str) -> float | _Rejected:
        value = float(token)
        return value if math.isfinite(value) else reject("number is out of range")

    def parse_constant(token: str) -> _Rejected:
        return reject(f"{token} is not a JSON number")

    data = json.loads(
        text, parse_int=parse_int, parse_float=parse_float, parse_constant=parse_constant
    )
    if rejected or _BAD_ESCAPE.search(text):
        problem = _first_problem(data)
        if problem is not None:
            path, message = problem
            raise InvalidInput(message, loc=["body", *path])
    return data


# Any: any JSON value (json.loads' own type)
def check_parsed(data: Any, *, loc: list[str | int]) -> None:
    """Raise InvalidInput naming the first bad value of already-parsed JSON (MCP tool
    arguments): the body rules, with NaN, infinities and 64-bit overflow as values."""
    problem = _first_problem(data)
    if problem is not None:
        path, message = problem
        raise InvalidInput(message, loc=[*loc, *path])


def check_params(params: Iterable[tuple[str, str]], *, source: str) -> None:
    """Raise BadRequest naming the first query/path parameter holding NUL or a surrogate."""
    for name, value in params:
        for text in (name, value):
            problem = isinstance(text, str) and text_problem(text)
            if problem:
                shown = printable(name)
                raise BadRequest(f"{shown} {problem}", loc=[source, shown])


# Any: a QueryDict's values, as Django types them
def query_items(query: Mapping[str, Any]) -> Iterable[tuple[str, str]]:
    """Every (name, value) of a QueryDict, repeated names included."""
    lists = getattr(query, "lists", None)
    if lists is None:
        return [(k, v) for k, v in query.items()]
    return [(k, v) for k, values in lists() for v in values]


def json_size(value: Any) -> int:  # Any: any JSON value (json.loads' own type)
    """Bytes of `value` serialised compactly as UTF-8 JSON: what the size limits count."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


def json_depth(value: Any) -> int:  # Any: any JSON value (json.loads' own type)
    """Container nesting of `value` ({} is 1, a scalar 0), iteratively: no recursion limit."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Iterable[Any] = node.values()  # Any: JSON values (json.loads' own type)
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def _too_deep(text: str, limit: int) -> bool:
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for char in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


# Any: any JSON value (json.loads' own type)
def _first_problem(data: Any) -> tuple[list[str | int], str] | None:
    """Depth-first, in document order: the path and message of the first bad value."""
    # Any: JSON values (json.loads' own type)
    stack: list[tuple[list[str | int], Any]] = [([], data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, _Rejected):
            return path, node.message
        if isinstance(node, float) and not math.isfinite(node):
            return path, "number is out of range"
        if isinstance(node, int) and not isinstance(node, bool) and not MIN_INT <= node <= MAX_INT:
            return path, "integer is out of range (64-bit)"
        if isinstance(node, str):
            problem = text_problem(node)
            if problem:
                field = next((p for p in reversed(path) if isinstance(p, str)), "value")
                return path, f"{field} {problem}"
        elif isinstance(node, dict):
            for key in node:
                problem = text_problem(key)
                if problem:
                    return [*path, printable(key)], f"key {problem}"
            stack.extend(([*path, k], v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(([*path, i], v) for i, v in reversed(list(enumerate(node))))
    return None
