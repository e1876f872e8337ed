"""Whose a LangGraph item is: the namespace rule of MemoryHubStore.

A rule is a pattern, a function or None:
- a pattern is a tuple of namespace labels, one of them "{user}", any of them "*": a
  namespace that starts with the pattern's labels ("*" matching any) is the user's whose id
  stands where "{user}" does. The default, ("users", "{user}"), makes ("users", "ana", ...)
  ana's; ("memories", "{user}") suits LangGraph's ("memories", user_id) shape.
- a function `user_of(namespace) -> str | None` names the user itself (None: nobody's).
- None: no namespace names a user (every item is the agent's, or the store's `user`'s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langgraph.store.base import MatchCondition

USER = "{user}"
WILDCARD = "*"
DEFAULT_RULE: tuple[str, ...] = ("users", USER)

Namespace = tuple[str, ...]
UserOf = Callable[[Namespace], "str | None"]
Rule = Sequence[str] | UserOf | None


def compile_rule(rule: Rule) -> UserOf:
    """The function of `rule` (see the module docstring); ValueError for a pattern without
    exactly one "{user}"."""
    if rule is None:
        return lambda namespace: None
    if callable(rule):
        return rule
    pattern = tuple(rule)
    if pattern.count(USER) != 1 or not all(isinstance(p, str) and p for p in pattern):
        raise ValueError(
            f"a namespace rule is a tuple of labels with one {USER!r}, as ('users', {USER!r}), "
            f"or a function of the namespace: not {rule!r}"
        )
    return lambda namespace: _match(pattern, namespace)


def _match(pattern: Namespace, namespace: Namespace) -> str | None:
    if len(namespace) < len(pattern):
        return None
    user = None
    for want, label in zip(pattern, namespace, strict=False):
        if want == USER:
            user = label
        elif want not in (WILDCARD, label):
            return None
    return user


def concrete_prefix(conditions: Sequence[MatchCondition]) -> Namespace:
    """The longest namespace every listed namespace starts with, as far as the prefix
    conditions say (up to their first wildcard): what names a listing's user."""
    for condition in conditions:
        if condition.match_type == "prefix":
            labels = []
            for label in condition.path:
                if label == WILDCARD:
                    break
                labels.append(label)
            return tuple(labels)
    return ()
