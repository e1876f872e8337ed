"""The text of an entry that is embedded: its content, or for a JSON object written with
index fields (LangGraph's `fields`) the texts at those paths, as langgraph's
`get_text_at_path` reads them: dotted keys, `[n]`, `[*]`, `*`, `{a,b}` and "$" (all)."""

import json
import re
from typing import Any

MAX_FIELDS = 32
MAX_PATH = 200
_TOKEN = re.compile(r"\[(\*|-?\d+)\]|\{[^{}\[\]]+\}|[^.\[\]{}]+")


def path_tokens(path: str) -> list[str]:
    """The steps of a path ("a.b[*].c" -> a, b, [*], c); ValueError for one that is not."""
    if not isinstance(path, str) or not path.strip() or len(path) > MAX_PATH:
        raise ValueError(f"an index field is a non-empty path of at most {MAX_PATH} characters")
    if path == "$":
        return []
    tokens: list[str] = []
    pos = 0
    while pos < len(path):
        if path[pos] == "." and tokens and pos + 1 < len(path) and path[pos + 1] not in ".[":
            pos += 1
        match = _TOKEN.match(path, pos)
        if match is None:
            raise ValueError(f"invalid index field {path!r} at character {pos + 1}")
        tokens.append(match.group(0))
        pos = match.end()
    return tokens


def check_fields(fields: list[str]) -> list[str]:
    """The fields, each a valid path; ValueError (naming the bad one) otherwise."""
    if len(fields) > MAX_FIELDS:
        raise ValueError(f"at most {MAX_FIELDS} index fields")
    for field in fields:
        path_tokens(field)
    return list(fields)


def _leaf(obj: Any) -> list[str]:
    if obj is None:
        return []
    if isinstance(obj, (list, dict)):
        return [json.dumps(obj, sort_keys=True, ensure_ascii=False)]
    return [str(obj)]


def texts_at(obj: Any, path: str) -> list[str]:
    """The texts at `path` in `obj` (lists and objects as sorted JSON, None as nothing)."""
    return _walk(obj, path_tokens(path))


def _walk(obj: Any, tokens: list[str]) -> list[str]:
    if not tokens:
        return _leaf(obj)
    step, rest = tokens[0], tokens[1:]
    if step.startswith("["):
        if not isinstance(obj, list):
            return []
        if step == "[*]":
            return [t for item in obj for t in _walk(item, rest)]
        idx = int(step[1:-1])
        return _walk(obj[idx], rest) if -len(obj) <= idx < len(obj) else []
    if step.startswith("{"):
        # A multi-field selection ends its path, as in langgraph.
        fields = [f.strip() for f in step[1:-1].split(",") if f.strip()]
        return [t for f in fields for t in _walk(obj, path_tokens(f))]
    if step == "*":
        items = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, list) else []
        return [t for item in items for t in _walk(item, rest)]
    if isinstance(obj, dict) and step in obj:
        return _walk(obj[step], rest)
    return []


def indexed_text(content: str, fields: list[str] | None) -> str:
    """What is embedded for an entry: with index fields and a JSON object (or array) as its
    content, the texts at those paths, one per line; otherwise the content."""
    if not fields:
        return content
    try:
        value = json.loads(content)
    except ValueError:
        return content
    if not isinstance(value, (dict, list)):
        return content
    return "\n".join(t for field in fields for t in texts_at(value, field))
