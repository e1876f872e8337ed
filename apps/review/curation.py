"""Reads and rendering helpers for the curation pages: search, facts, the review queue,
learnings and error memory.

Everything that turns stored text into HTML escapes it first: `highlight` and `word_diff`
build their markup from escaped pieces, so user text is never marked safe as it is.
"""

import difflib
import re
from dataclasses import dataclass, field

from django.db.models import Count
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from apps.agents.models import Agent
from apps.conversations.search import SearchResult
from apps.conversations.selectors import sessions_page
from apps.facts.models import Fact, FactStatus, FactVersion
from apps.facts.selectors import VECTORS, facts_current
from apps.learnings.models import ErrorRecord, Learning

SESSION_CHOICES = 200  # the newest sessions offered in the search filter; a key also works
CHAIN_LIMIT = 50  # supersede chains are short; this only bounds a corrupted loop
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
    out, last = [], 0
    for match in pattern.finditer(text):
        out.append(escape(text[last : match.start()]))
        out.append(f"<mark>{escape(match.group(0))}</mark>")
        last = match.end()
    out.append(escape(text[last:]))
    return mark_safe("".join(out))  # noqa: S308 - every piece above is escaped


def word_diff(old: str, new: str) -> SafeString:
    """A word-level diff of two values: removed words in <del>, added in <ins>, all escaped."""
    a, b = re.split(r"(\s+)", old), re.split(r"(\s+)", new)
    out = []
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


def search_sessions(*, agent: Agent) -> list:
    """The sessions offered by the search page's filter: the newest SESSION_CHOICES."""
    return sessions_page(agent=agent, cursor=None, limit=SESSION_CHOICES).items


@dataclass(frozen=True)
class ShownHit:
    """One search hit as the page shows it: the message, score, legs (leg, rank, score) and
    its merged context window, each message with the query terms highlighted."""

    message: object
    score: float
    legs: list[tuple[str, int, float]]
    window: list[tuple[object, SafeString]]


def shown_hits(result: SearchResult) -> list[ShownHit]:
    windows = [
        [(m, highlight(m.content, result.query)) for m in w.messages] for w in result.windows
    ]
    return [
        ShownHit(
            message=h.message,
            score=h.score,
            legs=[(leg, r.rank, r.score) for leg, r in sorted(h.legs.items())],
            window=windows[h.window] if h.window < len(windows) else [],
        )
        for h in result.hits
    ]


# --- facts ---


@dataclass
class FactGroup:
    category: str
    facts: list[Fact] = field(default_factory=list)


def fact_groups(*, agent: Agent) -> list[FactGroup]:
    """Current facts (approved and pending) by category name, most salient first."""
    groups: dict[str, FactGroup] = {}
    rows = (
        facts_current(agent=agent)
        .select_related("category")
        .defer(*VECTORS)
        .order_by("category__name", "-salience", "id")
    )
    for fact in rows:
        groups.setdefault(fact.category.name, FactGroup(fact.category.name)).facts.append(fact)
    return list(groups.values())


def fact_page_get(*, agent: Agent, fact_id: int) -> Fact | None:
    """One of the agent's facts, current or not, or None."""
    return (
        Fact.objects.filter(agent=agent, pk=fact_id)
        .select_related("category", "superseded_by")
        .defer(*VECTORS)
        .first()
    )


@dataclass(frozen=True)
class VersionDiff:
    version: FactVersion
    diff: SafeString


def version_diffs(*, fact: Fact) -> list[VersionDiff]:
    """The fact's versions, oldest first, each with the diff of its old and new value."""
    return [
        VersionDiff(v, word_diff(v.old_value, v.new_value))
        for v in FactVersion.objects.filter(fact=fact).order_by("number")
    ]


@dataclass(frozen=True)
class Chain:
    predecessors: list[Fact]  # the facts this one superseded (or absorbed), oldest first
    successors: list[Fact]  # what superseded it, then what superseded that, in order


def supersede_chain(*, fact: Fact) -> Chain:
    """The supersede chain around `fact`, both ways (a merge may give several predecessors)."""
    base = Fact.objects.filter(agent_id=fact.agent_id).defer(*VECTORS).select_related("category")
    predecessors, frontier, seen = [], [fact.pk], {fact.pk}
    while frontier and len(predecessors) < CHAIN_LIMIT:
        found = [f for f in base.filter(superseded_by_id__in=frontier) if f.pk not in seen]
        predecessors += found
        seen.update(f.pk for f in found)
        frontier = [f.pk for f in found]
    successors, current = [], fact.superseded_by_id
    while current is not None and current not in seen and len(successors) < CHAIN_LIMIT:
        nxt = base.filter(pk=current).first()
        if nxt is None:
            break
        successors.append(nxt)
        seen.add(current)
        current = nxt.superseded_by_id
    predecessors.sort(key=lambda f: (f.valid_from, f.pk))
    return Chain(predecessors=predecessors, successors=successors)


# --- review queue ---


def pending_facts(*, agent: Agent) -> list[Fact]:
    """Facts waiting for review, oldest first, with their versions counted."""
    return list(
        facts_current(agent=agent)
        .filter(status=FactStatus.PENDING)
        .select_related("category", "session")
        .defer(*VECTORS)
        .annotate(version_count=Count("versions"))
        .order_by("created_at", "id")
    )


def merge_targets(*, agent: Agent) -> list[Fact]:
    """Approved current facts a pending fact may be merged into, by category and key."""
    return list(
        facts_current(agent=agent)
        .filter(status=FactStatus.ACTIVE)
        .select_related("category")
        .defer(*VECTORS)
        .order_by("category__name", "key", "id")
    )


def fact_counts(*, agent: Agent) -> dict[str, int]:
    """Current facts by status: {"active": n, "pending": m}."""
    rows = facts_current(agent=agent).values("status").annotate(n=Count("pk"))
    counts = dict.fromkeys(FactStatus.values, 0)
    counts.update({r["status"]: r["n"] for r in rows})
    return counts


# --- learnings and error memory ---


def learnings_list(*, agent: Agent, status: str = "", kind: str = "", q: str = "") -> list:
    """The agent's learnings, newest first, filtered by status, kind and a substring."""
    qs = Learning.objects.filter(agent=agent)
    if status:
        qs = qs.filter(status=status)
    if kind:
        qs = qs.filter(kind=kind)
    if q:
        qs = qs.filter(content__icontains=q)
    return list(qs.order_by("-created_at", "-id")[:500])


def errors_list(*, agent: Agent, outcome: str = "", q: str = "") -> list[ErrorRecord]:
    """The agent's live error records, newest first, filtered by outcome and a substring of
    the tool name or error."""
    qs = ErrorRecord.objects.live().filter(agent=agent).defer("embedding")
    if outcome:
        qs = qs.filter(outcome=outcome)
    if q:
        qs = qs.filter(tool_name__icontains=q) | qs.filter(error__icontains=q)
    return list(qs.order_by("-created_at", "-id")[:500])


def learning_page_get(*, agent: Agent, learning_id: int) -> Learning | None:
    return Learning.objects.filter(agent=agent, pk=learning_id).first()


def error_page_get(*, agent: Agent, error_id: int) -> ErrorRecord | None:
    """One of the agent's live error records, or None (an expired one is gone)."""
    return ErrorRecord.objects.live().filter(agent=agent, pk=error_id).defer("embedding").first()
