"""Workspace export and import: entries as the folder layout of seeds 001 and 004.

The archive is a gzip'd tar. Each entry is a file at its name (`MEMORY.md`,
`memory/2026-01-31.md`, ...), with `.memoryhub/manifest.json` holding what a file cannot
(kind, aliases, created_at). Members are sorted with fixed owner, mode and mtime 0, and gzip
carries no timestamp, so exporting an imported archive reproduces it byte for byte.
Import reads members in memory only (nothing touches the disk), refuses links, devices and
unsafe paths, and overwrites existing entries only with `force`.

Generated files (seed 004's memory/HISTORY*.md, rendered by apps.lifecycle, and seed 001's
learnings/*.md, rendered by apps.learnings) travel in the archive too, listed under
"generated" in the manifest; import hands them back to the caller instead of making entries
of them.
"""

import gzip
import io
import json
import tarfile
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.core.errors import Conflict, InvalidInput, PayloadTooLarge
from apps.entries import names
from apps.entries.models import Action, Entry, EntryAlias, Kind
from apps.entries.selectors import entries_all
from apps.entries.services import entry_change_record, entry_set_content
from apps.providers.tokens import count_tokens_batch

FORMAT = "memoryhub-workspace"
VERSION = 1
MANIFEST = f"{names.META_DIR}/manifest.json"
MAX_MEMBERS = 100_000
MAX_UNPACKED_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class ImportResult:
    created: int
    overwritten: int
    names: list[str]
    generated: dict[str, str]  # generated files found in the archive, for their owner


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


def workspace_export(*, agent: Agent, generated: dict[str, str] | None = None) -> bytes:
    """The agent's entries, plus `generated` files (name -> text), as a .tar.gz of the
    workspace folder (deterministic bytes)."""
    entries = entries_all(agent=agent)
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


@dataclass(frozen=True)
class _Item:
    name: str
    content: str
    kind: str
    aliases: list[str]
    created_at: datetime | None


def _read_archive(data: bytes) -> tuple[dict[str, str], dict | None]:
    """Files by path and the parsed manifest; InvalidInput for anything unsafe or malformed."""
    loc = ["body"]
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:*")  # noqa: SIM115 - `with` below
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise InvalidInput("not a tar or tar.gz archive", loc=loc) from exc
    files: dict[str, str] = {}
    folders: set[str] = set()
    manifest = None
    total = 0
    with tar:
        try:
            members = tar.getmembers()
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise InvalidInput("the archive is truncated or corrupt", loc=loc) from exc
        if len(members) > MAX_MEMBERS:
            raise PayloadTooLarge(f"more than {MAX_MEMBERS} members in the archive", loc=loc)
        for member in members:
            path = member.name.removeprefix("./").rstrip("/") if member.isdir() else member.name
            if member.isdir():
                if path in ("", "."):
                    continue
                if path != names.META_DIR:
                    names.validate_name(path, loc=[*loc, member.name])
                folders.add(path)
                continue
            if not member.isreg():
                raise InvalidInput(
                    f"'{member.name}' is not a regular file (links and devices are refused)",
                    loc=loc,
                )
            total += member.size
            if total > MAX_UNPACKED_BYTES:
                raise PayloadTooLarge(f"the archive unpacks to over {MAX_UNPACKED_BYTES} bytes")
            path = path.removeprefix("./")
            handle = tar.extractfile(member)
            body = handle.read() if handle else b""
            if path == MANIFEST:
                try:
                    manifest = json.loads(body.decode("utf-8"))
                except (UnicodeDecodeError, ValueError) as exc:
                    raise InvalidInput("the manifest is not valid JSON", loc=loc) from exc
                continue
            if not names.is_generated(path):
                names.validate_name(path, loc=[*loc, member.name])
            if path in files:
                raise InvalidInput(f"'{path}' appears twice in the archive", loc=loc)
            try:
                files[path] = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInput(f"'{path}' is not UTF-8 text", loc=loc) from exc
            if "\x00" in files[path]:
                raise InvalidInput(f"'{path}' contains NUL characters", loc=loc)
    for path in files:
        for parent in names.parent_paths(path):
            if parent in files:
                raise InvalidInput(f"'{parent}' is both a file and a folder", loc=loc)
    return files, manifest


def _split_generated(files: dict[str, str], manifest: dict | None) -> dict[str, str]:
    """Remove the generated files from `files` and return them."""
    listed = manifest.get("generated") if isinstance(manifest, dict) else None
    if listed is not None and (
        not isinstance(listed, list) or not all(isinstance(n, str) for n in listed)
    ):
        raise InvalidInput("the manifest's 'generated' is not a list of names", loc=["body"])
    wanted = {n for n in files if names.is_generated(n)} | set(listed or ())
    return {n: files.pop(n) for n in sorted(wanted) if n in files}


def _items(files: dict[str, str], manifest: dict | None) -> list[_Item]:
    meta: dict[str, dict] = {}
    order: list[str] = []
    if manifest is not None:
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise InvalidInput(f"the manifest is not a {FORMAT} manifest", loc=["body"])
        for row in manifest.get("entries") or []:
            if not isinstance(row, dict) or not isinstance(row.get("name"), str):
                raise InvalidInput("a manifest entry has no name", loc=["body"])
            if row["name"] not in files:
                raise InvalidInput(f"'{row['name']}' is in the manifest but not in the archive")
            meta[row["name"]] = row
            order.append(row["name"])
    # Manifest order first (it is the original id order), then files it does not list.
    order += sorted(set(files) - set(meta))
    items = []
    for name in order:
        row = meta.get(name, {})
        kind = row.get("kind", Kind.NOTE)
        if kind not in Kind.values:
            raise InvalidInput(f"'{name}' has unknown kind '{kind}'", loc=["body"])
        aliases = row.get("aliases") or []
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise InvalidInput(f"'{name}' has malformed aliases", loc=["body"])
        for alias in aliases:
            names.validate_name(alias, loc=["body", name, "aliases"])
        created_at = None
        if row.get("created_at"):
            try:
                created_at = datetime.fromisoformat(row["created_at"])
            except (TypeError, ValueError) as exc:
                raise InvalidInput(f"'{name}' has a malformed created_at", loc=["body"]) from exc
            if created_at.tzinfo is None:
                raise InvalidInput(f"'{name}' created_at has no UTC offset", loc=["body"])
        items.append(_Item(name, files[name], kind, aliases, created_at))
    claimed: dict[str, str] = {}
    for item in items:
        for label in (item.name, *item.aliases):
            if label in claimed and claimed[label] != item.name:
                raise InvalidInput(f"'{label}' names two entries in the archive", loc=["body"])
            claimed[label] = item.name
    return items


def _check_names(items: list[_Item], existing: dict, alias_owner: dict, force: bool) -> None:
    """Conflict for a taken name (unless `force`), and even with force for a name owned by
    an entry outside the archive or a path that would nest in one."""
    incoming = {i.name for i in items}
    taken = sorted(
        label
        for item in items
        for label in (item.name, *item.aliases)
        if label in existing or label in alias_owner
    )
    if taken and not force:
        raise Conflict(
            f"{len(taken)} name(s) already exist, e.g. '{taken[0]}'; import with force to overwrite"
        )
    for item in items:
        for label in (item.name, *item.aliases):
            owner = label if label in existing else alias_owner.get(label)
            if owner is not None and owner not in incoming:
                raise Conflict(f"'{label}' belongs to entry '{owner}', which is not imported")
        for parent in names.parent_paths(item.name):
            if parent in existing and parent not in incoming:
                raise Conflict(f"'{item.name}' would be inside entry '{parent}'")
        clash = next((n for n in existing if n.startswith(item.name + "/")), None)
        if clash is not None and clash not in incoming:
            raise Conflict(f"'{item.name}' is a folder of entry '{clash}'")


def _write_items(agent: Agent, items: list[_Item], existing: dict, changed_by: str) -> int:
    """Create or overwrite each entry with its aliases; returns how many were overwritten."""
    now = timezone.now()
    overwritten = 0
    EntryAlias.objects.filter(agent=agent, entry__name__in=[i.name for i in items]).delete()
    counts = count_tokens_batch([item.content for item in items])
    for item, tokens in zip(items, counts, strict=True):
        entry = existing.get(item.name)
        previous = ""
        if entry is None:
            entry = Entry(agent=agent, name=item.name)
        else:
            overwritten += 1
            previous = entry.content
        entry_set_content(entry=entry, agent=agent, content=item.content, token_count=tokens)
        entry.kind = item.kind
        entry.created_at = item.created_at or now
        entry.updated_at = now
        entry.save()
        EntryAlias.objects.bulk_create(
            [EntryAlias(agent=agent, entry=entry, name=a) for a in item.aliases]
        )
        entry_change_record(entry, Action.IMPORT, changed_by, previous=previous)
    return overwritten


@transaction.atomic
def workspace_import(
    *, agent: Agent, data: bytes, force: bool = False, changed_by: str = "agent"
) -> ImportResult:
    """Load an exported workspace; Conflict if any name exists and `force` is not set.
    Generated files come back in the result, for the app that renders them."""
    files, manifest = _read_archive(data)
    generated = _split_generated(files, manifest)
    items = _items(files, manifest)
    lock_agent(agent)
    existing = {e.name: e for e in Entry.objects.filter(agent=agent)}
    alias_owner = dict(EntryAlias.objects.filter(agent=agent).values_list("name", "entry__name"))
    _check_names(items, existing, alias_owner, force)
    overwritten = _write_items(agent, items, existing, changed_by)
    return ImportResult(
        created=len(items) - overwritten,
        overwritten=overwritten,
        names=[i.name for i in items],
        generated=generated,
    )
