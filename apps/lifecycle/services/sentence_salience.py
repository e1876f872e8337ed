"""Salient sentences without a model: which sentences of a conversation carry it.

A sentence scores by how central its content words are to the text being digested (the
log of each word's frequency there, over the square root of the sentence's word count),
plus the cues a summary keeps: the user's first-person statements, decisions and plans,
names and numbers, a message's opening sentence. Filler ("ok thanks") has too few content
words to be a candidate; of near-duplicates only the best stays; the chosen keep their order.
"""

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from apps.providers.stopwords import STOPWORDS
from apps.providers.token_counts import count_tokens_batch

_WORD = re.compile(r"[a-z0-9][a-z0-9'\u2019-]*")
# Words that say nothing in a conversation, beyond the search stopwords.
_FILLER = frozenset(
    """ok okay thanks thank sure yes yeah yep nope hi hello hey bye goodbye great cool nice
    fine good alright right well oh ah hmm lol please welcome got get let know see think
    really just also much lot anything else something help today""".split()
)
_FIRST_PERSON = re.compile(
    r"\b(my|i am|i'm|i have|i've|i was|i like|i love|i prefer|i hate|i live|i work|i moved|"
    r"call me|remember that|i always|i never|i need|i want|i will|i'll)\b",
    re.I,
)
_DECISION = re.compile(
    r"\b(decided|decide|decision|agreed|agree|we will|we'll|let's|plan|planned|going to|"
    r"must|deadline|schedule|scheduled|important|remember|promise|chose|choose|switch)\b",
    re.I,
)
_NAME_OR_NUMBER = re.compile(r"\d|(?<=\w )[A-Z][a-z]+")
MIN_CONTENT_WORDS = 2
NEAR_DUPLICATE = 0.6  # Jaccard overlap of content words at which two sentences say the same


@dataclass(frozen=True)
class Candidate:
    """A line that may be chosen: `text` is written, `sentence` is scored. `role`: the
    speaker ("" for a line of an older summary); `opening`: its message's first sentence."""

    text: str
    sentence: str
    role: str = ""
    opening: bool = False


def content_words(text: str) -> frozenset[str]:
    """The words of `text` that carry a topic (lowercase, no stopwords or filler)."""
    words = _WORD.findall(text.lower())
    return frozenset(w for w in words if len(w) > 1 and w not in STOPWORDS and w not in _FILLER)


def _cues(c: Candidate) -> float:
    bonus = 0.0
    if c.role in ("user", "") and _FIRST_PERSON.search(c.sentence):
        bonus += 1.0
    if _DECISION.search(c.sentence):
        bonus += 1.0
    if _NAME_OR_NUMBER.search(c.sentence):
        bonus += 0.3
    if c.opening:
        bonus += 0.2
    if c.role == "user":
        bonus += 0.2
    if c.sentence.rstrip().endswith("?"):
        bonus -= 0.3
    return bonus


def scores(candidates: Sequence[Candidate]) -> list[float | None]:
    """Each candidate's salience among the others; None for filler (too few content words)."""
    words = [content_words(c.sentence) for c in candidates]
    tf = Counter(w for ws in words for w in ws)
    out: list[float | None] = []
    for c, ws in zip(candidates, words, strict=True):
        if len(ws) < MIN_CONTENT_WORDS:
            out.append(None)
            continue
        centrality = sum(math.log1p(tf[w]) for w in ws) / math.sqrt(len(ws))
        out.append(centrality + _cues(c))
    return out


def _near_duplicate(a: frozenset[str], b: frozenset[str]) -> bool:
    return len(a & b) / len(a | b) >= NEAR_DUPLICATE


def select(
    candidates: Sequence[Candidate], *, max_tokens: int, max_chars: int | None = None
) -> list[int]:
    """Indices of the best candidates, in their order, whose lines fit together in
    `max_tokens` and whose sentences in `max_chars`; near-duplicates of a better one are
    left out. Of equal ones the newer wins (a rolling summary keeps what is current)."""
    ranked = sorted(
        ((s, i) for i, s in enumerate(scores(candidates)) if s is not None),
        key=lambda pair: (-round(pair[0], 9), -pair[1]),
    )
    costs = count_tokens_batch([candidates[i].text for _, i in ranked])
    chosen: list[int] = []
    kept: list[frozenset[str]] = []
    tokens = chars = 0
    for (_, i), cost in zip(ranked, costs, strict=True):
        ws = content_words(candidates[i].sentence)
        size = len(candidates[i].sentence) + 1
        if tokens + cost > max_tokens or (max_chars is not None and chars + size > max_chars):
            continue
        if any(_near_duplicate(ws, other) for other in kept):
            continue
        chosen.append(i)
        kept.append(ws)
        tokens, chars = tokens + cost, chars + size
    return sorted(chosen)
