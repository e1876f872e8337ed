"""Dates for the memory leg: how a day is written, and relative expressions ("yesterday",
"last week", "two days ago") resolved against the day a message was written.

A message from an earlier session says "yesterday" about its own day, not today's; resolved
inline ("yesterday (7 May 2023)") the agent reads the date instead of working it out.
English only; an expression it does not know is left as it is.
"""

import re
from collections.abc import Callable
from datetime import date, timedelta

MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2,
}  # fmt: skip


def day_text(day: date) -> str:
    """8 May 2023."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def month_text(year: int, month: int) -> str:
    return f"{MONTHS[month - 1]} {year}"


def _shift_month(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _week(monday: date) -> str:
    return f"the week of {day_text(monday)}"


def _weekend(saturday: date) -> str:
    return f"the weekend of {day_text(saturday)}"


def _before(day: date, weekday: int) -> date:
    """The last `weekday` strictly before `day`."""
    return day - timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)


def _after(day: date, weekday: int) -> date:
    """The next `weekday` strictly after `day`."""
    return day + timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)


def _ago(day: date, n: int, unit: str) -> str:
    unit = unit.rstrip("s")
    if unit == "day":
        return day_text(day - timedelta(days=n))
    if unit == "week":
        return _week(_monday(day - timedelta(weeks=n)))
    if unit == "month":
        return month_text(*_shift_month(day, -n))
    return str(day.year - n)


_WEEKDAY = "|".join(WEEKDAYS)
_COUNT = "|".join(sorted((re.escape(k) for k in _NUMBERS), key=len, reverse=True))
_RULES: list[tuple[re.Pattern, Callable[[date, re.Match[str]], str]]] = [
    (re.compile(r"\bthe day before yesterday\b", re.I), lambda d, m: day_text(d - timedelta(2))),
    (re.compile(r"\b(?:yesterday|last night)\b", re.I), lambda d, m: day_text(d - timedelta(1))),
    (re.compile(r"\btomorrow\b", re.I), lambda d, m: day_text(d + timedelta(1))),
    (re.compile(r"\blast week\b", re.I), lambda d, m: _week(_monday(d) - timedelta(7))),
    (re.compile(r"\bnext week\b", re.I), lambda d, m: _week(_monday(d) + timedelta(7))),
    (re.compile(r"\blast weekend\b", re.I), lambda d, m: _weekend(_before(d, 5))),
    (re.compile(r"\b(?:this|next) weekend\b", re.I),
     lambda d, m: _weekend(_after(d, 5) if d.weekday() < 5 else d)),
    (re.compile(rf"\blast ({_WEEKDAY})\b", re.I),
     lambda d, m: day_text(_before(d, WEEKDAYS.index(m.group(1).capitalize())))),
    (re.compile(rf"\bnext ({_WEEKDAY})\b", re.I),
     lambda d, m: day_text(_after(d, WEEKDAYS.index(m.group(1).capitalize())))),
    (re.compile(r"\blast month\b", re.I), lambda d, m: month_text(*_shift_month(d, -1))),
    (re.compile(r"\bnext month\b", re.I), lambda d, m: month_text(*_shift_month(d, 1))),
    (re.compile(r"\blast year\b", re.I), lambda d, m: str(d.year - 1)),
    (re.compile(r"\bnext year\b", re.I), lambda d, m: str(d.year + 1)),
    (re.compile(rf"\b(\d{{1,2}}|{_COUNT}) (days?|weeks?|months?|years?) ago\b", re.I),
     lambda d, m: _ago(d, _count(m.group(1)), m.group(2).lower())),
]  # fmt: skip


# Every rule's expression holds one of these: most messages hold none and are left at once.
_ANY = re.compile(r"yesterday|tomorrow|last|next|this weekend|ago\b", re.I)


def _count(text: str) -> int:
    return int(text) if text.isdigit() else _NUMBERS[text.lower()]


def resolve_relative(text: str, day: date) -> tuple[str, int]:
    """`text` with each relative date expression followed by the date it names, counted
    from `day` (the day the text was written): "yesterday" -> "yesterday (7 May 2023)"."""
    if not _ANY.search(text):
        return text, 0
    spans: list[tuple[int, int, str]] = []
    for pattern, resolve in _RULES:
        for match in pattern.finditer(text):
            # The first rule to claim a stretch of text wins ("the day before yesterday").
            if any(s < match.end() and match.start() < e for s, e, _ in spans):
                continue
            spans.append((match.start(), match.end(), resolve(day, match)))
    if not spans:
        return text, 0
    out, last = [], 0
    for _start, end, resolved in sorted(spans):
        out.append(f"{text[last:end]} ({resolved})")
        last = end
    out.append(text[last:])
    return "".join(out), len(spans)
