"""Screen: the package's one zip screen, and the limits every file is screened against (RFC-0003).

:func:`screen` reads an OOXML package's (.docx, .xlsx or .pptx) central directory first and checks
every declared figure against :class:`ZipLimits` before it inflates a byte: entries, the directory's
size, each part's size and inflate ratio, the running total and the archive's ratio; names must be
unique once case is folded. It then reads each part in name order, in chunks of :data:`CHUNK_SIZE`,
never inflating more than one byte past the declared size, and a part must match its declared size
and CRC-32. Memory stays flat at any file size. Every refusal is an
:class:`~artifactr.files.core.errors.UnsafeFile` with a ``reason``.

The fingerprint and the worker's checks of XML, images and embedded packages run inside the same
pass (a ``check``), so a file is screened once, against one set of limits.

The defaults: :data:`MAX_ENTRIES` (10,000; Word's packages hold dozens, POI stops at 1,000),
:data:`MAX_DIRECTORY_SIZE` (8 MiB, refused as ``too_many_entries``), :data:`MAX_PART_SIZE`
(256 MiB) and :data:`MAX_TOTAL_SIZE` (512 MiB), WordCraft's own limits, :data:`MAX_RATIO` (200:
generated tables reach 164, a deflate bomb about 1,000) and :data:`RATIO_THRESHOLD` (1 MiB: a
smaller part, or archive, is not judged by its ratio).
"""

import io
import struct
import zlib
from collections import deque
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Final

from artifactr.files.core.errors import UnsafeFile

_KIB: Final = 1024
_MIB: Final = 1024 * _KIB

MAX_ENTRIES: Final = 10_000
"""The most entries a package may hold (Apache POI: 1,000; WordCraft: 20,000)."""

MAX_DIRECTORY_SIZE: Final = 8 * _MIB
"""The largest central directory, in bytes, read into memory whole (8 MiB)."""

MAX_PART_SIZE: Final = 256 * _MIB
"""The largest part, inflated or compressed, in bytes (256 MiB, WordCraft's own limit)."""

MAX_TOTAL_SIZE: Final = 512 * _MIB
"""The most bytes all parts may inflate to together (512 MiB, WordCraft's own limit)."""

MAX_RATIO: Final = 200.0
"""The most a part, or the archive, may inflate per compressed byte (Apache POI: 100)."""

RATIO_THRESHOLD: Final = 1 * _MIB
"""The size, in bytes, up to which a part or the archive is never refused for its ratio."""

CHUNK_SIZE: Final = 64 * _KIB
"""How many bytes are read, and at most inflated, at a time."""

CONTENT_TYPES: Final = "[Content_Types].xml"
"""The part every OPC package holds: a zip without it is not a .docx."""


@dataclass(frozen=True, slots=True)
class ZipLimits:
    """The limits a zip is screened against; the defaults are the module's constants."""

    max_entries: int = MAX_ENTRIES
    """The most entries in the central directory."""
    max_directory_size: int = MAX_DIRECTORY_SIZE
    """The largest central directory, in bytes."""
    max_part_size: int = MAX_PART_SIZE
    """The largest part, inflated or compressed, in bytes."""
    max_total_size: int = MAX_TOTAL_SIZE
    """The most bytes all parts may inflate to together."""
    max_ratio: float = MAX_RATIO
    """The most a part, or the archive, may inflate per compressed byte."""
    ratio_threshold: int = RATIO_THRESHOLD
    """The size up to which a part, or the archive, is never refused for its ratio."""


DEFAULT_LIMITS: Final = ZipLimits()
"""The limits every file is screened against unless the caller passes others."""


@dataclass(frozen=True, slots=True)
class Part:
    """One entry of a package, as its directory declares it and the screen has checked it."""

    name: str
    """Its name, as the archive spells it; a folder's ends with ``/``."""
    size: int
    """How many bytes it inflates to: exactly what its chunks hold, or it is refused."""


PartCheck = Callable[[Part, Iterator[bytes]], None]
"""A further check of each part, run as the screen reads it: it may read the part's chunks (the
screen reads what it leaves), and refuse the file by raising
:class:`~artifactr.files.core.errors.UnsafeFile`."""


def screen(
    source: bytes | IO[bytes],
    *,
    limits: ZipLimits = DEFAULT_LIMITS,
    check: PartCheck | None = None,
) -> None:
    """Check an OOXML package against the limits, reading every part once, in name order.

    Args:
        source: The file's bytes, or a seekable binary file read in chunks from its start. The
            file's position is put back afterwards.
        limits: The limits the zip is screened against.
        check: Called with each part and its chunks, if given, before the screen reads the rest
            of them.

    Raises:
        UnsafeFile: If the file is not a zip, not an OOXML package, passes one of ``limits``,
            or ``check`` refuses a part.
    """
    with _reading(source) as stream:
        for entry, end in _directory(stream, limits):
            chunks = _checked(entry, _contents(stream, entry, end))
            try:
                if check is not None:
                    check(Part(entry.name, entry.size), chunks)
            finally:
                # Read to the part's end even when the check refused it: a part that lies
                # about its size or CRC-32 is refused for that first, whatever the check found.
                deque(chunks, maxlen=0)


def part_key(name: str) -> str:
    """Return a part's name as OPC compares it: names with one key are one part.

    OPC compares part names case-insensitively; some readers also take a backslash for a slash
    and drop a leading slash.
    """
    return name.replace("\\", "/").lstrip("/").casefold()


# ─── the zip format ───────────────────────────────────────────────────────────

_END: Final = struct.Struct("<4s4H2LH")
_LOCATOR: Final = struct.Struct("<4sLQL")
_END64: Final = struct.Struct("<4sQ2H2L4Q")
_CENTRAL: Final = struct.Struct("<4s6H3L5H2L")
_LOCAL: Final = struct.Struct("<4s5H3L2H")
_FIELD: Final = struct.Struct("<2H")
_WIDE: Final = struct.Struct("<Q")

_END_SIGNATURE: Final = b"PK\x05\x06"
_LOCATOR_SIGNATURE: Final = b"PK\x06\x07"
_END64_SIGNATURE: Final = b"PK\x06\x06"
_CENTRAL_SIGNATURE: Final = b"PK\x01\x02"
_LOCAL_SIGNATURE: Final = b"PK\x03\x04"

_MAX_COMMENT: Final = 0xFFFF
_SATURATED: Final = 0xFFFFFFFF
_ZIP64_FIELD: Final = 0x0001
_UNICODE_PATH_FIELD: Final = 0x7075
"""Info-ZIP's Unicode Path field, which Python's zipfile reads as the part's name."""
_ENCRYPTED: Final = 0x0001
_UTF8: Final = 0x0800
_STORED: Final = 0
_DEFLATED: Final = 8


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    raw: bytes
    method: int
    crc: int
    compressed: int
    size: int
    offset: int


def _malformed(message: str) -> UnsafeFile:
    return UnsafeFile("not_a_zip", message)


@contextmanager
def _reading(source: bytes | IO[bytes]) -> Generator[IO[bytes]]:
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    start = stream.tell()
    try:
        yield stream
    except (struct.error, zlib.error, UnicodeDecodeError) as error:
        raise _malformed(f"the archive is malformed: {error}") from error
    finally:
        stream.seek(start)


def _read_at(stream: IO[bytes], offset: int, count: int, limit: int) -> bytes:
    # Never seek past the limit: offsets come from the file, and some streams fail on a huge one.
    data = b""
    if offset + count <= limit:
        stream.seek(offset)
        data = stream.read(count)
    if len(data) != count:
        raise _malformed("the archive is truncated, or an entry runs into another")
    return data


def _directory(stream: IO[bytes], limits: ZipLimits) -> list[tuple[_Entry, int]]:
    # Every figure the directory declares is checked here, before anything is inflated.
    size = stream.seek(0, io.SEEK_END)
    stream.seek(0)
    if stream.read(len(_COMPOUND_SIGNATURE)) == _COMPOUND_SIGNATURE:
        raise _compound(stream, size)
    entries, directory_size, directory_offset, end_offset = _end_record(stream, size)
    if entries > limits.max_entries:
        raise UnsafeFile(
            "too_many_entries",
            f"the archive has {entries} entries; the limit is {limits.max_entries}",
        )
    if directory_size > limits.max_directory_size:
        raise UnsafeFile(
            "too_many_entries",
            f"the archive's directory takes {directory_size} bytes; "
            f"the limit is {limits.max_directory_size}",
        )
    table = _read_at(stream, directory_offset, directory_size, end_offset)
    budget = max(limits.ratio_threshold, size * limits.max_ratio)
    parts: list[_Entry] = []
    seen: set[str] = set()
    total = 0
    at = 0
    for _ in range(entries):
        part, at = _central(table, at)
        key = part_key(part.name)
        if key in seen:
            raise UnsafeFile("duplicate_name", f"the archive holds {part.name} twice")
        seen.add(key)
        _check_part(part, limits)
        total += part.size
        if total > limits.max_total_size:
            raise UnsafeFile(
                "total_too_large",
                f"the parts inflate to more than {limits.max_total_size} bytes together",
            )
        if total > budget:
            raise UnsafeFile(
                "inflate_ratio",
                f"the parts inflate to more than {limits.max_ratio:g} times the file's size",
            )
        parts.append(part)
    if at != len(table):
        raise _malformed("the central directory does not hold the entries its end record counts")
    if part_key(CONTENT_TYPES) not in seen:
        raise UnsafeFile("not_docx", f"the archive has no {CONTENT_TYPES}: it is not a .docx")
    # Each entry must end before the next one starts, and the last before the directory.
    by_offset = sorted(parts, key=lambda part: part.offset)
    following = [part.offset for part in by_offset[1:]] + [directory_offset]
    ends = {part.name: end for part, end in zip(by_offset, following, strict=True)}
    return [(part, ends[part.name]) for part in sorted(parts, key=lambda part: part.name)]


def _end_record(stream: IO[bytes], size: int) -> tuple[int, int, int, int]:
    start = max(0, size - _END.size - _MAX_COMMENT - _LOCATOR.size)
    tail = _read_at(stream, start, size - start, size)
    at = tail.rfind(_END_SIGNATURE)
    if at < 0 or at + _END.size > len(tail):
        raise _malformed("the file is not a zip archive: it has no end record")
    _, _, _, _, entries, directory_size, directory_offset, _ = _END.unpack_from(tail, at)
    end_offset = start + at
    if at >= _LOCATOR.size and tail.startswith(_LOCATOR_SIGNATURE, at - _LOCATOR.size):
        _, disk, record_offset, disks = _LOCATOR.unpack_from(tail, at - _LOCATOR.size)
        if disk != 0 or disks > 1:
            raise _malformed("the archive spans several disks, which no .docx does")
        record = _read_at(stream, record_offset, _END64.size, end_offset)
        signature, _, _, _, _, _, _, entries, directory_size, directory_offset = _END64.unpack(
            record
        )
        if signature != _END64_SIGNATURE:
            raise _malformed("the archive's zip64 end record is missing")
        end_offset = record_offset
    return entries, directory_size, directory_offset, end_offset


def _central(table: bytes, at: int) -> tuple[_Entry, int]:
    (
        signature,
        _,
        _,
        flags,
        method,
        _,
        _,
        crc,
        compressed,
        size,
        name_length,
        extra_length,
        comment_length,
        _,
        _,
        _,
        offset,
    ) = _CENTRAL.unpack_from(table, at)
    if signature != _CENTRAL_SIGNATURE:
        raise _malformed("the central directory has an entry without its signature")
    name_at = at + _CENTRAL.size
    extra_at = name_at + name_length
    raw = table[name_at:extra_at]
    name = raw.decode("utf-8" if flags & _UTF8 else "cp437")
    extra = table[extra_at : extra_at + extra_length]
    fields = _fields(name, extra)
    _same_name(name, raw, fields.get(_UNICODE_PATH_FIELD))
    size, compressed, offset = _widened(fields.get(_ZIP64_FIELD, b""), size, compressed, offset)
    if flags & _ENCRYPTED:
        # OPC never encrypts a part (ECMA-376 part 2): a password was set on the zip.
        raise UnsafeFile("encrypted", _PASSWORD)
    if method not in (_STORED, _DEFLATED):
        # OPC allows only stored and deflated parts.
        raise UnsafeFile("not_docx", "the archive has a part compressed in a way OPC forbids")
    part = _Entry(
        name=name,
        raw=raw,
        method=method,
        crc=crc,
        compressed=compressed,
        size=size,
        offset=offset,
    )
    return part, extra_at + extra_length + comment_length


def _widened(wide: bytes, size: int, compressed: int, offset: int) -> tuple[int, int, int]:
    # A saturated 32-bit field means the real value is in the zip64 extra field, in this order.
    fields = [size, compressed, offset]
    at = 0
    for index, value in enumerate(fields):
        if value == _SATURATED:
            (fields[index],) = _WIDE.unpack_from(wide, at)
            at += _WIDE.size
    return fields[0], fields[1], fields[2]


def _fields(name: str, extra: bytes) -> dict[int, bytes]:
    # Every field must end inside the extra data, as other readers (Python's zipfile) require;
    # the first field of each kind counts, as it does for them.
    found: dict[int, bytes] = {}
    at = 0
    while at + _FIELD.size <= len(extra):
        kind, length = _FIELD.unpack_from(extra, at)
        at += _FIELD.size
        if at + length > len(extra):
            raise _malformed(
                f"the archive can't be read: an extra field of {name} runs past its end"
            )
        found.setdefault(kind, extra[at : at + length])
        at += length
    return found


def _same_name(name: str, raw: bytes, unicode_path: bytes | None) -> None:
    # zipfile renames a part to its Unicode Path field's name when the field's CRC-32 is the
    # header name's: the app would read a part under a name this screen never checked. A .docx
    # names its parts in the header; a field that names the part otherwise is refused.
    if unicode_path is None:
        return
    if len(unicode_path) < 5:
        raise _malformed(f"the archive can't be read: {name} has a corrupt Unicode Path field")
    if unicode_path[0] != 1:
        return
    if int.from_bytes(unicode_path[1:5], "little") != zlib.crc32(raw):
        return
    if unicode_path[5:] not in (b"", name.encode()):
        raise _malformed(f"the archive names the part {name} a second way")


def _check_part(part: _Entry, limits: ZipLimits) -> None:
    if max(part.size, part.compressed) > limits.max_part_size:
        raise UnsafeFile(
            "part_too_large",
            f"{part.name} declares more than {limits.max_part_size} bytes",
        )
    if part.size > limits.ratio_threshold and part.size > part.compressed * limits.max_ratio:
        raise UnsafeFile(
            "inflate_ratio",
            f"{part.name} inflates more than {limits.max_ratio:g} times: a zip bomb",
        )


# ─── compound files ───────────────────────────────────────────────────────────

_COMPOUND_SIGNATURE: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_COMPOUND_HEADER: Final = struct.Struct("<30xH16xL")
_COMPOUND_FAT: Final = struct.Struct("<76x109L")
_COMPOUND_ENTRY: Final = struct.Struct("<64sH62x")
_COMPOUND_NEXT: Final = struct.Struct("<L")
_COMPOUND_LAST: Final = 0xFFFFFFFA
"""Sector numbers from here on are markers (end of chain, free, allocation table), not sectors."""
_COMPOUND_SECTORS: Final = 64
"""The most directory sectors read to find an encrypted package: Word writes one or two."""
_ENCRYPTED_PACKAGE: Final = "EncryptedPackage"
"""The stream that holds a password-protected package (MS-OFFCRYPTO 2.3.4.4)."""
_COMPOUND_FORMATS: Final = (
    ("Workbook", "an Excel 97-2003 workbook (.xls)", "an Excel workbook (.xlsx)"),
    ("Book", "an Excel 5 workbook (.xls)", "an Excel workbook (.xlsx)"),
    (
        "PowerPoint Document",
        "a PowerPoint 97-2003 presentation (.ppt)",
        "a PowerPoint presentation (.pptx)",
    ),
)
"""The stream that names an older binary format, what the file is, and what to save it as."""
_PASSWORD: Final = (
    "the document is protected by a password, so it can't be read: open it, remove the "
    "password (in Word: File, Info, Protect Document, Encrypt with Password, and clear it), "
    "save it, and upload it again"
)


def _compound(stream: IO[bytes], size: int) -> UnsafeFile:
    """Return the refusal of an OLE compound file: ``encrypted`` if it holds an encrypted package.

    Word saves a password-protected .docx as a compound file whose ``EncryptedPackage`` stream
    holds the encrypted zip; a Word 97-2003 .doc is a compound file too, without one, and so are
    an Excel 97-2003 .xls (a ``Workbook`` stream) and a PowerPoint 97-2003 .ppt (``PowerPoint
    Document``), refused as ``binary_format``. Only the
    directory's names are read, at most :data:`_COMPOUND_SECTORS` sectors of them, along the
    chain the first allocation table sectors give.
    """
    names = _compound_names(stream, size)
    if _ENCRYPTED_PACKAGE in names:
        return UnsafeFile("encrypted", _PASSWORD)
    for stream_name, what, saved in _COMPOUND_FORMATS:
        if stream_name in names:
            return UnsafeFile(
                "binary_format",
                f"the file is {what}, an OLE compound file, not an OOXML package: "
                f"save it as {saved} and upload that",
            )
    return UnsafeFile(
        "not_docx",
        "the file is an OLE compound file (a Word 97-2003 .doc, or another older Office "
        "format), not a .docx: save it as a Word document (.docx) and upload that",
    )


def _compound_names(stream: IO[bytes], size: int) -> set[str]:
    header = _read_at(stream, 0, _COMPOUND_FAT.size, size)
    shift, sector = _COMPOUND_HEADER.unpack_from(header)
    if shift not in (9, 12):
        return set()
    fat = _COMPOUND_FAT.unpack_from(header)
    width = 1 << shift
    names: set[str] = set()
    for _ in range(_COMPOUND_SECTORS):
        if sector >= _COMPOUND_LAST:
            break
        entries = _read_at(stream, (sector + 1) * width, width, size)
        for at in range(0, width, _COMPOUND_ENTRY.size):
            raw, length = _COMPOUND_ENTRY.unpack_from(entries, at)
            names.add(raw[: max(0, length - 2)].decode("utf-16-le", "replace"))
        per_sector = width // _COMPOUND_NEXT.size
        table = fat[sector // per_sector] if sector // per_sector < len(fat) else _COMPOUND_LAST
        if table >= _COMPOUND_LAST:
            break
        at = (table + 1) * width + sector % per_sector * _COMPOUND_NEXT.size
        (sector,) = _COMPOUND_NEXT.unpack(_read_at(stream, at, _COMPOUND_NEXT.size, size))
    return names


# ─── reading parts ────────────────────────────────────────────────────────────


def _contents(stream: IO[bytes], part: _Entry, end: int) -> Iterator[bytes]:
    header = _read_at(stream, part.offset, _LOCAL.size, end)
    signature, _, _, _, _, _, _, _, _, name_length, extra_length = _LOCAL.unpack(header)
    name = _read_at(stream, part.offset + _LOCAL.size, name_length, end)
    if signature != _LOCAL_SIGNATURE or name != part.raw:
        raise _malformed(f"the local header of {part.name} does not match the directory")
    start = part.offset + _LOCAL.size + name_length + extra_length
    if start + part.compressed > end:
        raise _malformed(f"{part.name} runs into the next entry or the directory")
    if part.method == _STORED:
        return _stored(stream, part, start, end)
    return _inflated(stream, part, start, end)


def _stored(stream: IO[bytes], part: _Entry, at: int, end: int) -> Iterator[bytes]:
    left = part.compressed
    while left:
        chunk = _read_at(stream, at, min(CHUNK_SIZE, left), end)
        at += len(chunk)
        left -= len(chunk)
        yield chunk


def _inflated(stream: IO[bytes], part: _Entry, at: int, end: int) -> Iterator[bytes]:
    # At most one byte past the declared size is inflated: _checked refuses the part then.
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    left = part.compressed
    room = part.size + 1
    pending = b""
    while not inflater.eof:
        if not pending and left:
            pending = _read_at(stream, at, min(CHUNK_SIZE, left), end)
            at += len(pending)
            left -= len(pending)
        data = inflater.decompress(pending, min(CHUNK_SIZE, room))
        pending = inflater.unconsumed_tail
        if not data and not pending and not left:
            return
        room -= len(data)
        yield data


def _checked(part: _Entry, chunks: Iterator[bytes]) -> Iterator[bytes]:
    produced = 0
    crc = 0
    for chunk in chunks:
        produced += len(chunk)
        if produced > part.size:
            raise UnsafeFile(
                "part_too_large",
                f"{part.name} inflates past the {part.size} bytes it declares",
            )
        crc = zlib.crc32(chunk, crc)
        yield chunk
    if produced != part.size or crc != part.crc:
        raise _malformed(f"{part.name} does not match its declared size and CRC-32")
