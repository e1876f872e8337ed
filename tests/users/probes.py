"""Probing a read path as one user: nothing of the other user may come back (none of their
words or their user id anywhere in the answer, none of their row ids), and every item of the
user's own and the agent's memory that the query names must. A probe records what went
wrong and the test goes on, so one run lists every failing probe."""

import json
from dataclasses import dataclass, field
from typing import Any

from tests.users.world import AGENT, AGENT_WORDS, ALICE, CAROLINE, GENERIC_QUERIES, Person, World

VIEWERS = (ALICE, CAROLINE)
# Each user's and the agent's distinctive words, then generic queries.
QUERIES = (*ALICE.words, *CAROLINE.words, *AGENT_WORDS, *GENERIC_QUERIES)

Found = dict[str, set]
# /memory/search's `source` of a hit, as the kind of row it is
SOURCES = {"document": "entry", "entry": "entry", "fact": "fact", "learning": "learning",
           "history": "history"}  # fmt: skip


def other_of(viewer: Person) -> Person:
    return CAROLINE if viewer is ALICE else ALICE


def answer_text(body: Any) -> str:
    """The answer as lowercase JSON, without the echo of the query the probe sent."""
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k != "query"}
    return json.dumps(body, ensure_ascii=False).lower()


@dataclass
class Probes:
    world: World
    count: int = 0
    failures: list[str] = field(default_factory=list)

    def owners(self, viewer: Person) -> tuple[str, str]:
        """Whose memory the viewer sees: the agent's and their own."""
        return (AGENT, viewer.user)

    def visible(self, viewer: Person, kind: str) -> set:
        """The ids of every `kind` row of the agent and the viewer."""
        return {i.id for owner in self.owners(viewer) for i in self.world.of(owner, kind)}

    def expect(
        self, query: str, viewer: Person, *kinds: str, owners: tuple[str, ...] | None = None
    ) -> Found:
        """The items of `kinds` whose text has `query`, of `owners` (the viewer's and the
        agent's by default): only for the distinctive words (a generic query's hits depend
        on ranking, not on owners)."""
        if query not in (*viewer.words, *AGENT_WORDS):
            return {}
        owners = owners or self.owners(viewer)
        return {k: self.world.containing(query, owners, k) for k in kinds}

    def answer(self, label: str, viewer: Person, response, status: int = 200) -> Any:
        """The body of a probe's response, None (recorded) when the status is not `status`."""
        self.count += 1
        if response.status_code != status:
            self.failures.append(
                f"{label} as {viewer.name}: {response.status_code} {response.content[:300]!r}"
            )
            return None
        if not response.content or not response["Content-Type"].startswith("application/json"):
            return {}  # a file (the workspace export) or no body: the caller reads it
        return response.json()

    def check(
        self, label: str, viewer: Person, body: Any, found: Found, expected: Found | None = None
    ) -> None:
        """Nothing of the other user in `body` or among `found` ids (by kind); every id of
        `expected` among `found`."""
        other = other_of(viewer)
        text = answer_text(body)
        marks = [*other.words, other.user]
        words = [m for m in marks if m.lower() in text]
        theirs = {k: sorted(ids & self.world.ids(other.user, k)) for k, ids in found.items()}
        leaked = {k: ids for k, ids in theirs.items() if ids}
        if words or leaked:
            self.failures.append(f"{label} as {viewer.name}: {other.name}'s {words} {leaked}")
        missing = {k: sorted(ids - found.get(k, set())) for k, ids in (expected or {}).items()}
        missing = {k: ids for k, ids in missing.items() if ids}
        if missing:
            self.failures.append(f"{label} as {viewer.name}: own or agent items missing {missing}")

    def lines_in(self, label: str, viewer: Person, text: str, documents: list[str]) -> None:
        """Every line of each document (headings and list marks aside) is in `text`."""
        lines = [line.lstrip("#- ").strip() for doc in documents for line in doc.splitlines()]
        absent = [line for line in lines if line and line not in text]
        if absent:
            self.failures.append(f"{label} as {viewer.name}: lines missing {absent}")
