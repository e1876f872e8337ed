"""A deterministic scrubber of personal data (issue 39): what one user's failure shows to
the agent's other users. Pattern rules and the caller's terms; no model call.

Each rule replaces what it finds with a stable placeholder, so one failure scrubbed twice,
or the same failure of two users, reads the same (error memory dedups on this form):

  [credentials]  the user:password of a URL (scheme and host kept)
  [token]        API keys and tokens by pattern (sk-, ghp_, xoxb-, AKIA, JWT, Bearer, mh_)
                 and long high-entropy runs (>= 32 characters of hex, or base64 mixing
                 upper case, lower case and digits)
  [email]        e-mail addresses
  [iban]         IBANs, spaces allowed, whose mod-97 checksum holds
  [card]         13-19 digits (spaces or dashes between) whose Luhn checksum holds
  [number]       any other run of 13 or more digits: an account, an order or a national id
                 number reads as much as a card does, so it goes too
  [ip]           IPv4 and IPv6 addresses
  [phone]        +CC numbers; (555) 123-4567 and 555-123-4567; a national number that
                 starts with 0 and has 9-12 digits
  [user]         the `user` identifier the caller names
  [name]         each of the caller's `terms` (the names and values the user's facts hold),
                 case-insensitively, on word boundaries, the longest first; a term shorter
                 than 3 characters, or a stopword, is ignored

What stays: tool names, error words ("quota exceeded"), status codes ("HTTP 429"), small
numbers ("line 12"), ISO dates and times, version numbers ("v1.2.3"), and UUIDs (request
and record ids, which error memory's dedup ignores anyway; a UUID that names a person is one
of the caller's terms).
"""

import ipaddress
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

MIN_TERM = 3
MAX_TERM = 200  # a longer fact value is not looked for whole (its names still are)
STOPWORDS = frozenset(
    "the and for are but not you all any can her was one our out day get has him his how "
    "man new now old see two way who boy did its let put say she too use yes this that with "
    "from have they will your what when where which their there about would these other "
    "error failed true false none null user name value key".split()
    # the placeholders themselves
    + "credentials token email iban card number phone".split()
)

_CREDENTIALS = re.compile(r"\b([a-z][a-z0-9+.-]*://)[^\s/@:]+(?::[^\s/@]*)?@", re.IGNORECASE)
_BEARER = re.compile(r"\bBearer\s+[A-Za-z0-9._~+/=-]{8,}")
_TOKENS = [
    re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
    re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"),
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),
    re.compile(r"\bmh_[0-9a-f]{8}_[A-Za-z0-9_-]{16,}"),
]
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_LONG_RUN = re.compile(r"(?<![\w+/=-])[A-Za-z0-9+/_-]{32,}={0,2}(?![\w+/=-])")
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![\w.+-])\d(?:[ -]?\d){12,}(?![\w.])")
_IPV4 = re.compile(r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}"
                   r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?![\w.])")  # fmt: skip
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
_PHONES = [
    re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,6}(?![\w])"),
    re.compile(r"(?<![\w(])\(\d{3}\) ?\d{3}[ .-]\d{4}\b"),
    re.compile(r"(?<![\w.-])\d{3}[.-]\d{3}[.-]\d{4}(?![\w.-])"),
    re.compile(r"(?<![\w.:/-])0\d{1,4}(?:[ -]?\d{2,4}){1,4}(?![\w.:/-])"),
]
_DATE_LIKE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}")


def _iban_ok(compact: str) -> bool:
    """The mod-97 check of an IBAN without spaces (ISO 13616)."""
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved.upper())) % 97 == 1


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def _iban(match: re.Match[str]) -> str:
    """The longest prefix of the match that is a valid IBAN ending on a word boundary
    becomes [iban]; the rest stays (an upper-case word after it is no part of it)."""
    text = match.group()
    for end in range(len(text), 14, -1):
        if end < len(text) and text[end].isalnum() and text[end - 1].isalnum():
            continue
        head = text[:end].rstrip()
        if _iban_ok(head.replace(" ", "")):
            return "[iban]" + text[len(head) :]
    return text


def _long_digits(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group())
    if 13 <= len(digits) <= 19 and _luhn_ok(digits):
        return "[card]"
    return "[number]"


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _long_run(match: re.Match[str]) -> str:
    """A hex run, or a base64 run mixing cases and digits, with enough entropy: a secret.
    A UUID, a snake_case name or a word stays."""
    text = match.group()
    if _UUID.fullmatch(text):
        return text
    core = text.rstrip("=")
    if re.fullmatch(r"[0-9a-fA-F]+", core):
        return "[token]" if _entropy(core) >= 3.0 else text
    mixed = all(re.search(p, core) for p in (r"[a-z]", r"[A-Z]", r"\d"))
    return "[token]" if mixed and _entropy(core) >= 3.5 else text


def _ipv6(match: re.Match[str]) -> str:
    text = match.group()
    groups = [part for part in text.split(":") if part]
    # "a::b" or "::1" is rather C++ or loopback than someone's address
    if len(groups) < 3 and not any(len(part) >= 3 for part in groups):
        return text
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return text
    return "[ip]"


def _phone(match: re.Match[str]) -> str:
    text = match.group()
    digits = sum(ch.isdigit() for ch in text)
    if text.startswith("+"):
        return "[phone]" if 8 <= digits <= 15 else text
    if text.startswith("0") and (_DATE_LIKE.match(text) or not 9 <= digits <= 12):
        return text
    return "[phone]"


Rule = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]

# In this order: credentials and tokens before e-mail (a URL's user:pass@host is no address)
# and before the digit rules (a token holds digits); IBANs and cards before phones.
RULES: list[Rule] = [
    (_CREDENTIALS, r"\1[credentials]@"),
    (_BEARER, "Bearer [token]"),
    *[(pattern, "[token]") for pattern in _TOKENS],
    (_LONG_RUN, _long_run),
    (_EMAIL, "[email]"),
    (_IBAN, _iban),
    (_DIGITS, _long_digits),
    (_IPV4, "[ip]"),
    (_IPV6, _ipv6),
    *[(pattern, _phone) for pattern in _PHONES],
]


def usable_terms(terms: Iterable[str]) -> list[str]:
    """The terms worth looking for: stripped, 3-200 characters, not a stopword, each once
    (case-insensitively), the longest first."""
    seen: dict[str, str] = {}
    for term in terms:
        text = " ".join(str(term).split())
        folded = text.casefold()
        if MIN_TERM <= len(text) <= MAX_TERM and folded not in STOPWORDS:
            seen.setdefault(folded, text)
    return sorted(seen.values(), key=lambda t: (-len(t), t.casefold()))


def person_terms(*, user: str, values: Iterable[str]) -> list[str]:
    """The terms for one user's failures: their identifier, and each value their facts hold
    with the capitalised words in it (a name written "Jensen, Carol" is still found)."""
    found = [user]
    for value in values:
        text = " ".join(str(value).split())
        found.append(text)
        found += re.findall(r"\b[A-Z][\w'-]{2,}", text)
    return usable_terms(term for term in found if term)


# A capitalised word beside a known name is the rest of that name ("Bruno Ferreira", where
# only "bruno" is known): case-sensitive inside the case-insensitive term pattern, and not an
# all-capitals word ("IBAN").
_CAPITALISED = r"(?-i:[A-Z][a-z][\w'-]*)"
_WORDS = re.compile(r"[^\W\d_]+(?:[\s'-]+[^\W\d_]+)*")


def _term_pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    usable = usable_terms(terms)
    if not usable:
        return None
    alternatives = "|".join(re.escape(term).replace(r"\ ", r"\s+") for term in usable)
    return re.compile(
        rf"(?<!\w)(?P<pre>(?:{_CAPITALISED}\s+){{0,2}})(?P<core>{alternatives})"
        rf"(?P<post>(?:\s+{_CAPITALISED}){{0,2}})(?!\w)",
        re.IGNORECASE,
    )


def scrub_text(text: str, *, terms: Sequence[str] = (), user: str = "") -> str:
    """`text` with personal data masked by RULES, then, in one pass, the longest first,
    `user` as [user] and each of `terms` as [name]; a term that is a word, with the
    capitalised words beside it, is one [name]."""
    if not text:
        return text
    for pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    names = _term_pattern([*terms, user] if user else terms)
    if names is None:
        return text
    own = " ".join(user.split()).casefold()

    def placeholder(match: re.Match[str]) -> str:
        pre, core, post = match.group("pre", "core", "post")
        if (pre or post) and _WORDS.fullmatch(core):
            return "[name]"  # a known name's neighbours are the rest of the name
        shown = "[user]" if " ".join(core.split()).casefold() == own else "[name]"
        return pre + shown + post  # an identifier ("telegram:42") has no name around it

    return names.sub(placeholder, text)


# Any: any JSON value (json.loads' own type)
def scrub_value(value: Any, *, terms: Sequence[str] = (), user: str = "") -> Any:
    """A JSON value with every string in it scrubbed (scrub_text); keys, numbers and the
    shape are kept."""
    if isinstance(value, str):
        return scrub_text(value, terms=terms, user=user)
    if isinstance(value, int) and not isinstance(value, bool):
        # A card or account number sent as a JSON number.
        shown = scrub_text(str(value), terms=terms, user=user)
        return value if shown == str(value) else shown
    if isinstance(value, dict):
        return {key: scrub_value(item, terms=terms, user=user) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub_value(item, terms=terms, user=user) for item in value]
    return value


@dataclass(frozen=True)
class Scrubber:
    """scrub_text and scrub_value for one person: their `user` identifier and `terms`.
    Scrubber() applies the pattern rules alone."""

    user: str = ""
    terms: tuple[str, ...] = ()

    def text(self, text: str) -> str:
        return scrub_text(text, terms=self.terms, user=self.user)

    def value(self, value: Any) -> Any:  # Any: any JSON value (json.loads' own type)
        return scrub_value(value, terms=self.terms, user=self.user)
