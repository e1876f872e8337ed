"""Reading an uploaded workspace archive (selectors/workspace_packing.py's format); writes
nothing (services/workspace_restore.py writes what it read).

The archive streams within the agent's import limits (apps.entries.archive); members are
read in memory only (nothing touches the disk); links, devices and unsafe paths are
refused and the manifest's shape is checked. Generated files are set apart for the caller
instead of becoming entries.
"""

import io
import json
from dataclasses import dataclass
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic import ValidationError as PydanticValidationError

from apps.agents.models import Agent
from apps.core.errors import InvalidInput
from apps.entries import names
from apps.entries.archive import ArchiveLimits, Readable, check_declared_size, read_members
from apps.entries.index_paths import check_fields
from apps.entries.models import Kind
from apps.entries.selectors.workspace_packing import FORMAT, MANIFEST, VERSION


@dataclass(frozen=True)
class WorkspaceItem:
    name: str
    content: str
    kind: str
    aliases: list[str]
    created_at: datetime | None
    index: bool | list[str] = True  # a list: the JSON paths embedded (Entry.index_fields)


@dataclass(frozen=True)
class WorkspaceArchive:
    """An uploaded archive, read and checked, ready to write."""

    items: list[WorkspaceItem]
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
    index: bool | list[str] = True

    @field_validator("index")
    @classmethod
    def _paths(cls, index: bool | list[str]) -> bool | list[str]:
        return check_fields(index) if isinstance(index, list) else index


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


def _item(name: str, content: str, row: _ManifestEntry | None) -> WorkspaceItem:
    kind = row.kind if row else Kind.NOTE.value
    if kind not in Kind.values:
        raise InvalidInput(f"'{name}' has unknown kind '{kind}'", loc=["body"])
    aliases = (row.aliases if row else None) or []
    for alias in aliases:
        _check_text(alias, f"an alias of '{name}'")
        names.validate_name(alias, loc=["body", name, "aliases"])
    created_at = _created_at(name, row.created_at if row else None)
    return WorkspaceItem(name, content, kind, aliases, created_at, row.index if row else True)


def _items(files: dict[str, str], manifest: _Manifest | None) -> list[WorkspaceItem]:
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
