"""Two end users of one agent and the agent's own memory, each with every kind of row an
erasure deletes, made through the JSON API as an agent makes them (issue 26): sessions named
with their user, the lifecycle's work in them (compaction's archive, marker, extracted facts
and summary; a rolling summary; a consolidation's HISTORY entry and MEMORY.md), and what the
agent saves for the user (a fact updated once, a note with an alias, a correction).

Each owner's words hold one word no one else uses, so a leak of theirs is a search away.
"""

from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urlencode

from tests.lifecycle.helpers import T0

AGENT_OWN = ""


@dataclass
class Owner:
    """One owner of rows (a user, or the agent: user "") and the word only they use."""

    user: str
    word: str
    prefix: str  # of their session keys and entry names
    session_ids: list = field(default_factory=list)

    @property
    def body(self) -> dict:
        """What a call for this owner adds to its body: their `user` (none for the agent)."""
        return {"user": self.user} if self.user else {}


def _ok(response, status=200) -> dict:
    assert response.status_code == status, response.content
    return response.json()


def _messages(owner: Owner, start, n: int) -> dict:
    texts = [
        f"{owner.prefix} turn {i}: my {owner.word} needs feeding at {i} o'clock" for i in range(n)
    ]
    return {
        "messages": [
            {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": t,
                "created_at": (start + timedelta(minutes=i)).isoformat(),
            }
            for i, t in enumerate(texts)
        ]
    }


def _session(api, owner: Owner, name: str, n: int, start) -> str:
    session = _ok(api.post("/sessions", {"key": f"{owner.prefix}-{name}", **owner.body}), 201)
    owner.session_ids.append(session["id"])
    _ok(api.post(f"/sessions/{session['id']}/messages", _messages(owner, start, n)), 201)
    return session["id"]


def _conversations(api, owner: Owner) -> None:
    """Two sessions: one compacted (its archive and marker; the facts extracted first), one
    summarised then consolidated (HISTORY, MEMORY.md)."""
    compacted = _session(api, owner, "a", 8, T0)
    _ok(api.post(f"/sessions/{compacted}/compact"))
    summarised = _session(api, owner, "b", 6, T0 + timedelta(days=1))
    _ok(api.post(f"/sessions/{summarised}/summarize"))
    _ok(api.post(f"/sessions/{summarised}/consolidate"))


def _memory(api, owner: Owner) -> None:
    """A fact updated once (a version), a note with an alias, a correction."""
    w, p, mine = owner.word, owner.prefix, owner.body
    fact = {"category": "pets", "key": f"{p}-pet", "value": f"a {w}", **mine}
    fact_id = _ok(api.post("/facts", fact), 201)["fact"]["id"]
    # an edit by id reaches the user's fact with their `user` (issue 39: else the agent's own)
    _ok(api.patch(f"/facts/{fact_id}?{urlencode(mine)}", {"value": f"an old {w} called Rex"}))
    note = {"name": f"notes/{p}.md", "content": f"Feed the {w} daily.", **mine}
    _ok(api.post("/entries", note), 201)
    _ok(api.post(f"/entries/notes/{p}.md/aliases", {"alias": f"notes/{p}-alias.md", **mine}), 201)
    correction = {"kind": "correction", "content": f"Call it a {w}, not a cat.", **mine}
    _ok(api.post("/learnings", correction), 201)


def seed(api, owner: Owner) -> Owner:
    """Every kind of row for `owner`, through the API."""
    # A window of 4 messages: the summary has older ones to fold in.
    _ok(api.patch("/agent/settings", {"settings": {"max_history_messages": 4}}))
    _conversations(api, owner)
    _memory(api, owner)
    return owner
