"""Issue 26's isolation suite, the listings and reads by name or id: with `user=`, each
lists exactly the agent's rows and that user's (sessions: that user's), and a row of the
other user is not there (404) even by its id or name."""

import io
import tarfile

import pytest

from tests.users.probes import VIEWERS, Probes, other_of
from tests.users.world import AGENT, AGENT_NOTE, Person, World

pytestmark = pytest.mark.django_db

PROBES_PER_VIEWER = 19


def _exactly(probes: Probes, label: str, viewer: Person, body, kind: str, found: set) -> None:
    """The probe's checks, and `found` is every `kind` row of the agent and the viewer."""
    expected = probes.visible(viewer, kind)
    probes.check(label, viewer, body, {kind: found}, {kind: expected})
    if found - expected:
        probes.failures.append(f"{label} as {viewer.name}: unknown {sorted(found - expected)}")


def _lists(api, probes: Probes, viewer: Person) -> None:
    user = {"user": viewer.user}
    for label, path, kind in [
        ("GET /facts", "/facts", "fact"),
        ("GET /learnings", "/learnings", "learning"),
        ("GET /memory/history", "/memory/history", "history"),
        ("GET /runs", "/runs", "run"),
    ]:
        if (body := probes.answer(label, viewer, api.get(path, user))) is not None:
            _exactly(probes, label, viewer, body, kind, {row["id"] for row in body["items"]})
    label = "GET /runs session_id"
    response = api.get("/runs", {"session_id": viewer.session_key})
    if (body := probes.answer(label, viewer, response)) is not None:
        found = {"run": {row["id"] for row in body["items"]}}
        probes.check(label, viewer, body, found, {"run": probes.world.ids(viewer.user, "run")})
    label = "GET /sessions"
    if (body := probes.answer(label, viewer, api.get("/sessions", user))) is not None:
        found = {s["id"] for s in body["items"]}
        probes.check(label, viewer, body, {"session": found})
        if found != probes.world.ids(viewer.user, "session"):
            probes.failures.append(f"{label} as {viewer.name}: sessions {sorted(found)}")
    label = "GET /entries"
    if (body := probes.answer(label, viewer, api.get("/entries", user))) is not None:
        known = probes.visible(viewer, "entry")
        found = {e["id"] for e in body["items"]}
        probes.check(label, viewer, body, {"entry": found}, {"entry": known})
        # beyond the known entries, only the daily logs of memory/save
        extra = [e["name"] for e in body["items"]
                 if e["id"] not in known and not e["name"].startswith("memory/")]  # fmt: skip
        if extra:
            probes.failures.append(f"{label} as {viewer.name}: unknown entries {extra}")


def _entry_id(world: World, owner: str, text: str) -> int | None:
    """The id of the owner's entry with `text`; None when there is none (the user's own
    MEMORY.md when consolidation did not write one: the probe then fails)."""
    ids = [i.id for i in world.of(owner, "entry") if text and i.text == text]
    return ids[0] if ids else None


def _by_name_and_id(api, probes: Probes, viewer: Person) -> None:
    world, other = probes.world, other_of(viewer)
    user = {"user": viewer.user}
    readable = [
        (f"notes/{viewer.name.lower()}.md", _entry_id(world, viewer.user, viewer.note)),
        ("USER.md", _entry_id(world, viewer.user, viewer.user_md)),
        ("MEMORY.md", _entry_id(world, viewer.user, world.memory_md[viewer.user])),
        ("notes/shop.md", _entry_id(world, AGENT, AGENT_NOTE)),
    ]
    for name, entry_id in readable:
        label = f"GET /entries/{name}"
        if (body := probes.answer(label, viewer, api.get(f"/entries/{name}", user))) is not None:
            probes.check(label, viewer, body, {"entry": {body["id"]}}, {"entry": {entry_id}})
    [own_fact] = world.ids(viewer.user, "fact")
    label = "GET /facts/{own}"
    if (body := probes.answer(label, viewer, api.get(f"/facts/{own_fact}", user))) is not None:
        probes.check(label, viewer, body, {"fact": {body["id"]}}, {"fact": {own_fact}})
    theirs = [
        f"/entries/notes/{other.name.lower()}.md",
        *(f"/facts/{i}" for i in world.ids(other.user, "fact")),
        *(f"/facts/{i}/versions" for i in world.ids(other.user, "fact")),
        *(f"/learnings/{i}" for i in world.ids(other.user, "learning")),
        *(f"/runs/{i}" for i in world.ids(other.user, "run")),
    ]
    for path in theirs:
        probes.answer(f"GET {path} (the other user's)", viewer, api.get(path, user), 404)


def _files(api, probes: Probes, viewer: Person) -> None:
    user = {"user": viewer.user}
    label = "GET /memory/history/files/memory/HISTORY.md"
    response = api.get("/memory/history/files/memory/HISTORY.md", user)
    if (body := probes.answer(label, viewer, response)) is not None:
        probes.check(label, viewer, body, {})
        own = [i.text for i in probes.world.of(viewer.user, "history")]
        probes.lines_in(label, viewer, body["content"], own)
    label = "GET /workspace/export"
    response = api.get("/workspace/export", user)
    if probes.answer(label, viewer, response) is None:
        return
    with tarfile.open(fileobj=io.BytesIO(response.content), mode="r:gz") as tar:
        files = {m.name: tar.extractfile(m).read().decode() for m in tar.getmembers() if m.isfile()}
    probes.check(label, viewer, files, {})
    text = "\n".join(files.values())
    probes.lines_in(label, viewer, text, [viewer.note, viewer.user_md, viewer.correction])


def test_listings_and_reads_by_name_or_id_hold_own_and_agent_rows_only(api, world: World):
    probes = Probes(world)
    for viewer in VIEWERS:
        _lists(api, probes, viewer)
        _by_name_and_id(api, probes, viewer)
        _files(api, probes, viewer)

    assert probes.failures == [], "\n".join(probes.failures)
    assert probes.count == len(VIEWERS) * PROBES_PER_VIEWER
