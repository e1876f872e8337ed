"""Workspace export and import: entries as the folder layout of seeds 001 and 004.

The archive is a gzip'd tar. Each entry is a file at its name (`MEMORY.md`,
`memory/2026-01-31.md`, ...), with `.memoryhub/manifest.json` holding what a file cannot
(kind, aliases, created_at, and `"index": false` for an entry left out of searches).
Members are sorted with fixed owner, mode and mtime 0, and gzip carries no timestamp, so
exporting an imported archive reproduces it byte for byte.
Import streams the archive within the agent's import limits (apps.entries.archive), reads
members in memory only (nothing touches the disk), refuses links, devices and unsafe paths,
checks the manifest's shape, and overwrites existing entries only with `force`.

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
from datetime import UTC, datetime

from django.db import transaction
from django.utils import timezone
from pydantic import BaseModel, ConfigDict
from pydantic import ValidationError as PydanticValidationError

from apps.agents.locks import lock_agent
from apps.agents.models import Agent
from apps.agents.users import AGENT
from apps.core.errors import Conflict, InvalidInput
from apps.entries import names
from apps.entries.archive import ArchiveLimits, Readable, check_declared_size, read_members
from apps.entries.models import Action, Entry, EntryAlias, Kind
from apps.entries.selectors import entries_all
from apps.entries.services import entry_change_record, entry_set_content
from apps.providers.token_counts import count_tokens_batch

FORMAT = "memoryhub-workspace"
VERSION = 1
MANIFEST = f"{names.META_DIR}/manifest.json"


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
                # Only when false: an archive of searchable entries is as it always was.
                **({"index": False} if e.unindexed else {}),
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
    index: bool = True


@dataclass(frozen=True)
class WorkspaceArchive:
    """An uploaded archive, read and checked, ready to write."""

    items: list[_Item]
    generated: dict[str, str]  # generated files (name -> text), for their owner


def _check_text(value: str, what: str) -> None:
    # A lone surrogate (from a non-UTF-8 tar name or a JSON escape) cannot be stored.
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{what} is not valid UTF-8", loc=["body"]) from exc


def _read_archive(source: Readable, limits: ArchiveLimits) -> tuple[dict[str, str], bytes | None]:
    """Files by path and the manifest's bytes; InvalidInput for anything unsafe or malformed,
    PayloadTooLarge past a limit (checked while streaming)."""
    loc = ["body"]
    files: dict[str, str] = {}
    manifest = None
    for member in read_members(source, limits):
        path = member.path
        _check_text(path, f"the member name {path!r}")
        if member.is_dir:
            if path not in ("", ".", names.META_DIR):
                names.validate_name(path, loc=[*loc, member.name])
            continue
        if path == MANIFEST:
            if manifest is not None:
                raise InvalidInput(f"'{MANIFEST}' appears twice in the archive", loc=loc)
            manifest = member.data
            continue
        if not names.is_generated(path):
            names.validate_name(path, loc=[*loc, member.name])
        if path in files:
            raise InvalidInput(f"'{path}' appears twice in the archive", loc=loc)
        try:
            files[path] = member.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"'{path}' is not UTF-8 text", loc=loc) from exc
        if "\x00" in files[path]:
            raise InvalidInput(f"'{path}' contains NUL characters", loc=loc)
    for path in files:
        for parent in names.parent_paths(path):
            if parent in files:
                raise InvalidInput(f"'{parent}' is both a file and a folder", loc=loc)
    return files, manifest


class _ManifestEntry(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")

    name: str
    kind: str = Kind.NOTE.value
    aliases: list[str] | None = None
    created_at: str | None = None
    index: bool = True


class _Manifest(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")  # later versions may add keys

    format: str
    version: int | None = None
    generated: list[str] | None = None
    entries: list[_ManifestEntry] | None = None


def _parse_manifest(raw: bytes | None) -> _Manifest | None:
    """The manifest, checked; InvalidInput naming what is wrong (never a TypeError)."""
    if raw is None:
        return None
    loc = ["body", "manifest"]
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidInput("the manifest is not UTF-8", loc=loc) from exc
    except RecursionError as exc:
        raise InvalidInput("the manifest is nested too deeply", loc=loc) from exc
    except ValueError as exc:
        raise InvalidInput("the manifest is not valid JSON", loc=loc) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidInput(f"the manifest is not a {FORMAT} manifest", loc=loc)
    try:
        manifest = _Manifest.model_validate(data)
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise InvalidInput(
            f"the manifest's {where}: {err['msg']}", loc=[*loc, *err["loc"]]
        ) from exc
    if manifest.version is not None and manifest.version > VERSION:
        raise InvalidInput(f"manifest version {manifest.version} is newer than {VERSION}", loc=loc)
    return manifest


def _split_generated(files: dict[str, str], manifest: _Manifest | None) -> dict[str, str]:
    """Remove the generated files from `files` and return them."""
    listed = (manifest.generated if manifest else None) or []
    wanted = {n for n in files if names.is_generated(n)} | set(listed)
    return {n: files.pop(n) for n in sorted(wanted) if n in files}


def _created_at(name: str, value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        created_at = datetime.fromisoformat(value)
    except ValueError as exc:
        raise InvalidInput(f"'{name}' has a malformed created_at", loc=["body"]) from exc
    if created_at.tzinfo is None:
        raise InvalidInput(f"'{name}' created_at has no UTC offset", loc=["body"])
    try:
        return created_at.astimezone(UTC)
    except OverflowError as exc:
        raise InvalidInput(f"'{name}' created_at is out of range in UTC", loc=["body"]) from exc


def _item(name: str, content: str, row: _ManifestEntry | None) -> _Item:
    kind = row.kind if row else Kind.NOTE.value
    if kind not in Kind.values:
        raise InvalidInput(f"'{name}' has unknown kind '{kind}'", loc=["body"])
    aliases = (row.aliases if row else None) or []
    for alias in aliases:
        _check_text(alias, f"an alias of '{name}'")
        names.validate_name(alias, loc=["body", name, "aliases"])
    created_at = _created_at(name, row.created_at if row else None)
    return _Item(name, content, kind, aliases, created_at, row.index if row else True)


def _items(files: dict[str, str], manifest: _Manifest | None) -> list[_Item]:
    meta: dict[str, _ManifestEntry] = {}
    for row in (manifest.entries if manifest else None) or []:
        _check_text(row.name, "a manifest entry's name")
        if row.name not in files:
            raise InvalidInput(
                f"'{row.name}' is in the manifest but not in the archive", loc=["body"]
            )
        if row.name in meta:
            raise InvalidInput(f"'{row.name}' is in the manifest twice", loc=["body"])
        meta[row.name] = row
    # Manifest order first (it is the original id order), then files it does not list.
    order = [*meta, *sorted(set(files) - set(meta))]
    items = [_item(name, files[name], meta.get(name)) for name in order]
    claimed: dict[str, str] = {}
    for item in items:
        for label in (item.name, *item.aliases):
            if label in claimed:
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
    EntryAlias.objects.filter(
        agent=agent, user=AGENT, entry__name__in=[i.name for i in items]
    ).delete()
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
        entry.unindexed = None if item.index else True
        entry.created_at = item.created_at or now
        entry.updated_at = now
        entry.save()
        EntryAlias.objects.bulk_create(
            [EntryAlias(agent=agent, entry=entry, name=a) for a in item.aliases]
        )
        entry_change_record(entry, Action.IMPORT, changed_by, previous=previous)
    return overwritten


def workspace_read(
    *, agent: Agent, source: Readable | bytes, declared_size: int | None = None
) -> WorkspaceArchive:
    """Read and check an uploaded archive as a stream, within the agent's import limits
    (its team's ceilings); writes nothing. PayloadTooLarge past a limit, InvalidInput for
    anything unsafe or malformed."""
    limits = ArchiveLimits.of(agent.config)
    if isinstance(source, bytes | bytearray):
        declared_size, source = len(source), io.BytesIO(source)
    check_declared_size(declared_size, limits)
    files, raw_manifest = _read_archive(source, limits)
    manifest = _parse_manifest(raw_manifest)
    generated = _split_generated(files, manifest)
    return WorkspaceArchive(items=_items(files, manifest), generated=generated)


@transaction.atomic
def workspace_write(
    *, agent: Agent, archive: WorkspaceArchive, force: bool = False, changed_by: str = "agent"
) -> ImportResult:
    """Write a read archive's entries as the agent's own; Conflict if any name exists and
    `force` is not set. Generated files come back in the result, for the app that renders
    them."""
    items = archive.items
    lock_agent(agent)
    existing = {e.name: e for e in Entry.objects.filter(agent=agent, user=AGENT)}
    aliases = EntryAlias.objects.filter(agent=agent, user=AGENT)
    alias_owner = dict(aliases.values_list("name", "entry__name"))
    _check_names(items, existing, alias_owner, force)
    overwritten = _write_items(agent, items, existing, changed_by)
    return ImportResult(
        created=len(items) - overwritten,
        overwritten=overwritten,
        names=[i.name for i in items],
        generated=archive.generated,
    )


def workspace_import(
    *, agent: Agent, data: Readable | bytes, force: bool = False, changed_by: str = "agent"
) -> ImportResult:
    """workspace_read, then workspace_write: all or nothing."""
    archive = workspace_read(agent=agent, source=data)
    return workspace_write(agent=agent, archive=archive, force=force, changed_by=changed_by)
