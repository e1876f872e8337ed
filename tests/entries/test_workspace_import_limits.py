"""Issue 13, workspace import: the archive is streamed and refused with 413 at the first limit
it passes (before the rest is read); a malformed manifest is 422 naming what is wrong. Either
way nothing is written."""

import gzip
import io
import json
import random
import tarfile

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.agents.models import Agent
from apps.agents.services import team_set_ceilings
from apps.core.errors import PayloadTooLarge
from apps.entries.archive import MAX_RATIO
from apps.entries.models import Entry
from apps.entries.selectors import workspace_export, workspace_read
from apps.entries.services import entry_add

pytestmark = pytest.mark.django_db

MIB = 1024 * 1024
MANIFEST = ".memoryhub/manifest.json"


def tar_bytes(files: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def tar_gz(files: dict[str, bytes]) -> bytes:
    return gzip.compress(tar_bytes(files), mtime=0)


def manifest(**fields) -> bytes:
    return json.dumps({"format": "memoryhub-workspace", "version": 1, **fields}).encode()


def post_archive(api, data: bytes):
    return api.client.post(
        "/api/v1/workspace/import", data, content_type="application/gzip", headers=api._headers()
    )


def nothing_written(agent) -> bool:
    return not Entry.objects.filter(agent=agent).exists()


# --- size limits: 413 naming the limit -----------------------------------------------------


def test_a_gzip_bomb_is_413_by_its_compression_ratio(api, agent):
    bomb = tar_gz({"big.md": b"a" * (24 * MIB)})  # ~24 KiB compressed, ratio ~1000:1

    response = post_archive(api, bomb)

    assert len(bomb) < 100 * 1024
    assert response.status_code == 413
    assert response.json() == {
        "detail": f"the archive's compression ratio is over {MAX_RATIO}:1 (a gzip bomb?)",
        "loc": ["body"],
    }
    assert nothing_written(agent)


@pytest.mark.parametrize(
    ("ceilings", "files", "detail"),
    [
        (
            {"import_max_members": 3},
            {f"n{i}.md": b"x" for i in range(4)},
            "the number of members is over the import limit of 3 (import_max_members)",
        ),
        (
            {"import_max_member_bytes": 100},
            {"a.md": b"x" * 100, "b.md": b"x" * 101},
            "'b.md' is over the import limit of 100 (import_max_member_bytes)",
        ),
        (
            {"import_max_unpacked_bytes": 150},
            {"a.md": b"x" * 100, "b.md": b"x" * 51},
            "the unpacked archive is over the import limit of 150 (import_max_unpacked_bytes)",
        ),
    ],
)
def test_each_member_limit_is_413_from_the_headers(api, agent, ceilings, files, detail):
    team_set_ceilings(team=agent.team, ceilings=ceilings)

    response = post_archive(api, tar_gz(files))

    assert response.status_code == 413
    assert response.json() == {"detail": detail, "loc": ["body"]}
    assert nothing_written(agent)


def test_an_archive_exactly_at_the_limits_loads(api, agent):
    team_set_ceilings(
        team=agent.team,
        ceilings={"import_max_members": 2, "import_max_member_bytes": 100,
                  "import_max_unpacked_bytes": 150},
    )  # fmt: skip

    response = post_archive(api, tar_gz({"a.md": b"x" * 100, "b.md": b"x" * 50}))

    assert response.status_code == 201
    assert response.json()["names"] == ["a.md", "b.md"]


def test_the_compressed_size_is_checked_before_the_body_is_read(api, agent):
    data = tar_gz({"a.md": random.Random(0).randbytes(3000)})  # incompressible
    team_set_ceilings(team=agent.team, ceilings={"import_max_archive_bytes": 1000})

    response = post_archive(api, data)

    assert len(data) > 1000
    assert response.status_code == 413
    assert response.json() == {
        "detail": "the archive is over the import limit of 1000 (import_max_archive_bytes)",
        "loc": ["body"],
    }
    assert nothing_written(agent)


def test_a_stream_of_unknown_length_is_cut_off_at_the_compressed_limit(agent):
    data = tar_gz({"a.md": random.Random(0).randbytes(3000)})
    team_set_ceilings(team=agent.team, ceilings={"import_max_archive_bytes": 1000})

    with pytest.raises(PayloadTooLarge) as caught:
        workspace_read(agent=Agent.objects.get(pk=agent.pk), source=io.BytesIO(data))

    assert caught.value.message == (
        "the archive is over the import limit of 1000 (import_max_archive_bytes)"
    )


def test_an_agent_may_lower_its_own_import_limits(api, agent):
    api.patch("/agent/settings", {"settings": {"import_max_members": 1}})

    response = post_archive(api, tar_gz({"a.md": b"a", "b.md": b"b"}))

    assert response.status_code == 413
    assert "(import_max_members)" in response.json()["detail"]


def test_a_plain_tar_is_streamed_too(api, agent):
    team_set_ceilings(team=agent.team, ceilings={"import_max_member_bytes": 10})

    ok = post_archive(api, tar_bytes({"a.md": b"0123456789"}))
    refused = post_archive(api, tar_bytes({"b.md": b"01234567890"}))

    assert ok.status_code == 201
    assert refused.status_code == 413
    assert Entry.objects.get(agent=agent).name == "a.md"


def test_a_multi_member_gzip_loads(api, agent):
    raw = tar_bytes({"a.md": b"alpha", "b.md": b"beta"})
    data = gzip.compress(raw[:700], mtime=0) + gzip.compress(raw[700:], mtime=0)

    response = post_archive(api, data)

    assert response.status_code == 201
    assert sorted(Entry.objects.filter(agent=agent).values_list("content", flat=True)) == [
        "alpha",
        "beta",
    ]


def test_a_real_export_is_well_under_the_ratio_limit(api, agent):
    for day in range(1, 29):
        entry_add(agent=agent, name=f"memory/2026-02-{day:02d}.md", content=f"- day {day}\n" * 30)
    entry_add(agent=agent, name="MEMORY.md", content="")
    data = workspace_export(agent=agent)
    unpacked = len(gzip.decompress(data))

    assert unpacked / len(data) < MAX_RATIO / 4
    Entry.objects.filter(agent=agent).delete()
    assert post_archive(api, data).status_code == 201


def test_the_management_command_refuses_a_bomb(agent, tmp_path):
    path = tmp_path / "bomb.tar.gz"
    path.write_bytes(tar_gz({"big.md": b"a" * (8 * MIB)}))

    with pytest.raises(CommandError, match=r"compression ratio is over 200:1"):
        call_command("workspace_import", agent.slug, str(path))
    assert nothing_written(agent)


# --- malformed archives and manifests: 422 naming what is wrong ---------------------------


@pytest.mark.parametrize(
    ("raw_manifest", "loc", "msg"),
    [
        (b"{not json", ["body", "manifest"], "the manifest is not valid JSON"),
        (b'{"format": "\xff"}', ["body", "manifest"], "the manifest is not UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, ["body", "manifest"],
         "the manifest is nested too deeply"),
        (b"[]", ["body", "manifest"], "the manifest is not a memoryhub-workspace manifest"),
        (b'{"version": 1}', ["body", "manifest"],
         "the manifest is not a memoryhub-workspace manifest"),
        (manifest(entries=7), ["body", "manifest", "entries"],
         "the manifest's entries: Input should be a valid list"),
        (manifest(entries=[{"kind": "note"}]), ["body", "manifest", "entries", 0, "name"],
         "the manifest's entries.0.name: Field required"),
        (manifest(entries=[{"name": 5}]), ["body", "manifest", "entries", 0, "name"],
         "the manifest's entries.0.name: Input should be a valid string"),
        (manifest(entries=[{"name": "a.md", "kind": ["note"]}]),
         ["body", "manifest", "entries", 0, "kind"],
         "the manifest's entries.0.kind: Input should be a valid string"),
        (manifest(entries=[{"name": "a.md", "aliases": "b.md"}]),
         ["body", "manifest", "entries", 0, "aliases"],
         "the manifest's entries.0.aliases: Input should be a valid list"),
        (manifest(entries=[{"name": "a.md", "created_at": 12}]),
         ["body", "manifest", "entries", 0, "created_at"],
         "the manifest's entries.0.created_at: Input should be a valid string"),
        (manifest(generated={"a": 1}), ["body", "manifest", "generated"],
         "the manifest's generated: Input should be a valid list"),
        (manifest(version="1"), ["body", "manifest", "version"],
         "the manifest's version: Input should be a valid integer"),
        (manifest(version=2), ["body", "manifest"], "manifest version 2 is newer than 1"),
        (manifest(entries=[{"name": "a.md", "kind": "poem"}]), ["body"],
         "'a.md' has unknown kind 'poem'"),
        (manifest(entries=[{"name": "a.md", "created_at": "yesterday"}]), ["body"],
         "'a.md' has a malformed created_at"),
        (manifest(entries=[{"name": "a.md", "created_at": "0001-01-01T00:00:00+05:00"}]),
         ["body"], "'a.md' created_at is out of range in UTC"),
        (manifest(entries=[{"name": "a.md", "created_at": "9999-12-31T23:00:00-05:00"}]),
         ["body"], "'a.md' created_at is out of range in UTC"),
        (manifest(entries=[{"name": "a.md"}, {"name": "a.md"}]), ["body"],
         "'a.md' is in the manifest twice"),
        (manifest(entries=[{"name": "a.md", "aliases": ["z.md", "z.md"]}]), ["body"],
         "'z.md' names two entries in the archive"),
        (manifest(entries=[{"name": "a.md", "aliases": ["a.md"]}]), ["body"],
         "'a.md' names two entries in the archive"),
        (manifest(entries=[{"name": "a.md", "aliases": ["../up.md"]}]),
         ["body", "a.md", "aliases"], "name must not contain '..'"),
        (manifest(entries=[{"name": "a.md", "aliases": ["\ud800.md"]}]), ["body"],
         "an alias of 'a.md' is not valid UTF-8"),
        (manifest(entries=[{"name": "gone.md"}]), ["body"],
         "'gone.md' is in the manifest but not in the archive"),
    ],
)  # fmt: skip
def test_a_malformed_manifest_is_422_naming_what_is_wrong(api, agent, raw_manifest, loc, msg):
    response = post_archive(api, tar_gz({MANIFEST: raw_manifest, "a.md": b"text"}))

    assert response.status_code == 422
    assert response.json()["detail"] == [{"loc": loc, "msg": msg, "type": "value_error"}]
    assert nothing_written(agent)


def _raw_name_tar(name: bytes) -> bytes:
    """A ustar archive whose one member's name is the raw bytes `name` (not UTF-8)."""
    info = tarfile.TarInfo("placeholder.md")
    info.size = 1
    header = bytearray(info.tobuf(format=tarfile.USTAR_FORMAT))
    header[0:100] = name.ljust(100, b"\0")
    header[148:156] = b"        "
    header[148:156] = f"{sum(header):06o}\0 ".encode()
    return gzip.compress(bytes(header) + b"x".ljust(512, b"\0") + b"\0" * 1024)


@pytest.mark.parametrize(
    ("data", "msg"),
    [
        (tar_gz({MANIFEST: manifest(), f"./{MANIFEST}": manifest()}),
         f"'{MANIFEST}' appears twice in the archive"),
        (tar_gz({"a.md": b"1", "./a.md": b"2"}), "'a.md' appears twice in the archive"),
        (tar_gz({"../../etc/passwd": b"x"}), "name must not contain '..'"),
        (_raw_name_tar(b"bad\xff.md"), "the member name 'bad\\udcff.md' is not valid UTF-8"),
        (tar_gz({"a.md": b"x"})[:-30], "the archive is truncated (the gzip stream ends early)"),
        (gzip.compress(tar_bytes({"a.md": b"x" * 2000})[:1000]),
         "the archive is truncated or corrupt"),
        (b"\x1f\x8b" + b"\x00" * 40, "the archive is not valid gzip"),
        (gzip.compress(b"hello world, not a tar"), "not a tar or tar.gz archive"),
        (b"", "not a tar or tar.gz archive"),
    ],
)  # fmt: skip
def test_a_malformed_archive_is_422(api, agent, data, msg):
    response = post_archive(api, data)

    assert response.status_code == 422
    assert response.json()["detail"][0]["msg"] == msg
    assert nothing_written(agent)


def test_a_bad_member_late_in_the_archive_writes_nothing(api, agent):
    entry_add(agent=agent, name="keep.md", content="kept")
    files = {f"n{i}.md": b"fine" for i in range(50)}

    response = post_archive(api, tar_gz({**files, "zz.md": b"\xff"}))

    assert response.status_code == 422
    assert list(Entry.objects.filter(agent=agent).values_list("name", flat=True)) == ["keep.md"]
