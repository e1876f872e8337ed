"""LangGraph's matching rules, applied to what memoryhub returns: a namespace against a
ListNamespacesOp's conditions, an item's value against a SearchOp's filter (as LangGraph's
own InMemoryStore applies them)."""

from __future__ import annotations

from typing import Any

from langgraph.store.base import MatchCondition


def namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    pairs = (
        zip(namespace, path, strict=False)
        if condition.match_type == "prefix"
        else zip(reversed(namespace), reversed(path), strict=False)
    )
    return all(p == "*" or n == p for n, p in pairs)


def value_matches(value: dict[str, Any], filter: dict[str, Any]) -> bool:
    return all(_compare(_at(value, k), expected) for k, expected in filter.items())


def _at(value: dict[str, Any], key: str) -> Any:  # Any: a JSON value
    """The value's `key`; a dotted key that is no key of it reads nested objects, as
    LangGraph's SQL stores do ({"user.level": 1} matches {"user": {"level": 1}})."""
    if key in value or "." not in key:
        return value.get(key)
    found: Any = value  # Any: a JSON value
    for part in key.split("."):
        if not isinstance(found, dict) or part not in found:
            return None
        found = found[part]
    return found


def _compare(actual: Any, expected: Any) -> bool:
    """LangGraph's filter rules: operators ($eq ...), nested objects, lists element-wise."""
    if isinstance(expected, dict):
        if any(k.startswith("$") for k in expected):
            return all(_operator(actual, op, v) for op, v in expected.items())
        return isinstance(actual, dict) and all(
            _compare(actual.get(k), v) for k, v in expected.items()
        )
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(_compare(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


def _operator(actual: Any, op: str, expected: Any) -> bool:
    if op == "$eq":
        return bool(actual == expected)
    if op == "$ne":
        return bool(actual != expected)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        try:
            a, e = float(actual), float(expected)
        except (TypeError, ValueError):
            return False
        return {"$gt": a > e, "$gte": a >= e, "$lt": a < e, "$lte": a <= e}[op]
    raise ValueError(f"unsupported filter operator {op!r}")
