"""Workspace export: entries as the folder layout of seeds 001 and 004.

The archive is a gzip'd tar. Each entry is a file at its name (`MEMORY.md`,
`memory/2026-01-31.md`, ...), with `.memoryhub/manifest.json` holding what a file cannot
(kind, aliases, created_at, and `"index": false` for an entry left out of searches).
Members are sorted with fixed owner, mode and mtime 0, and gzip carries no timestamp, so
exporting an imported archive reproduces it byte for byte. Generated files (seed 004's
memory/HISTORY*.md, rendered by apps.lifecycle, and seed 001's learnings/*.md, rendered by
apps.learnings) travel in the archive too, listed under "generated" in the manifest.
"""

import gzip
import io
import json
import tarfile

from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.entries import names
from apps.entries.selectors.entry_lookup import entries_all

FORMAT = "memoryhub-workspace"


VERSION = 1


MANIFEST = f"{names.META_DIR}/manifest.json"


def _file(tar: tarfile.TarFile, path: str, data: bytes) -> None:
    info = tarfile.TarInfo(path)
    info.size = len(data)
    info.mode = 0o644
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info, io.BytesIO(data))


def _dir(tar: tarfile.TarFile, path: str) -> None:
    info = tarfile.TarInfo(path)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    info.mtime = 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    tar.addfile(info)


def workspace_export(
    *, agent: Agent, generated: dict[str, str] | None = None, owner: str = AGENT
) -> bytes:
    """`owner`'s entries (the agent's own by default; a user's for a data-access request),
    plus `generated` files (name -> text), as a .tar.gz of the workspace folder
    (deterministic bytes)."""
    entries = entries_all(agent=agent, owner=owner)
    generated = dict(sorted((generated or {}).items()))
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "generated": list(generated),
        "entries": [
            {
                "name": e.name,
                "kind": e.kind,
                "aliases": [a.name for a in e.aliases.all()],
                "created_at": e.created_at.isoformat(),
                # Only when false or JSON paths: an archive of searchable entries is as it
                # always was.
                **({"index": False} if e.unindexed else {}),
                **({"index": e.index_fields} if e.index_fields and not e.unindexed else {}),
            }
            for e in entries
        ],
    }
    files = {e.name: e.content.encode("utf-8") for e in entries}
    files.update({name: text.encode("utf-8") for name, text in generated.items()})
    files[MANIFEST] = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()
    folders = sorted({p for path in files for p in names.parent_paths(path)})
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted([*folders, *files]):
            if path in files:
                _file(tar, path, files[path])
            else:
                _dir(tar, path)
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0, filename="") as gz:
        gz.write(raw.getvalue())
    return out.getvalue()
