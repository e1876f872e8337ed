"""User query text -> search units, shared by both backends so they match the same things.

Nothing of the user's text reaches FTS5 or tsquery syntax raw: queries are split into word
tokens (letters and digits), and the backends quote every token themselves. Supported
syntax: `"exact phrase"` and `prefix*`; every other character (FTS operators, quotes,
colons, parentheses, NEAR/AND/NOT) is just a separator or a plain word.
"""

import re
from dataclasses import dataclass

from apps.providers.stopwords import STOPWORDS

# Unicode letters and digits; underscore and punctuation separate tokens, as in FTS5's
# unicode61 tokenizer and PostgreSQL's default parser.
WORD = re.compile(r"[^\W_]+")
_PHRASE = re.compile(r'"([^"]*)"')
MAX_UNITS = 64  # a 4 KiB query could hold ~1000 words; ranking more terms adds nothing

# Dropped from OR queries (not from phrases): natural-language questions are mostly these
# words, which match nearly every message and only slow the query down.


@dataclass(frozen=True)
class Unit:
    """One BM25 'phrase': a single word, a prefix, or an exact phrase of several words."""

    kind: str  # "term" | "prefix" | "phrase"
    words: tuple[str, ...]


def words(text: str) -> list[str]:
    """Lower-cased word tokens of `text`."""
    return [w.lower() for w in WORD.findall(text)]


def parse(text: str) -> list[Unit]:
    """Units of an OR query, deduplicated, in first-seen order; [] when no word is left."""
    units: list[Unit] = []
    rest = []
    last = 0
    for match in _PHRASE.finditer(text):
        rest.append(text[last : match.start()])
        tokens = tuple(words(match.group(1)))
        if len(tokens) > 1:
            units.append(Unit("phrase", tokens))
        elif tokens:
            units.append(Unit("term", tokens))
        last = match.end()
    rest.append(text[last:])
    plain: list[Unit] = []
    for chunk in " ".join(rest).split():
        tokens = tuple(words(chunk))
        if not tokens:
            continue
        if chunk.rstrip('"').endswith("*"):
            plain.extend(Unit("term", (t,)) for t in tokens[:-1])
            plain.append(Unit("prefix", (tokens[-1],)))
        else:
            plain.extend(Unit("term", (t,)) for t in tokens)
    content = [u for u in plain if not (u.kind == "term" and u.words[0] in STOPWORDS)]
    # A query made only of stopwords still searches for them.
    units.extend(content if (content or units) else plain)
    seen: set[Unit] = set()
    out = []
    for unit in units:
        if unit not in seen:
            seen.add(unit)
            out.append(unit)
    return out[:MAX_UNITS]
