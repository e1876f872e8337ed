"""Rendering helpers for the curation pages: search hits, fact groups and version diffs.
The pages read through the domain apps' selectors.

Everything that turns stored text into HTML escapes it first: `highlight` and `word_diff`
build their markup from escaped pieces, so user text is never marked safe as it is.
"""

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from apps.agents.models import Agent
from apps.conversations.search import SearchResult
from apps.facts.models import Fact, FactVersion
from apps.facts.selectors import fact_versions
from apps.review.selectors import facts_listed, session_users, sessions_newest

SESSION_CHOICES = 200  # the newest sessions offered in the search filter; a key also works
_WORD = re.compile(r"\w[\w'-]*", re.UNICODE)


# --- rendering ---


def highlight(text: str, query: str) -> SafeString:
    """`text` escaped, with the query (whole, and each word of 2+ characters) wrapped in
    <mark>, case-insensitively. Matches are found in the raw text, then every piece is
    escaped on its own, so a term never cuts an entity in two."""
    terms = {query.strip(), *(w for w in _WORD.findall(query) if len(w) >= 2)} - {""}
    if not terms:
        return escape(text)
    pattern = re.compile(
        "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)), re.IGNORECASE
    )
    out: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        out.append(escape(text[last : match.start()]))
        out.append(f"<mark>{escape(match.group(0))}</mark>")
        last = match.end()
    out.append(escape(text[last:]))
    return mark_safe("".join(out))  # noqa: S308 - every piece above is escaped


def word_diff(old: str, new: str) -> SafeString:
    """A word-level diff of two values: removed words in <del>, added in <ins>, all escaped."""
    a, b = re.split(r"(\s+)", old), re.split(r"(\s+)", new)
    out: list[str] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(escape("".join(a[i1:i2])))
            continue
        removed, added = "".join(a[i1:i2]), "".join(b[j1:j2])
        if removed:
            out.append(f"<del>{escape(removed)}</del>")
        if added:
            out.append(f"<ins>{escape(added)}</ins>")
    return mark_safe("".join(out))  # noqa: S308 - every piece above is escaped


# --- search ---


def search_sessions(*, agent: Agent, user: str | None = None) -> list:
    """The sessions offered by the search page's filter: the newest SESSION_CHOICES (of the
    owner, when the page is filtered by user)."""
    return sessions_newest(agent=agent, user=user, limit=SESSION_CHOICES)


@dataclass(frozen=True)
class ShownHit:
    """One search hit as the page shows it: the message, score, legs (leg, rank, score), its
    merged context window, each message with the query terms highlighted, and the user of
    its session ("" for the agent's own)."""

    message: object
    score: float
    legs: list[tuple[str, int, float]]
    window: Sequence[tuple[object, SafeString]]
    user: str = ""


def shown_hits(agent: Agent, result: SearchResult) -> list[ShownHit]:
    windows = [
        [(m, highlight(m.content, result.query)) for m in w.messages] for w in result.windows
    ]
    users = session_users(agent=agent, session_ids=[h.message.session_id for h in result.hits])
    return [
        ShownHit(
            message=h.message,
            score=h.score,
            legs=[(leg, r.rank, r.score) for leg, r in sorted(h.legs.items())],
            window=windows[h.window] if h.window < len(windows) else [],
            user=users.get(h.message.session_id, ""),
        )
        for h in result.hits
    ]


# --- facts ---


@dataclass
class FactGroup:
    category: str
    facts: list[Fact] = field(default_factory=list)


def fact_groups(*, agent: Agent, user: str | None = None) -> list[FactGroup]:
    """Current facts (approved and pending; the owner's) by category name, most salient
    first."""
    groups: dict[str, FactGroup] = {}
    for fact in facts_listed(agent=agent, user=user):
        groups.setdefault(fact.category.name, FactGroup(fact.category.name)).facts.append(fact)
    return list(groups.values())


@dataclass(frozen=True)
class VersionDiff:
    version: FactVersion
    diff: SafeString


def version_diffs(*, fact: Fact) -> list[VersionDiff]:
    """The fact's versions, oldest first, each with the diff of its old and new value."""
    return [VersionDiff(v, word_diff(v.old_value, v.new_value)) for v in fact_versions(fact=fact)]
