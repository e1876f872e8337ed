"""Workspace export/import (seeds 001, 004): folder layout, byte-for-byte round trip, safety."""

import gzip
import io
import json
import tarfile
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from apps.entries.models import Entry, EntryAlias
from apps.entries.selectors import workspace_export
from apps.entries.services import entry_add, entry_alias, workspace_import
from tests.factories import AgentFactory

pytestmark = pytest.mark.django_db


def seed_workspace(agent):
    entry_add(agent=agent, name="SOUL.md", content="Be kind.\r\nBe brief.\n")
    entry_add(agent=agent, name="MEMORY.md", content="- likes tea\n")
    entry_add(agent=agent, name="memory/2026-01-31.md", content="# 2026-01-31\n\n- ünïcode ✓\n")
    entry_add(agent=agent, name="notes/empty.md", content="")
    entry_add(
        agent=agent,
        name="archive/chat-1/0001",
        content="summary",
        kind="archive",
        created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    entry_alias(agent=agent, ref="MEMORY.md", alias="memory")


def members(data: bytes) -> dict[str, bytes | None]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {
            m.name: (tar.extractfile(m).read() if m.isreg() else None) for m in tar.getmembers()
        }


def tar_gz(files: dict[str, bytes], *, links: dict[str, str] | None = None) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    return gzip.compress(raw.getvalue(), mtime=0)


def test_export_lays_out_the_workspace_folder(agent):
    seed_workspace(agent)

    files = members(workspace_export(agent=agent))

    assert list(files) == [
        ".memoryhub",
        ".memoryhub/manifest.json",
        "MEMORY.md",
        "SOUL.md",
        "archive",
        "archive/chat-1",
        "archive/chat-1/0001",
        "memory",
        "memory/2026-01-31.md",
        "notes",
        "notes/empty.md",
    ]
    assert files["SOUL.md"] == b"Be kind.\r\nBe brief.\n"
    assert files["memory/2026-01-31.md"] == "# 2026-01-31\n\n- ünïcode ✓\n".encode()
    manifest = json.loads(files[".memoryhub/manifest.json"])
    assert manifest["entries"][1] == {
        "name": "MEMORY.md",
        "kind": "note",
        "aliases": ["memory"],
        "created_at": Entry.objects.get(name="MEMORY.md").created_at.isoformat(),
    }
    assert manifest["entries"][4]["kind"] == "archive"


def test_export_import_export_round_trips_byte_for_byte(api, agent):
    seed_workspace(agent)
    exported = api.get("/workspace/export")
    other = AgentFactory(slug="restored")

    result = workspace_import(agent=other, data=exported.content)

    assert exported.status_code == 200
    assert exported["Content-Type"] == "application/gzip"
    assert (result.created, result.overwritten) == (5, 0)
    assert workspace_export(agent=other) == exported.content
    restored = Entry.objects.get(agent=other, name="archive/chat-1/0001")
    assert (restored.kind, restored.created_at) == (
        "archive",
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
    )
    assert list(EntryAlias.objects.filter(agent=other).values_list("name", flat=True)) == ["memory"]


def test_management_commands_round_trip_and_refuse_to_overwrite(agent, tmp_path):
    seed_workspace(agent)
    path = tmp_path / "ws.tar.gz"
    AgentFactory(slug="copy")

    call_command("workspace_export", agent.slug, str(path))
    call_command("workspace_import", "copy", str(path))
    with pytest.raises(CommandError) as refused:
        call_command("workspace_import", "copy", str(path))
    call_command("workspace_export", "copy", str(tmp_path / "again.tar.gz"))

    assert (tmp_path / "again.tar.gz").read_bytes() == path.read_bytes()
    assert str(refused.value) == (
        "6 name(s) already exist, e.g. 'MEMORY.md'; import with force to overwrite"
    )


def test_import_never_overwrites_without_force(api, agent):
    entry_add(agent=agent, name="MEMORY.md", content="current")
    archive = tar_gz({"MEMORY.md": b"from archive", "new.md": b"n"})

    refused = api.client.post(
        "/api/v1/workspace/import", archive, content_type="application/gzip",
        headers=api._headers(),
    )  # fmt: skip
    forced = api.client.post(
        "/api/v1/workspace/import?force=true", archive, content_type="application/gzip",
        headers=api._headers(),
    )  # fmt: skip

    assert refused.status_code == 409
    assert refused.json()["detail"] == (
        "1 name(s) already exist, e.g. 'MEMORY.md'; import with force to overwrite"
    )
    assert forced.status_code == 201
    assert forced.json() == {
        "created": 1,
        "overwritten": 1,
        "names": ["MEMORY.md", "new.md"],
        "history_entries": 0,
        "learnings": 0,
    }
    assert Entry.objects.get(agent=agent, name="MEMORY.md").content == "from archive"


def post_archive(api, data: bytes):
    return api.client.post(
        "/api/v1/workspace/import", data, content_type="application/gzip",
        headers=api._headers(),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("files", "links", "message"),
    [
        ({"../evil.md": b"x"}, None, "name must not contain '..'"),
        ({"/etc/cron.d/evil": b"x"}, None, "name must be a relative path (no leading '/')"),
        ({"a/../../evil": b"x"}, None, "name must not contain '..'"),
        ({"bad\\name.md": b"x"}, None, "name must not contain a backslash"),
        (
            {},
            {"link.md": "/etc/passwd"},
            "'link.md' is not a regular file (links and devices are refused)",
        ),
        ({"bin.md": b"\xff\xfe"}, None, "'bin.md' is not UTF-8 text"),
        ({"nul.md": b"a\x00b"}, None, "'nul.md' contains NUL characters"),
    ],
)
def test_unsafe_archives_are_422_and_write_nothing(api, agent, files, links, message):
    response = post_archive(api, tar_gz({"ok.md": b"fine", **files}, links=links))

    assert response.status_code == 422
    assert response.json()["detail"][0]["msg"] == message
    assert Entry.objects.filter(agent=agent).count() == 0


def test_garbage_is_422(api, agent):
    response = post_archive(api, b"this is not a tar file")

    assert response.status_code == 422
    assert response.json()["detail"][0]["msg"] == "not a tar or tar.gz archive"


def test_import_does_not_steal_a_name_owned_by_another_entry_even_with_force(api, agent):
    entry_add(agent=agent, name="keep.md", content="k")
    entry_alias(agent=agent, ref="keep.md", alias="k")
    manifest = {
        "format": "memoryhub-workspace",
        "version": 1,
        "entries": [{"name": "new.md", "kind": "note", "aliases": ["k"], "created_at": None}],
    }
    archive = tar_gz({".memoryhub/manifest.json": json.dumps(manifest).encode(), "new.md": b""})

    response = api.client.post(
        "/api/v1/workspace/import?force=true", archive, content_type="application/gzip",
        headers=api._headers(),
    )  # fmt: skip

    assert response.status_code == 409
    assert response.json()["detail"] == "'k' belongs to entry 'keep.md', which is not imported"
    assert Entry.objects.filter(agent=agent).count() == 1


def test_workspace_endpoints_are_per_agent(api, other_api, agent):
    seed_workspace(agent)

    theirs = other_api.get("/workspace/export")

    assert members(theirs.content) == {
        ".memoryhub": None,
        ".memoryhub/manifest.json": b'{\n  "format": "memoryhub-workspace",\n  "version": 1,\n'
        b'  "generated": [],\n  "entries": []\n}\n',
    }
    imported = post_archive(other_api, api.get("/workspace/export").content)
    assert imported.status_code == 201
    assert Entry.objects.filter(agent=agent).count() == 5


def test_an_unindexed_entry_stays_unindexed_through_export_and_import(api, agent):
    seed_workspace(agent)
    entry_add(agent=agent, name="store/prefs.json", content='{"a": 1}', index=False)
    exported = workspace_export(agent=agent)
    manifest = json.loads(members(exported)[".memoryhub/manifest.json"])
    other = AgentFactory(slug="restored")

    workspace_import(agent=other, data=exported)

    flags = {e["name"]: e.get("index") for e in manifest["entries"]}
    assert flags["store/prefs.json"] is False
    assert {f for n, f in flags.items() if n != "store/prefs.json"} == {None}
    restored = Entry.objects.get(agent=other, name="store/prefs.json")
    assert restored.unindexed is True
    assert Entry.objects.filter(agent=other, unindexed=True).count() == 1
    assert workspace_export(agent=other) == exported


def test_index_fields_go_through_export_and_import(api, agent):
    entry_add(agent=agent, name="store/m.json", content='{"text": "tea"}', index=["text"])
    exported = workspace_export(agent=agent)
    manifest = json.loads(members(exported)[".memoryhub/manifest.json"])
    other = AgentFactory(slug="restored")

    workspace_import(agent=other, data=exported)

    assert [e.get("index") for e in manifest["entries"]] == [["text"]]
    restored = Entry.objects.get(agent=other, name="store/m.json")
    assert (restored.unindexed, restored.index_fields) == (None, ["text"])
    assert workspace_export(agent=other) == exported


def test_a_bad_index_path_in_an_imported_manifest_is_refused(api, other_api, agent, other_agent):
    entry_add(agent=agent, name="store/m.json", content="{}", index=["text"])
    files = {n: d for n, d in members(workspace_export(agent=agent)).items() if d is not None}
    files[".memoryhub/manifest.json"] = files[".memoryhub/manifest.json"].replace(
        b'"text"', b'"a..b"'
    )

    response = post_archive(other_api, tar_gz(files))

    assert response.status_code == 422
    assert "invalid index field 'a..b'" in response.content.decode()
    assert not Entry.objects.filter(agent=other_agent).exists()
