"""Rendering helpers for the curation pages: search results, fact groups and version diffs.
The pages read through the domain apps' selectors.

Everything that turns stored text into HTML escapes it first: `highlight` and `word_diff`
build their markup from escaped pieces, so user text is never marked safe as it is.
"""

import difflib
import re
from dataclasses import dataclass, field

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from apps.agents.models import Agent
from apps.conversations.models import Message, Session
from apps.conversations.selectors import SearchResult, windows_touching
from apps.facts.models import Fact, FactVersion
from apps.facts.selectors import fact_versions
from apps.review.selectors import facts_listed, sessions_named, sessions_newest
from apps.search.hybrid import Ranking

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


TIMES = "\N{MULTIPLICATION SIGN}"
# The legs as the page names them, and what each one's score means (the legend and the
# `title` of each leg); docs/search.md has the same words.
LEG_NAMES = {
    "bm25": "keyword",
    "vector": "semantic",
    "contains": "substring",
    "neighbour": "neighbour",
    "rerank": "rerank",
}
LEG_HELP = {
    "bm25": "Keyword leg: rank among the BM25 matches of the query's words, and the BM25 "
    "score (Okapi, k1 1.2, b 0.75, Lucene's idf: an exact rare word is worth a few points).",
    "vector": "Semantic leg: rank by meaning, and the cosine similarity of the message's "
    "embedding to the query's (1 is identical, about 0.3 or less unrelated).",
    "contains": "Substring: the message contains the whole query (case-insensitive); newest first.",
    "neighbour": "Neighbour smoothing: the message is right before or after a hit in the same "
    "session (#: that hit's rank before smoothing), and receives 0.2 "
    f"{TIMES} that hit's fused score.",
    "rerank": "Rerank: rank among the top candidates by MaxSim, how closely the message's "
    "words (and its neighbours') match each word of the query, from 0 to 1.",
}
FUSED_HELP = (
    "Fused score: the sum over the legs of 1/(10 + rank) (reciprocal-rank fusion), plus the "
    "neighbour shares. Higher is better; it only orders this page's hits."
)
RERANKED_HELP = (
    "Reranked score: the fused score and the rerank MaxSim, each standardised over the "
    f"candidates, blended (fused + 2 {TIMES} MaxSim). Higher is better; it only orders this "
    "page's hits."
)
NEIGHBOUR_WEIGHT = Ranking().neighbour_weight  # 0.2, as LEG_HELP says


def legend() -> list[tuple[str, str]]:
    """The page's key to its scores: (what the page writes, what it means)."""
    legs = [(LEG_NAMES[leg], text) for leg, text in LEG_HELP.items()]
    return [("fused", FUSED_HELP), ("reranked", RERANKED_HELP), *legs]


@dataclass(frozen=True)
class ShownLeg:
    name: str  # bm25, vector, contains, neighbour, rerank
    rank: str  # "keyword #1": the leg and the hit's rank in it
    value: str  # " · BM25 3.21": its own score ("" when it has none); a phone leaves it out
    title: str  # what the leg and its score mean

    @property
    def label(self) -> str:
        """The leg as the page writes it: "keyword #1 · BM25 3.21"."""
        return self.rank + self.value


def shown_leg(leg: str, rank: int, score: float) -> ShownLeg:
    """One leg of a hit as a person reads it: its name, rank and its own score."""
    name = LEG_NAMES.get(leg, leg)
    value = {
        "bm25": f" · BM25 {score:.2f}",
        "vector": f" · similarity {score:.2f}",
        "rerank": f" · MaxSim {score:.2f}",
        "neighbour": f" · +{NEIGHBOUR_WEIGHT:g} {TIMES} {score:.3f}",
        "contains": "",
    }.get(leg, f" · {score:.3f}")
    ranked = f"neighbour of #{rank}" if leg == "neighbour" else f"{name} #{rank}"
    return ShownLeg(leg, ranked, value, LEG_HELP.get(leg, ""))


@dataclass(frozen=True)
class ShownHit:
    """One search hit as the page shows it: its rank on the page, message, fused score as
    read (in hybrid mode; "" in the one-leg modes, where its leg says it), legs, and the user
    of its session ("" for the agent's own)."""

    rank: int
    message: Message
    score: float
    score_label: str
    score_title: str
    legs: list[ShownLeg]
    user: str = ""


@dataclass(frozen=True)
class Line:
    """A message of a block, its text escaped and the query highlighted; `hit` when it is one."""

    message: Message
    marked: SafeString
    hit: ShownHit | None = None


@dataclass(frozen=True)
class Block:
    """A passage of one session: the context windows of its hits, merged where they overlap
    or touch, in session order; no message is in two blocks."""

    session: Session
    lines: list[Line]
    hits: list[ShownHit]  # in session order
    best: ShownHit  # the best-ranked of them: the block's place on the page


@dataclass(frozen=True)
class SearchPage:
    hits: list[ShownHit]  # best first
    blocks: list[Block]  # by their best hit


def _score(mode: str, reranked: bool, score: float) -> tuple[str, str]:
    if mode != "hybrid":
        return "", ""
    if reranked:
        return f"reranked {score:.2f}", RERANKED_HELP
    return f"fused {score:.3f}", FUSED_HELP


def _groups(result: SearchResult) -> list[list[int]]:
    """The result's context windows gathered where they touch (the API already merged those
    that overlap): lists of window indices, each list in session order."""
    parent = list(range(len(result.windows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in windows_touching(result.windows):
        parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i in range(len(result.windows)):
        groups.setdefault(root(i), []).append(i)
    return [sorted(g, key=lambda i: _order(result.windows[i].messages[0])) for g in groups.values()]


def _order(m: Message) -> tuple:
    return (m.created_at, str(m.pk))


def search_page(agent: Agent, result: SearchResult) -> SearchPage:
    """The result as the search page shows it: hits best first, and the blocks (passages)
    holding them, each message once, ordered by their best hit."""
    reranked = any("rerank" in h.legs for h in result.hits)
    sessions = sessions_named(agent=agent, session_ids=[w.session_id for w in result.windows])
    hits = []
    for rank, h in enumerate(result.hits, start=1):
        label, title = _score(result.mode, reranked, h.score)
        legs = [shown_leg(leg, r.rank, r.score) for leg, r in _leg_order(h.legs)]
        session = sessions.get(h.message.session_id)
        user = session.user if session is not None else ""
        hits.append(ShownHit(rank, h.message, h.score, label, title, legs, user))
    by_window: dict[int, list[ShownHit]] = {}
    for h, shown in zip(result.hits, hits, strict=True):
        by_window.setdefault(h.window, []).append(shown)
    blocks = []
    for group in _groups(result):
        block_hits = [s for i in group for s in by_window.get(i, [])]
        if not block_hits:
            continue
        at = {s.message.pk: s for s in block_hits}
        lines = [
            Line(m, highlight(m.content, result.query), at.get(m.pk))
            for i in group
            for m in result.windows[i].messages
        ]
        block_hits.sort(key=lambda s: _order(s.message))
        best = min(block_hits, key=lambda s: s.rank)
        session = sessions.get(result.windows[group[0]].session_id)
        if session is not None:  # None: deleted since the search ran
            blocks.append(Block(session, lines, block_hits, best))
    blocks.sort(key=lambda b: b.best.rank)
    return SearchPage(hits=hits, blocks=blocks)


def _leg_order(legs: dict) -> list:
    """The legs in the order they are computed: keyword, semantic, neighbour, rerank."""
    order = list(LEG_NAMES)
    return sorted(legs.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else 99)


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
