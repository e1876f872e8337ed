"""Issue 39: reads are safe by default. Every read operation of the live OpenAPI schema (its
GET operations and the POST reads, tests/users/reads.py) is called over two users' and the
agent's memory: without `user` or `all_users` (and in a session without a user) it returns
the agent's rows and nothing of any user (no word, no user id, no row id); with `all_users`
both users' rows; with `user` that user's and the agent's, never the other's. `user` with
`all_users`, or a session with `all_users`, is a 422 naming `all_users`."""

from collections import defaultdict

import pytest

from tests.users.reads import (
    NOT_MEMORY,
    READS,
    Found,
    Read,
    body_text,
    declared,
    schema_reads,
)
from tests.users.world import AGENT, ALICE, CAROLINE, OPS_KEY, PEOPLE, World

pytestmark = pytest.mark.django_db

EVERYONE = (AGENT, ALICE.user, CAROLINE.user)


def _visible(read: Read, how: dict) -> tuple[str, ...]:
    """Whose rows a call `how` may return."""
    if how.get("all_users"):
        return EVERYONE
    if "user" in how:
        return (how["user"],) if read.own_only else (AGENT, how["user"])
    return (AGENT,)


def _answers(api, world: World, read: Read, how: dict, visible: tuple[str, ...]):
    """The read's calls: failures for a wrong status, the text and ids of the 200s."""
    failures, texts, found = [], [], defaultdict(set)
    for call in read.ask(api, world, how):
        seen = call.owners is None or set(call.owners) & set(visible)
        want = 200 if seen else 404
        if call.response.status_code != want:
            failures.append(f"{call.label} {how}: {call.response.status_code}, not {want}: "
                            f"{call.response.content[:200]!r}")  # fmt: skip
            continue
        if want == 200:
            texts.append(body_text(call.response))
            if call.response["Content-Type"].startswith("application/json"):
                for kind, ids in read.found(call.response.json()).items():
                    found[kind] |= ids
    return failures, "\n".join(texts), found


def _shown(world: World, read: Read, visible: tuple[str, ...], text: str) -> list[str]:
    """The lines of the visible rows of `read.shows` kinds that the answer lacks."""
    rows = [i for o in visible for kind in read.shows for i in world.of(o, kind)]
    lines = [line.lstrip("#- ").strip().lower() for i in rows for line in i.text.splitlines()]
    return [line for line in lines if line and line not in text]


def probe(api, world: World, read: Read, how: dict) -> list[str]:
    """What went wrong calling `read` with `how`: a wrong status, a hidden user's word, id
    or row, a visible row missing (or, for an exact read, a row of no visible owner)."""
    visible = _visible(read, how)
    failures, text, found = _answers(api, world, read, how, visible)
    label = f"{read.method.upper()} {read.path} {how}"
    for person in PEOPLE:
        if person.user in visible:
            continue
        words = [w for w in (*person.words, person.user) if w.lower() in text]
        rows = {k: sorted(ids & world.ids(person.user, k)) for k, ids in found.items()}
        rows = {k: ids for k, ids in rows.items() if ids}
        if words or rows:
            failures.append(f"{label}: {person.name}'s {words} {rows}")
    expected: Found = read.expect(world, visible)
    for kind, ids in expected.items():
        if missing := ids - found.get(kind, set()):
            failures.append(f"{label}: {kind} missing {sorted(missing)}")
        if read.exact and (extra := found.get(kind, set()) - ids):
            failures.append(f"{label}: {kind} of no visible owner {sorted(extra)}")
    if absent := _shown(world, read, visible, text):
        failures.append(f"{label}: lines missing {absent}")
    return failures


def _all(api, world: World, reads: list[Read], how: dict, needs: set[str]) -> list[str]:
    """Every read that declares all of `needs`, probed with `how`."""
    taking = [r for r in reads if needs <= declared(r.method, r.path)]
    assert taking, needs
    return [f for read in taking for f in probe(api, world, read, how)]


def test_every_read_of_the_schema_is_probed():
    probed = {(r.method, r.path) for r in READS}

    assert len(probed) == len(READS)
    assert schema_reads() == probed | NOT_MEMORY


def test_every_read_that_takes_user_takes_all_users_and_the_reverse():
    takes = {(r.method, r.path): declared(r.method, r.path) for r in READS}
    user_only = {op for op, names in takes.items() if "user" in names and "all_users" not in names}

    # get_context always names a session; the export is the agent's or one user's archive.
    assert user_only == {("post", "/context"), ("get", "/workspace/export")}
    assert [op for op, names in takes.items() if "all_users" in names and "user" not in names] == []


def test_a_read_without_user_or_all_users_returns_the_agents_memory_alone(api, world: World):
    failures = [f for read in READS for f in probe(api, world, read, {})]

    assert failures == [], "\n".join(failures)


def test_a_session_without_a_user_reads_the_agents_memory_alone(api, world: World):
    failures = _all(api, world, READS, {"session_id": OPS_KEY}, {"session_id"})

    assert failures == [], "\n".join(failures)


def test_all_users_returns_every_users_memory(api, world: World):
    failures = _all(api, world, READS, {"all_users": True}, {"all_users"})

    assert failures == [], "\n".join(failures)


@pytest.mark.parametrize("person", PEOPLE, ids=lambda p: p.name)
def test_user_returns_theirs_and_the_agents_never_the_other_users(api, world: World, person):
    failures = _all(api, world, READS, {"user": person.user}, {"user"})

    assert failures == [], "\n".join(failures)


@pytest.mark.parametrize(
    "how",
    [
        {"user": ALICE.user, "all_users": True},
        {"session_id": ALICE.session_key, "all_users": True},
        {"session_id": OPS_KEY, "all_users": True},
    ],
    ids=["user", "user session", "agent session"],
)
def test_all_users_with_user_or_a_session_is_422_naming_it(api, world: World, how):
    needs = {name for name in how if name != "user"} | {"all_users"}
    taking = [r for r in READS if needs <= declared(r.method, r.path)]
    answers = {f"{r.method} {r.path}": r.ask(api, world, how)[0].response for r in taking}

    assert len(answers) >= 4 if "session_id" in how else len(answers) >= 12
    assert {op: a.status_code for op, a in answers.items()} == dict.fromkeys(answers, 422)
    assert {op: a.json()["detail"][0]["loc"] for op, a in answers.items()} == {
        f"{r.method} {r.path}": ["query" if r.method == "get" else "body", "all_users"]
        for r in taking
    }


def test_get_context_in_a_session_without_a_user_refuses_all_users(api, world: World):
    response = api.post("/context", {"session_id": OPS_KEY, "all_users": True})

    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"][-1] == "all_users"
