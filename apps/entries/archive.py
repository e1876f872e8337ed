"""Reading an uploaded workspace archive as a stream, within limits.

The body is never held or unpacked whole before a limit applies: gzip is inflated chunk by
chunk, and each tar header is checked (member count, member size, running total) before its
data is read. A gzip bomb is refused after its first megabyte of output by the compression
ratio, an oversized member by its header, so a bad archive answers 413 at once.
"""

import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from apps.agents.config import AgentConfig
from apps.core.errors import InvalidInput, PayloadTooLarge


class Readable(Protocol):
    """A stream read in chunks: a file, a BytesIO, or the HttpRequest of an upload."""

    def read(self, size: int, /) -> bytes: ...


CHUNK = 64 * 1024
GZIP_MAGIC = b"\x1f\x8b"
# Workspace text deflates 3-10x and tar headers (mostly zero blocks) up to ~100x; a bomb of
# repeated bytes deflates ~1000x. Checked once the output passes RATIO_FLOOR, so a small
# archive of empty files (headers only) still loads.
MAX_RATIO = 200
RATIO_FLOOR = 1024 * 1024
# Tar's own bytes per member (a header block, a PAX header and its block, padding), and per
# archive (the end blocks, padded to a 10 KiB record; tarfile reads whole records).
TAR_OVERHEAD_PER_MEMBER = 2048
TAR_OVERHEAD = 1024 * 1024


@dataclass(frozen=True)
class ArchiveLimits:
    archive_bytes: int  # the compressed body
    unpacked_bytes: int  # all members' data
    members: int
    member_bytes: int

    @classmethod
    def of(cls, config: AgentConfig) -> "ArchiveLimits":
        """The agent's effective import limits (clamped to its team's ceilings)."""
        return cls(
            archive_bytes=config.import_max_archive_bytes,
            unpacked_bytes=config.import_max_unpacked_bytes,
            members=config.import_max_members,
            member_bytes=config.import_max_member_bytes,
        )


@dataclass(frozen=True)
class Member:
    path: str  # as in the archive, "./" and a folder's trailing "/" removed
    name: str  # the raw member name, for messages
    is_dir: bool
    data: bytes


def too_large(what: str, limit: int, setting: str) -> PayloadTooLarge:
    return PayloadTooLarge(f"{what} is over the import limit of {limit} ({setting})", loc=["body"])


def check_declared_size(size: int | None, limits: ArchiveLimits) -> None:
    """PayloadTooLarge when the declared body size (Content-Length) is over the limit."""
    if size is not None and size > limits.archive_bytes:
        raise too_large("the archive", limits.archive_bytes, "import_max_archive_bytes")


class _Counted:
    """The raw body, refused past the compressed-size limit (a wrong Content-Length)."""

    def __init__(self, raw: Readable, limits: ArchiveLimits) -> None:
        self._raw = raw
        self._limit = limits.archive_bytes
        self.count = 0

    def read(self, size: int) -> bytes:
        data = self._raw.read(size)
        self.count += len(data)
        if self.count > self._limit:
            raise too_large("the archive", self._limit, "import_max_archive_bytes")
        return data


class _Inflated:
    """A file-like `read` over the tar bytes: inflated from gzip (one or more members) or
    passed through for a plain tar, with the unpacked size and the ratio checked as it goes."""

    def __init__(self, source: _Counted, limits: ArchiveLimits) -> None:
        self._src = source
        self._head = source.read(CHUNK)
        self._gzip = self._head.startswith(GZIP_MAGIC)
        self._z = zlib.decompressobj(wbits=31)
        # The member limits are checked from the headers; this bounds what tarfile reads
        # itself (PAX headers) and the headers' own bytes.
        overhead = TAR_OVERHEAD + TAR_OVERHEAD_PER_MEMBER * limits.members
        self._max_out = limits.unpacked_bytes + overhead
        self.out = 0

    def read(self, size: int = -1) -> bytes:
        size = CHUNK if size is None or size < 0 else size
        data = self._inflate(size) if self._gzip else self._plain(size)
        self.out += len(data)
        if self.out > self._max_out:
            raise too_large("the unpacked archive", self._max_out, "import_max_unpacked_bytes")
        if self.out > RATIO_FLOOR and self.out > MAX_RATIO * self._src.count:
            raise PayloadTooLarge(
                f"the archive's compression ratio is over {MAX_RATIO}:1 (a gzip bomb?)",
                loc=["body"],
            )
        return data

    def _plain(self, size: int) -> bytes:
        if self._head:
            data, self._head = self._head[:size], self._head[size:]
            return data
        return self._src.read(size)

    def _next_input(self) -> bytes | None:
        """Compressed bytes to feed next; None at the end of the last gzip member."""
        if self._head:
            data, self._head = self._head, b""
            return data
        if self._z.unconsumed_tail:
            return self._z.unconsumed_tail
        if self._z.eof:
            rest = self._z.unused_data
            if len(rest) < len(GZIP_MAGIC):  # the next member's magic may span two reads
                rest += self._src.read(CHUNK)
            if not rest.startswith(GZIP_MAGIC):
                return None  # the end (tar has its own end marker; trailing bytes are ignored)
            self._z = zlib.decompressobj(wbits=31)  # a multi-member gzip file
            return rest
        data = self._src.read(CHUNK)
        if not data:
            raise InvalidInput(
                "the archive is truncated (the gzip stream ends early)", loc=["body"]
            )
        return data

    def _inflate(self, size: int) -> bytes:
        while True:
            data = self._next_input()
            if data is None:
                return b""
            try:
                out = self._z.decompress(data, size)  # at most `size` bytes out
            except zlib.error as exc:
                raise InvalidInput("the archive is not valid gzip", loc=["body"]) from exc
            if out:
                return out


def _check_header(member: tarfile.TarInfo, index: int, total: int, limits: ArchiveLimits) -> int:
    """The running total with this member; 413 on any limit, before its data is read."""
    if index >= limits.members:
        raise too_large("the number of members", limits.members, "import_max_members")
    if member.size > limits.member_bytes:
        raise too_large(f"'{member.name}'", limits.member_bytes, "import_max_member_bytes")
    total += member.size
    if total > limits.unpacked_bytes:
        raise too_large("the unpacked archive", limits.unpacked_bytes, "import_max_unpacked_bytes")
    return total


def read_members(raw: Readable, limits: ArchiveLimits) -> Iterator[Member]:
    """Each folder and regular file of the tar or tar.gz in `raw`, in order, as the stream
    is read. PayloadTooLarge past a limit; InvalidInput for a link, a device or a corrupt
    archive."""
    inflated = _Inflated(_Counted(raw, limits), limits)
    try:
        # typeshed asks every fileobj for write() and close(); a "r|" stream only reads.
        tar = tarfile.open(fileobj=inflated, mode="r|")  # type: ignore[call-overload]  # noqa: SIM115 - `with` below
    except (tarfile.TarError, EOFError) as exc:
        raise InvalidInput("not a tar or tar.gz archive", loc=["body"]) from exc
    total = 0
    with tar:
        try:
            for index, member in enumerate(tar):
                total = _check_header(member, index, total, limits)
                yield _member(tar, member)
        except (tarfile.TarError, EOFError) as exc:
            raise InvalidInput("the archive is truncated or corrupt", loc=["body"]) from exc


def _member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> Member:
    if member.isdir():
        return Member(member.name.removeprefix("./").rstrip("/"), member.name, True, b"")
    if not member.isreg():
        raise InvalidInput(
            f"'{member.name}' is not a regular file (links and devices are refused)", loc=["body"]
        )
    handle = tar.extractfile(member)
    data = handle.read() if handle else b""
    if len(data) != member.size:
        raise InvalidInput("the archive is truncated or corrupt", loc=["body"])
    return Member(member.name.removeprefix("./"), member.name, False, data)
