"""Entry names of LangGraph items: namespace ("users", "alice") and key "food" are the
entry `users/alice/food.json`, reversibly.

The ".json" keeps an item's name from ever being the folder of another namespace's items
(memoryhub refuses a name that is also a path's folder: names are file paths on export),
and steers clear of memoryhub's reserved names (memory/HISTORY.md, learnings/*.md, a last
segment "aliases"). In each label and key, '%', '/', '\\', control characters and a leading
or trailing space are %-escaped, and so is a key's '.' that would make '..' (labels hold no
'.': LangGraph refuses them), as memoryhub's name rules ask (apps/entries/names.py).
"""

from __future__ import annotations

import re

SUFFIX = ".json"
ESCAPED = re.compile(r"[%/\\\x00-\x1f\x7f]")


def _escape_segment(text: str, *, key: bool) -> str:
    if not text:
        raise ValueError("a namespace label or key must not be empty")
    out = ESCAPED.sub(lambda m: f"%{ord(m.group()):02X}", text)
    if out[0].isspace():
        out = f"%{ord(out[0]):02X}" + out[1:]
    if out[-1].isspace():
        out = out[:-1] + f"%{ord(out[-1]):02X}"
    if key:
        # A '.' before another '.', or last (before the suffix's own), would make '..'.
        chars = list(out)
        for i, ch in enumerate(chars):
            if ch == "." and (i == len(chars) - 1 or chars[i + 1] == "."):
                chars[i] = "%2E"
        out = "".join(chars)
    return out


def _unescape(text: str) -> str:
    return re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), text)


def entry_name(namespace: tuple[str, ...], key: str, *, prefix: str = "") -> str:
    """The entry name of item `key` in `namespace`."""
    if not namespace:
        raise ValueError("the namespace must not be empty")
    segments = [_escape_segment(label, key=False) for label in namespace]
    path = "/".join([*segments, _escape_segment(key, key=True) + SUFFIX])
    return f"{prefix}/{path}" if prefix else path


def folder(namespace_prefix: tuple[str, ...], *, prefix: str = "") -> str:
    """The entry-name prefix of every item under `namespace_prefix` ("users/ana/"; "" for
    the whole store without a prefix)."""
    segments = [_escape_segment(label, key=False) for label in namespace_prefix]
    path = "".join(f"{s}/" for s in segments)
    return f"{prefix}/{path}" if prefix else path


def parse_name(name: str, *, prefix: str = "") -> tuple[tuple[str, ...], str] | None:
    """(namespace, key) of an item's entry name; None for an entry that is not an item."""
    if prefix:
        if not name.startswith(prefix + "/"):
            return None
        name = name[len(prefix) + 1 :]
    if not name.endswith(SUFFIX):
        return None
    segments = name[: -len(SUFFIX)].split("/")
    if len(segments) < 2 or not all(segments) or any("." in s for s in segments[:-1]):
        return None
    return tuple(_unescape(s) for s in segments[:-1]), _unescape(segments[-1])


def valid_prefix(prefix: str) -> bool:
    """A folder memoryhub takes in an entry name (apps/entries/names.py's rules)."""
    segments = prefix.split("/")
    return (
        ".." not in prefix
        and not ESCAPED.search(prefix.replace("/", ""))
        and prefix == prefix.strip()
        and segments[0] != ".memoryhub"
        and all(s and s != "." for s in segments)
    )
