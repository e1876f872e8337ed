"""Every read of the API, as issue 39's safe-default suite calls it: for each operation of the
live OpenAPI schema that reads (its GET operations and the POST reads), how to call it over
the world of tests/users/world.py with a given `how` (nothing, `user`, `all_users`, a
session), what ids of which kind of row its answer holds, and which of the world's rows
must be among them when a set of owners is visible."""

import io
import json
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memoryhub.api import api as ninja_api
from tests.support.client import ApiClient
from tests.users.world import AGENT, AGENT_WORDS, ALICE, CAROLINE, OPS_KEY, PEOPLE, World

PREFIX = "/api/v1"
# The POST operations that read: they take a query and return memory, storing none.
POST_READS = {"/search", "/memory/search", "/memory/recall", "/context", "/errors/search"}
# Every distinctive word of the world: the searches ask for each.
WORDS = (*ALICE.words, *CAROLINE.words, *AGENT_WORDS)
# Entries by name and who has one of that name.
ENTRY_NAMES = {
    "notes/alice.md": (ALICE.user,),
    "notes/caroline.md": (CAROLINE.user,),
    "USER.md": (ALICE.user, CAROLINE.user),
    "MEMORY.md": (AGENT,),  # the users' own too, when consolidation wrote them
    "notes/shop.md": (AGENT,),
}

Found = dict[str, set]


@dataclass(frozen=True)
class Call:
    """One request of a probe and the owners of the row it names (None: it names none, so it
    answers 200 whoever looks; else 200 when one of them is visible, 404 when none is)."""

    label: str
    response: Any
    owners: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Read:
    """One read operation: its calls for a `how`, the ids its answers hold by kind, and what
    must be found among them (`expect(world, visible)`; `exact`: nothing else of its kind)."""

    method: str
    path: str  # as the schema names it, without the /api/v1 prefix
    ask: Callable[[ApiClient, World, dict], list[Call]]
    found: Callable[[Any], Found] = lambda body: {}
    expect: Callable[[World, tuple[str, ...]], Found] = lambda world, visible: {}
    exact: bool = False
    shows: tuple[str, ...] = field(default=())  # kinds whose every visible row's text is shown
    # With `user`, that user's rows alone, not the agent's (a filter, not an audience).
    own_only: bool = False


def declared(method: str, path: str) -> set[str]:
    """The query parameters and body properties the live schema declares for the operation."""
    schema = ninja_api.get_openapi_schema()
    op = schema["paths"][PREFIX + path][method]
    names = {p["name"] for p in op.get("parameters", [])}
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
    ref = body.get("schema", {}).get("$ref", "")
    if ref:
        names |= set(schema["components"]["schemas"][ref.split("/")[-1]].get("properties", {}))
    return names


def schema_reads() -> set[tuple[str, str]]:
    """(method, path) of every GET operation and every POST read in the live schema."""
    paths = ninja_api.get_openapi_schema()["paths"]
    return {
        (method, path.removeprefix(PREFIX))
        for path, ops in paths.items()
        for method in ops
        if method == "get" or (method == "post" and path.removeprefix(PREFIX) in POST_READS)
    }


def query_of(how: dict) -> dict:
    return {k: ("true" if v is True else v) for k, v in how.items()}


def body_text(response) -> str:
    """The answer as lowercase text: JSON, or every file of a .tar.gz."""
    if response["Content-Type"].startswith("application/gzip"):
        with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as tar:
            files = [tar.extractfile(m) for m in tar.getmembers() if m.isfile()]
            return "\n".join(f.read().decode() for f in files if f is not None).lower()
    if not response.content:
        return ""
    body = response.json()
    if isinstance(body, dict):  # not the echo of the query the probe sent
        body = {k: v for k, v in body.items() if k != "query"}
    return json.dumps(body, ensure_ascii=False).lower()


def _ids(body: Any, kind: str, key: str = "items") -> Found:
    return {kind: {row["id"] for row in body[key]}}


def _rows(kind: str) -> Callable[[World, tuple[str, ...]], Found]:
    return lambda world, visible: {kind: {i.id for o in visible for i in world.of(o, kind)}}


def matching(*kinds: str) -> Callable[[World, tuple[str, ...]], Found]:
    """The rows of `kinds` the visible owners hold that contain one of WORDS."""
    return lambda world, visible: {
        k: {i for w in WORDS for i in world.containing(w, visible, k)} for k in kinds
    }


def _listing(path: str, kind: str, **params: Any) -> Callable:
    return lambda api, world, how: [
        Call(f"GET {path}", api.get(path, {"limit": 100, **params, **query_of(how)}))
    ]


def _each(kind: str, path: str) -> Callable:
    """GET path (with {id}) for every `kind` row of the world, the row's owner named."""
    return lambda api, world, how: [
        Call(f"GET {url}", api.get(url, query_of(how)), (i.owner,))
        for i in world.items
        if i.kind == kind and (url := path.format(id=i.id))
    ]


def _entries_by_name(api: ApiClient, world: World, how: dict) -> list[Call]:
    return [
        Call(f"GET /entries/{name}", api.get(f"/entries/{name}", query_of(how)), owners)
        for name, owners in ENTRY_NAMES.items()
    ]


def _searches(method: str, path: str, param: str, **extra: Any) -> Callable:
    def ask(api: ApiClient, world: World, how: dict) -> list[Call]:
        call = api.post if method == "post" else api.get
        args = query_of(how) if method == "get" else how
        return [Call(f"{method.upper()} {path} {w!r}", call(path, {param: w, **extra, **args}))
                for w in WORDS]  # fmt: skip

    return ask


def _context(api: ApiClient, world: World, how: dict) -> list[Call]:
    """get_context in the session `how` names, else the named user's, else the agent's."""
    by_user = {p.user: p.session_key for p in PEOPLE}
    session = how.get("session_id") or by_user.get(how.get("user", ""), OPS_KEY)
    rest = {k: v for k, v in how.items() if k != "session_id"}
    return [
        Call(f"POST /context {w!r}", api.post("/context", {"session_id": session, "query": w,
                                                          "lifecycle": "off", **rest}))
        for w in (*ALICE.words[:2], *CAROLINE.words[:2], *AGENT_WORDS[:2])
    ]  # fmt: skip


def _ops(path: str) -> Callable:
    """A session-addressed read, on the agent's own session (one without a user)."""
    return lambda api, world, how: [
        Call(f"GET {path}", api.get(path.format(id=OPS_KEY), query_of(how)))
    ]


def _plain(path: str) -> Callable:
    return lambda api, world, how: [Call(f"GET {path}", api.get(path, query_of(how)))]


def messages_found(body: Any) -> Found:
    hits = {h["id"] for h in body["hits"]}
    return {"message": hits | {m["id"] for w in body["windows"] for m in w["messages"]}}


def sources_found(body: Any) -> Found:
    kinds = {"document": "entry", "entry": "entry", "fact": "fact", "learning": "learning",
             "history": "history"}  # fmt: skip
    found: Found = {k: set() for k in set(kinds.values())}
    for item in body["items"]:
        found[kinds[item["source"]]].add(item["id"])
    return found


def context_found(body: Any) -> Found:
    memory = {m["id"] for w in body["memory"] for m in w["messages"]}
    return {
        "fact": {f["id"] for f in body["system"]["facts"]},
        "message": {m["id"] for m in body["messages"]} | memory,
    }


def _context_expect(world: World, visible: tuple[str, ...]) -> Found:
    """The messages of the session get_context ran in: the user's (the last visible owner)."""
    return {"message": world.ids(visible[-1], "message")}


READS = [
    Read("get", "/facts", _listing("/facts", "fact"), lambda b: _ids(b, "fact"),
         _rows("fact"), exact=True),
    Read("get", "/facts/{fact_id}", _each("fact", "/facts/{id}"),
         lambda b: {"fact": {b["id"]}}),
    Read("get", "/facts/{fact_id}/versions", _each("fact", "/facts/{id}/versions")),
    Read("get", "/learnings", _listing("/learnings", "learning"),
         lambda b: _ids(b, "learning"), _rows("learning"), exact=True),
    Read("get", "/learnings/{learning_id}", _each("learning", "/learnings/{id}"),
         lambda b: {"learning": {b["id"]}}),
    Read("get", "/memory/history", _listing("/memory/history", "history"),
         lambda b: _ids(b, "history"), _rows("history"), exact=True),
    Read("get", "/memory/history/files/{name}", _plain("/memory/history/files/memory/HISTORY.md"),
         shows=("history",)),
    Read("get", "/runs", _listing("/runs", "run"), lambda b: _ids(b, "run"), _rows("run"),
         exact=True),
    Read("get", "/runs/{run_id}", _each("run", "/runs/{id}"), lambda b: {"run": {b["id"]}}),
    Read("get", "/sessions", _listing("/sessions", "session"), lambda b: _ids(b, "session"),
         _rows("session"), exact=True, own_only=True),
    Read("get", "/entries", _listing("/entries", "entry"), lambda b: _ids(b, "entry"),
         _rows("entry")),
    Read("get", "/entries/search", _searches("get", "/entries/search", "q", limit=50),
         lambda b: {"entry": {h["entry"]["id"] for h in b["items"]}}, matching("entry")),
    Read("get", "/entries/{name}", _entries_by_name, lambda b: {"entry": {b["id"]}}),
    Read("get", "/workspace/export", _plain("/workspace/export"), shows=("entry",),
         own_only=True),
    Read("get", "/sessions/{session_id}", _ops("/sessions/{id}")),
    Read("get", "/sessions/{session_id}/messages", _ops("/sessions/{id}/messages"),
         lambda b: _ids(b, "message"), _rows("message"), exact=True),
    Read("get", "/sessions/{session_id}/window", _ops("/sessions/{id}/window")),
    Read("get", "/agent", _plain("/agent")),
    Read("get", "/team/AGENTS.md", _plain("/team/AGENTS.md")),
    Read("get", "/search/status", _plain("/search/status")),
    Read("post", "/search", _searches("post", "/search", "query", mode="keyword", k=50),
         messages_found, matching("message")),
    Read("post", "/memory/search", _searches("post", "/memory/search", "query", k=50),
         sources_found, matching("fact", "entry", "learning", "history")),
    Read("post", "/memory/recall", _searches("post", "/memory/recall", "query", k=20),
         lambda b: {"fact": {h["fact"]["id"] for h in b["items"]}}, matching("fact")),
    Read("post", "/context", _context, context_found, _context_expect),
]  # fmt: skip

# Error memory is agent-wide: a tool's failures, for every user (issue 39 point 1 shows the
# raw request to the user it came from alone).
READS += [
    Read("get", "/errors", _plain("/errors")),
    Read("get", "/errors/{error_id}", lambda api, world, how: [
        Call(f"GET /errors/{e['id']}", api.get(f"/errors/{e['id']}", query_of(how)))
        for e in api.get("/errors", {"limit": 100}).json()["items"]
    ]),
    Read("post", "/errors/search", _searches("post", "/errors/search", "query")),
]  # fmt: skip

# GET /users is the directory of the agent's users (names and session counts, to erase one):
# no user's memory; a user-bound key's confinement covers it.
NOT_MEMORY = {("get", "/users")}
