"""Which trigrams of a contains text to look up first: the ones made of the rarest letters.

Both backends' trigram indexes answer an AND of trigrams by reading each trigram's whole
posting list, so a long text (a question) costs one read per trigram unless only a few are
chosen. Without per-trigram statistics, English letter frequencies (in percent) stand in:
"btq" is rarer than "the". A character outside a-z counts as rare (0.5%), whitespace as
the commonest of all. Any choice gives the same results: the candidates are rechecked.
"""

import math
import re

_LETTER_PERCENT = dict(
    zip(
        "etaoinshrdlcumwfgypbvkjxqz",
        (12.7, 9.1, 8.2, 7.5, 7.0, 6.7, 6.3, 6.1, 6.0, 4.3, 4.0, 2.8, 2.8, 2.4, 2.4, 2.2, 2.0,
         2.0, 1.9, 1.5, 1.0, 0.8, 0.15, 0.15, 0.10, 0.07),
        strict=True,
    )
)  # fmt: skip
_ASCII_ALNUM = re.compile(r"[A-Za-z0-9]{3}")


def commonness(trigram: str) -> float:
    """A log-likelihood-like score: lower is rarer; whitespace makes it the commonest."""
    if any(ch.isspace() for ch in trigram):
        return math.inf  # " th", "he ": in nearly every row
    return sum(math.log(_LETTER_PERCENT.get(ch.lower(), 0.5)) for ch in trigram)


def ranked(trigrams: set[str]) -> list[str]:
    """The trigrams, rarest-looking first (ties in code point order, so it is stable)."""
    return sorted(trigrams, key=lambda t: (commonness(t), t))


def all_trigrams(text: str) -> list[str]:
    """Every 3-character window of `text`, rarest-looking first."""
    return ranked({text[i : i + 3] for i in range(len(text) - 2)})


def alnum_trigrams(text: str) -> list[str]:
    """The windows of 3 ASCII letters or digits, upper-cased, rarest-looking first: each is
    exactly one pg_trgm trigram (pg_trgm indexes runs of letters and digits only)."""
    windows = (text[i : i + 3] for i in range(len(text) - 2))
    return ranked({w.upper() for w in windows if _ASCII_ALNUM.fullmatch(w)})
