"""Normalising fact text for exact dedup and deriving keys from free text."""

import hashlib
import re
import unicodedata

from django.utils.text import slugify

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
KEY_WORDS = 8
KEY_CHARS = 60


def normalize(text: str) -> str:
    """Case-folded, NFKC, punctuation dropped, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_NON_WORD.sub(" ", folded).split())


def normalized_hash(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


def derive_key(text: str) -> str:
    """A slug of the first words: "My cat's name is Whiskerino" -> "my-cat-s-name-is-whiskerino"."""
    words = normalize(text).split()[:KEY_WORDS]
    key = slugify(" ".join(words))[:KEY_CHARS].strip("-")
    return key or "fact-" + normalized_hash(text)[:12]
