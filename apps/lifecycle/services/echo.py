"""Answers that copy the prompt's own instructions back.

Small local models fill a schema with its description: SmolLM2-135M answered a summary with
"<the updated summary as plain text>" and a consolidation with "history-summary paragraph
with [YYYY-MM-DD HH:mm] timestamp" (docs/benchmarks.md, the real-model run). Such a line is
not memory. A line is an echo when at least ECHO_SHARE of its content words are words of the
instructions that the conversation and the reference text (old summary, MEMORY.md) never use,
and it has at least ECHO_MIN_WORDS of them (a heading such as "# Memory" is not an echo).
An answer with no letter or digit at all is not memory either: SmolLM2 once filled
memory_update with "]\n{\n- ...", the JSON's punctuation.
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from apps.providers.llm import ChatMessage
from apps.providers.stopwords import STOPWORDS

ECHO_SHARE = 0.75
ECHO_MIN_WORDS = 3
_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


@dataclass(frozen=True)
class Instructions:
    """The words only the instructions use: in the bare prompt, not in what it carries."""

    words: frozenset[str]

    @classmethod
    def of(cls, bare_prompt: Sequence[ChatMessage], sources: Iterable[str]) -> "Instructions":
        own = {w for m in bare_prompt for w in _words(m.content)}
        used = {w for text in sources for w in _words(text or "")}
        return cls(frozenset(own - used))

    def is_echo(self, line: str) -> bool:
        words = _words(line)
        if len(words) < ECHO_MIN_WORDS:
            return False
        return sum(w in self.words for w in words) >= ECHO_SHARE * len(words)

    def clean(self, text: str) -> tuple[str, int]:
        """`text` without its echoed lines (blank lines kept between what stays), and how
        many lines went; "" when what stays holds no letter or digit."""
        kept, dropped = [], 0
        for line in text.splitlines():
            if self.is_echo(line):
                dropped += 1
            else:
                kept.append(line)
        text = "\n".join(kept).strip()
        return (text if _WORD.search(text) else ""), dropped
