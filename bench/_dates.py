"""Dates written in text, for bench/locomo.py's temporal measure (issue 24, part 5).

No LLM answers in the bench: the measure is whether the date a LoCoMo category-2 answer
gives ("7 May 2023", "June 2023", "2022", "the week before 9 June 2023" -> 9 June 2023) is
written in the text a get_context answer puts in front of the agent.
"""

import re

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_MONTH = "|".join(MONTHS)
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}}) ({_MONTH}),? (\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH}),? (\d{{4}})\b")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}}) ({_MONTH})\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"\b((?:19|20)\d{2})\b")


def _month(name: str) -> int:
    return MONTHS.index(name) + 1


def dates_in(text: str) -> set[tuple]:
    """Every date written in `text`, as (year, month, day) with None where not given."""
    found: set[tuple] = set()
    for m in _DAY_MONTH_YEAR.finditer(text):
        found.add((int(m.group(3)), _month(m.group(2)), int(m.group(1))))
    for m in _ISO.finditer(text):
        found.add((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    for m in _MONTH_YEAR.finditer(text):
        found.add((int(m.group(2)), _month(m.group(1)), None))
    for m in _DAY_MONTH.finditer(text):
        found.add((None, _month(m.group(2)), int(m.group(1))))
    for m in _YEAR.finditer(text):
        found.add((int(m.group(1)), None, None))
    return found


def answer_date(answer: str) -> tuple | None:
    """The date an answer gives, most specific form first; None when it names none."""
    for pattern, build in (
        (_DAY_MONTH_YEAR, lambda m: (int(m.group(3)), _month(m.group(2)), int(m.group(1)))),
        (_MONTH_YEAR, lambda m: (int(m.group(2)), _month(m.group(1)), None)),
        (_DAY_MONTH, lambda m: (None, _month(m.group(2)), int(m.group(1)))),
        (_YEAR, lambda m: (int(m.group(1)), None, None)),
    ):
        m = pattern.search(answer)
        if m:
            return build(m)
    return None


def shown(wanted: tuple, text: str) -> bool:
    """Some date written in `text` gives every part `wanted` gives, the same."""
    return any(
        all(w is None or x == w for w, x in zip(wanted, d, strict=True)) for d in dates_in(text)
    )
