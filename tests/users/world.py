"""Two end users of one agent (issue 26), built through the JSON API as an agent would: Alice
("telegram:1") and Caroline ("telegram:2"), each with a session, messages, a failing tool
call, a fact, a note, USER.md, a correction and a HISTORY entry (consolidation without an LLM
writes one), plus the agent's own memory of every kind. Each item carries a word no other
item has, so a probe can tell exactly whose memory a read returned."""

from dataclasses import dataclass, field
from typing import Any

from tests.support.client import ApiClient

AGENT = ""  # the owner of the agent's own memory, as apps.agents.users.AGENT


@dataclass(frozen=True)
class Person:
    """An end user and the words that only their memory contains."""

    user: str
    name: str
    session_key: str
    messages: tuple[str, ...]  # the user's lines (each followed by an assistant line)
    request: str  # then a request whose tool call fails (error memory captures both)
    tool: str
    fact: str
    note: str
    user_md: str
    correction: str
    words: tuple[str, ...]  # every distinctive word of the person's memory


ALICE = Person(
    user="telegram:1",
    name="Alice",
    session_key="alice-chat",
    messages=(
        "I am vegetarian and I live in Lisbon.",
        "I play the saxophone in a jazz band.",
    ),
    request="Please book the Alfama tram for me.",
    tool="book_tram",
    fact="Alice adores marzipan",
    note="Alice paddles a kayak on weekends.",
    user_md="# User\n\nAlice was born in Reykjavik.\n",
    correction="Alice's dog is called Biscuit, not Cookie.",
    words=(
        "vegetarian",
        "Lisbon",
        "saxophone",
        "marzipan",
        "kayak",
        "Reykjavik",
        "Biscuit",
        "Alfama",
    ),
)
CAROLINE = Person(
    user="telegram:2",
    name="Caroline",
    session_key="caroline-chat",
    messages=(
        "I moved to Zanzibar last spring and I fold origami cranes.",
        "I play the cello in an orchestra.",
    ),
    request="Please order the ferry to Kizimkazi for me.",
    tool="order_ferry",
    fact="Caroline is allergic to pistachio",
    note="Caroline keeps a tarantula named Rosie.",
    user_md="# User\n\nCaroline was born in Valparaiso.\n",
    correction="Caroline's cat is called Mochi, not Miso.",
    words=(
        "Zanzibar",
        "origami",
        "cello",
        "pistachio",
        "tarantula",
        "Valparaiso",
        "Mochi",
        "Kizimkazi",
    ),
)
PEOPLE = (ALICE, CAROLINE)

# The agent's own memory: a session without a user, facts, a note, MEMORY.md and a
# correction, some written from a user's session with "scope": "agent".
OPS_KEY = "ops"
OPS_MESSAGES = ("We restocked the Fjord lamps today.", "The Fjord lamps sell well in winter.")
AGENT_FACT_FROM_ALICE = "The courier is Quokka Express"
AGENT_FACT_FROM_CAROLINE = "Returns go through the Nimbus desk"
AGENT_NOTE = "The shop mascot is a Pangolin."
AGENT_MEMORY_MD = "# Memory\n\n- The warehouse is in Gdansk.\n"
AGENT_CORRECTION = "The store is Zephyr Goods, not Zephyr Shop."
AGENT_WORDS = ("Fjord", "Quokka", "Nimbus", "Pangolin", "Gdansk", "Zephyr")

GENERIC_QUERIES = ("what does the user like", "music", "born", "called", "memory")


@dataclass(frozen=True)
class Item:
    """One stored row: its kind ("message", "fact", "entry", "learning", "history", "run",
    "session"), its id, its owner (AGENT or a user) and its text."""

    kind: str
    id: Any
    owner: str
    text: str = ""


@dataclass
class World:
    sessions: dict[str, dict] = field(default_factory=dict)  # by owner (AGENT: ops)
    items: list[Item] = field(default_factory=list)
    memory_md: dict[str, str] = field(default_factory=dict)  # each user's own MEMORY.md

    def add(self, kind: str, id: Any, owner: str, text: str = "") -> None:
        self.items.append(Item(kind, id, owner, text))

    def of(self, owner: str, kind: str | None = None) -> list[Item]:
        return [i for i in self.items if i.owner == owner and kind in (None, i.kind)]

    def ids(self, owner: str, kind: str) -> set:
        return {i.id for i in self.of(owner, kind)}

    def containing(self, word: str, owners: tuple[str, ...], kind: str) -> set:
        """The ids of `kind` items of `owners` whose text has `word` (case-insensitive)."""
        return {
            i.id
            for i in self.items
            if i.kind == kind and i.owner in owners and word.lower() in i.text.lower()
        }


def ok(response, status: int = 200) -> Any:
    assert response.status_code == status, (response.status_code, response.content[:500])
    return response.json()


def _chat(lines: tuple[str, ...]) -> list[dict]:
    """Each line said by the user, each answered by the assistant."""
    return [
        {"role": role, "content": text}
        for line in lines
        for role, text in [("user", line), ("assistant", "Thanks, noted.")]
    ]


def _failure(p: Person) -> list[dict]:
    """The person's request, then the tool call for it failing (error memory and an error
    learning capture it, quoting the request)."""
    return [
        {"role": "user", "content": p.request},
        {"role": "tool", "tool_name": p.tool, "content": "timeout: no answer", "is_error": True},
    ]


def _append(api: ApiClient, world: World, owner: str, key: str, batch: list[dict]) -> None:
    body = ok(api.post(f"/sessions/{key}/messages", {"messages": batch}), 201)
    for message in body["messages"]:
        world.add("message", message["id"], owner, message["content"])


def _consolidate(api: ApiClient, world: World, owner: str, key: str) -> None:
    runs = ok(api.post(f"/sessions/{key}/consolidate"))["runs"]
    assert [(r["kind"], r["status"]) for r in runs] == [("consolidate", "fallback")], runs
    for run in runs:
        world.add("run", run["id"], owner)


def _person(api: ApiClient, world: World, p: Person) -> None:
    session = ok(api.post("/sessions", {"key": p.session_key, "user": p.user}), 201)
    assert session["user"] == p.user
    world.sessions[p.user] = session
    world.add("session", session["id"], p.user, p.session_key)
    _append(api, world, p.user, p.session_key, _chat(p.messages) + _failure(p))

    saved = ok(api.post("/memory/save", {"content": p.fact, "session_id": p.session_key}))
    world.add("fact", saved["fact"]["id"], p.user, saved["fact"]["value"])
    note = ok(api.post("/entries", {"name": f"notes/{p.name.lower()}.md", "content": p.note,
                                    "user": p.user}), 201)  # fmt: skip
    world.add("entry", note["id"], p.user, p.note)
    user_md = ok(api.post("/entries", {"name": "USER.md", "content": p.user_md, "user": p.user}),
                 201)  # fmt: skip
    world.add("entry", user_md["id"], p.user, p.user_md)
    learning = ok(api.post("/learnings", {"kind": "correction", "content": p.correction,
                                          "session_id": p.session_key}), 201)  # fmt: skip
    world.add("learning", learning["id"], p.user, p.correction)


def _agent_memory(api: ApiClient, world: World) -> None:
    ops = ok(api.post("/sessions", {"key": OPS_KEY}), 201)
    world.sessions[AGENT] = ops
    world.add("session", ops["id"], AGENT, OPS_KEY)
    _append(api, world, AGENT, OPS_KEY, _chat(OPS_MESSAGES))
    memory_md = ok(api.post("/entries", {"name": "MEMORY.md", "content": AGENT_MEMORY_MD}), 201)
    world.add("entry", memory_md["id"], AGENT, AGENT_MEMORY_MD)
    # agent-wide calls that name a user but say "scope": "agent" write the agent's memory
    note = ok(api.post("/entries", {"name": "notes/shop.md", "content": AGENT_NOTE,
                                    "user": ALICE.user, "scope": "agent"}), 201)  # fmt: skip
    world.add("entry", note["id"], AGENT, AGENT_NOTE)
    for person, text in [(ALICE, AGENT_FACT_FROM_ALICE), (CAROLINE, AGENT_FACT_FROM_CAROLINE)]:
        saved = ok(api.post("/memory/save", {"content": text, "session_id": person.session_key,
                                             "scope": "agent"}))  # fmt: skip
        world.add("fact", saved["fact"]["id"], AGENT, saved["fact"]["value"])
    learning = ok(api.post("/learnings", {"kind": "correction", "content": AGENT_CORRECTION,
                                          "session_id": CAROLINE.session_key,
                                          "scope": "agent"}), 201)  # fmt: skip
    world.add("learning", learning["id"], AGENT, AGENT_CORRECTION)


def _history_and_documents(api: ApiClient, world: World) -> None:
    """HISTORY entries and the users' MEMORY.md come from consolidation; read them back
    for every user (`all_users`) to know their ids."""
    for owner, key in [(ALICE.user, ALICE.session_key), (CAROLINE.user, CAROLINE.session_key),
                       (AGENT, OPS_KEY)]:  # fmt: skip
        _consolidate(api, world, owner, key)
    by_session = {s["id"]: owner for owner, s in world.sessions.items()}
    for entry in ok(api.get("/memory/history", {"limit": 100, "all_users": 1}))["items"]:
        world.add("history", entry["id"], by_session[entry["session_id"]], entry["content"])
    # error learnings the failing tool calls captured: whoever the API says they belong to
    errors = ok(api.get("/learnings", {"kind": "error", "limit": 100, "all_users": 1}))["items"]
    for learning in errors:
        world.add("learning", learning["id"], learning["user"] or AGENT, learning["content"])
    for p in PEOPLE:
        # the user's own MEMORY.md (test_scopes checks that consolidation wrote it)
        memory_md = ok(api.get("/entries/MEMORY.md", {"user": p.user}))
        world.memory_md[p.user] = memory_md["content"] if memory_md["user"] == p.user else ""
        if memory_md["user"] == p.user:
            world.add("entry", memory_md["id"], p.user, memory_md["content"])


def build(api: ApiClient) -> World:
    """The two users' and the agent's memory, through the API."""
    world = World()
    for p in PEOPLE:
        _person(api, world, p)
    _agent_memory(api, world)
    _history_and_documents(api, world)
    return world
