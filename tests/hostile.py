"""Hostile zips: files a screen must refuse, made on the fly so nothing binary is committed.

Each generator is a plain function that returns the file's bytes; a test writes the big ones to
disk once a session. :func:`build` writes a zip by hand, entry by entry, so a generator can lie
where :mod:`zipfile` would not let it: in a declared size, a CRC-32, a name, an offset or a count.
:data:`REFUSED` lists every hostile file with the reason a screen refuses it for, so the worker's
tests can reuse the list.

A zip bomb is made without deflating gigabytes: after a full flush, deflate starts afresh, so
one MiB of zeros always compresses to the same byte-aligned block, and the stream is that block
repeated, then an empty final block.
"""

import struct
import zlib
from collections.abc import Callable, Iterable
from typing import Final, NamedTuple

from artifactr.files.core.errors import UnsafeReason

KIB: Final = 1024
MIB: Final = 1024 * KIB
GIB: Final = 1024 * MIB

STORED: Final = 0
DEFLATED: Final = 8
BZIP2: Final = 12
ENCRYPTED: Final = 0x0001
UTF8: Final = 0x0800
SATURATED: Final = 0xFFFFFFFF

CONTENT_TYPES: Final = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    b'<Default Extension="xml" ContentType="application/xml"/></Types>'
)
"""A minimal ``[Content_Types].xml``: enough for a zip to pass as a package."""

DOCUMENT: Final = b"<w:document/>"
"""A stand-in for ``word/document.xml``: screening doesn't parse XML."""


class Entry(NamedTuple):
    """One entry as :func:`build` writes it, every declared figure free to lie."""

    name: str
    """The name in the central directory."""
    data: bytes
    """The bytes after the local header: the part as stored, or deflated."""
    size: int
    """The declared inflated size."""
    crc: int
    """The declared CRC-32."""
    method: int = DEFLATED
    """The compression method: 0 stored, 8 deflated."""
    flags: int = 0
    """The general-purpose flags (bit 0 encrypted, bit 11 UTF-8 names)."""
    extra: bytes = b""
    """Extra fields for the central directory, before any zip64 field."""
    compressed: int | None = None
    """The declared compressed size, if not ``len(data)``."""
    offset: int | None = None
    """The declared offset of the local header, if not where it is."""
    local_name: bytes | None = None
    """The name in the local header, if not the central one."""
    zip64: bool = False
    """Saturate the sizes and declare them in a zip64 extra field."""


def deflated(name: str, content: bytes) -> Entry:
    """Return an honest deflated entry."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    data = packer.compress(content) + packer.flush()
    return Entry(name, data, len(content), zlib.crc32(content))


def stored(name: str, content: bytes) -> Entry:
    """Return an honest stored entry."""
    return Entry(name, content, len(content), zlib.crc32(content), method=STORED)


def package(*entries: Entry) -> list[Entry]:
    """Return the entries after a ``[Content_Types].xml``, so the zip passes as a package."""
    return [deflated("[Content_Types].xml", CONTENT_TYPES), *entries]


def build(
    entries: Iterable[Entry],
    *,
    count: int | None = None,
    zip64_end: bool = False,
    comment: bytes = b"",
) -> bytes:
    """Return a zip of the entries, as declared.

    Args:
        entries: The entries, in the order they are written.
        count: The entry count the end record declares, if not the true one.
        zip64_end: Write a zip64 end record and locator; always done past 65,535 entries.
        comment: The archive's comment.
    """
    pieces: list[bytes] = []
    directory: list[bytes] = []
    at = 0
    written = 0
    for entry in entries:
        compressed = len(entry.data) if entry.compressed is None else entry.compressed
        wide = struct.pack("<2H2Q", 0x0001, 16, entry.size, compressed) if entry.zip64 else b""
        size32 = SATURATED if entry.zip64 else entry.size
        compressed32 = SATURATED if entry.zip64 else compressed
        name = entry.name.encode("utf-8" if entry.flags & UTF8 else "cp437")
        local_name = name if entry.local_name is None else entry.local_name
        local = struct.pack(
            "<4s5H3L2H",
            b"PK\x03\x04",
            45 if entry.zip64 else 20,
            entry.flags,
            entry.method,
            0,
            0x21,
            entry.crc,
            compressed32,
            size32,
            len(local_name),
            len(wide),
        )
        pieces += [local, local_name, wide, entry.data]
        extra = entry.extra + wide
        directory += [
            struct.pack(
                "<4s6H3L5H2L",
                b"PK\x01\x02",
                0x0314,
                45 if entry.zip64 else 20,
                entry.flags,
                entry.method,
                0,
                0x21,
                entry.crc,
                compressed32,
                size32,
                len(name),
                len(extra),
                0,
                0,
                0,
                0,
                at if entry.offset is None else entry.offset,
            ),
            name,
            extra,
        ]
        at += len(local) + len(local_name) + len(wide) + len(entry.data)
        written += 1
    declared = written if count is None else count
    table = b"".join(directory)
    end = b""
    if zip64_end or declared > 0xFFFF:
        end = struct.pack(
            "<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, declared, declared, len(table), at
        )
        end += struct.pack("<4sLQL", b"PK\x06\x07", 0, at + len(table), 1)
        declared = 0xFFFF
    end += struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, declared, declared, len(table), at, len(comment)
    )
    return b"".join([*pieces, table, end, comment])


# ─── zip bombs ────────────────────────────────────────────────────────────────


def deflated_zeros(mebibytes: int) -> bytes:
    """Return a raw deflate stream of ``mebibytes`` MiB of zeros, made in milliseconds."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    block = packer.compress(bytes(MIB)) + packer.flush(zlib.Z_FULL_FLUSH)
    return block * mebibytes + packer.flush()


def zip_bomb(expands_to: int = 4 * GIB) -> bytes:
    """Return a package whose document inflates to ``expands_to`` bytes of zeros, declared.

    Past 4 GiB the sizes are declared in a zip64 extra field. The CRC-32 is left 0: a screen
    refuses the part from its declared size before it could check it.
    """
    data = deflated_zeros(expands_to // MIB)
    part = Entry("word/document.xml", data, expands_to, 0, zip64=expands_to >= SATURATED)
    return build(package(part))


def lying_bomb(expands_to: int = 4 * GIB, declares: int = MIB) -> bytes:
    """Return a package whose document declares ``declares`` bytes but inflates to gigabytes.

    Its CRC-32 is that of its first ``declares`` bytes, so a reader that stops at the declared
    size and checks the CRC takes it for a small, sound part.
    """
    data = deflated_zeros(expands_to // MIB)
    part = Entry("word/document.xml", data, declares, zlib.crc32(bytes(declares)))
    return build(package(part))


def ratio_bomb(expands_to: int = 200 * MIB) -> bytes:
    """Return a package with one part within the size limits that inflates 1,000 times."""
    data = deflated_zeros(expands_to // MIB)
    return build(package(Entry("word/document.xml", data, expands_to, 0)))


def small_bombs(count: int = 256, each: int = MIB) -> bytes:
    """Return a package of ``count`` parts, each too small to be judged by its own ratio."""
    data = deflated_zeros(each // MIB)
    crc = zlib.crc32(bytes(each))
    parts = [Entry(f"word/media/zeros{index}.bin", data, each, crc) for index in range(count)]
    return build(package(*parts))


def over_total(parts: int = 3, each: int = 200 * MIB, compressed: int = 2 * MIB) -> bytes:
    """Return a package whose parts declare more than 512 MiB together, none too large alone.

    Their data is filler: the declared sizes refuse the file before any is read. Each is
    ``compressed`` bytes, so neither a part's ratio nor the archive's passes 200.
    """
    filler = bytes(compressed)
    entries = [Entry(f"word/media/big{index}.bin", filler, each, 0) for index in range(parts)]
    return build(package(*entries))


def padded_directory(entries: int = 160, padding: int = 65_000) -> bytes:
    """Return a package whose directory passes 8 MiB, each entry padded by an extra field."""
    extra = struct.pack("<2H", 0x7A7A, padding) + bytes(padding)
    padded = [
        stored(f"word/media/image{index}.png", b"")._replace(extra=extra)
        for index in range(entries)
    ]
    return build(package(*padded))


# ─── not a package ────────────────────────────────────────────────────────────


def sound() -> bytes:
    """Return a small, sound package: a ``[Content_Types].xml`` and a document."""
    return build(package(deflated("word/document.xml", DOCUMENT)))


def sound_docx() -> bytes:
    """Return a small, sound package that names its main part a Word document's: no more."""
    types = CONTENT_TYPES.replace(
        b"</Types>",
        b'<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
        b'officedocument.wordprocessingml.document.main+xml"/></Types>',
    )
    rels = (
        b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/officeDocument" Target="word/document.xml"/></Relationships>'
    )
    return build(
        [
            deflated("[Content_Types].xml", types),
            deflated("_rels/.rels", rels),
            deflated("word/document.xml", DOCUMENT),
        ]
    )


def many_entries(count: int = 100_000) -> bytes:
    """Return a package of ``count`` empty stored entries (zip64, past 65,535)."""
    empties = [stored(f"word/media/image{index}.png", b"") for index in range(count - 1)]
    return build(package(*empties))


def under_counted() -> bytes:
    """Return a package whose end record counts fewer entries than its directory holds."""
    return build(package(deflated("word/document.xml", DOCUMENT)), count=1)


def not_a_zip() -> bytes:
    """Return the signature of an OLE compound file and no directory: not a .docx."""
    return COMPOUND + bytes(4 * KIB)


COMPOUND: Final = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
"""The signature of an OLE compound file: a .doc, or a password-protected .docx."""

FREE: Final = 0xFFFFFFFF
END_OF_CHAIN: Final = 0xFFFFFFFE
FAT_SECTOR: Final = 0xFFFFFFFD


def compound(*names: str, directory_sectors: int = 1) -> bytes:
    """Return an OLE compound file (version 3, 512-byte sectors) of empty streams, by name.

    Sector 0 is the allocation table, then ``directory_sectors`` sectors of directory entries
    (four each) chained through it: enough for a reader that looks only at the names.
    """
    entries = [("Root Entry", 5), *((name, 2) for name in names)]
    slots = directory_sectors * 4
    entries += [("", 0)] * (slots - len(entries))
    directory = b""
    for name, kind in entries[:slots]:
        encoded = (name + "\0").encode("utf-16-le") if name else b""
        directory += struct.pack(
            "<64sHBB3L16sL2Q2LL",
            encoded,
            len(encoded),
            kind,
            1,
            FREE,
            FREE,
            FREE,
            bytes(16),
            0,
            0,
            0,
            END_OF_CHAIN,
            0,
            0,
        )
    chain = [FAT_SECTOR, *range(2, directory_sectors + 1), END_OF_CHAIN]
    fat = struct.pack(f"<{len(chain)}L", *chain) + b"\xff" * (512 - 4 * len(chain))
    header = (
        COMPOUND
        + bytes(16)
        + struct.pack("<5H6x3L", 0x3E, 3, 0xFFFE, 9, 6, 0, 1, 1)
        + struct.pack("<4L", 0, 4096, END_OF_CHAIN, 0)
        + struct.pack("<2L", END_OF_CHAIN, 0)
        + struct.pack("<L", 0)
        + b"\xff" * (4 * 108)
    )
    return header + fat + directory


def password_protected() -> bytes:
    """Return a .docx as Word saves it with a password: an encrypted package in a compound file."""
    return compound("\x06DataSpaces", "EncryptionInfo", "EncryptedPackage")


def legacy_doc() -> bytes:
    """Return an OLE compound file as a Word 97-2003 .doc is: no encrypted package."""
    return compound("WordDocument", "1Table", "\x05SummaryInformation")


def empty() -> bytes:
    """Return an empty file."""
    return b""


def truncated(data: bytes, keep: float = 0.5) -> bytes:
    """Return the first part of a file, ``keep`` of it, as an interrupted upload leaves it."""
    return data[: int(len(data) * keep)]


def one_byte_short(data: bytes) -> bytes:
    """Return a file without its last byte: the end record is cut."""
    return data[:-1]


def without_content_types() -> bytes:
    """Return a zip with a document but no ``[Content_Types].xml``: not a package."""
    return build([deflated("word/document.xml", DOCUMENT)])


def duplicate_names(second: str = "word/document.xml") -> bytes:
    """Return a package that holds its document twice, the second time as ``second``.

    OPC part names are case-insensitive, and some readers take a backslash for a slash or drop
    a leading slash, so ``Word/Document.XML``, ``word\\document.xml`` and ``/word/document.xml``
    all name the same part.
    """
    return build(
        package(deflated("word/document.xml", DOCUMENT), deflated(second, b"<w:document>x"))
    )


def encrypted() -> bytes:
    """Return a package with a part flagged as encrypted."""
    part = deflated("word/document.xml", DOCUMENT)._replace(flags=ENCRYPTED)
    return build(package(part))


def bzip2_part() -> bytes:
    """Return a package with a part compressed by a method OPC does not allow."""
    part = deflated("word/document.xml", DOCUMENT)._replace(method=BZIP2)
    return build(package(part))


# ─── lies in the directory ────────────────────────────────────────────────────


def short_part() -> bytes:
    """Return a package whose document holds fewer bytes than it declares."""
    part = deflated("word/document.xml", DOCUMENT)
    return build(package(part._replace(size=part.size + 10)))


def wrong_crc() -> bytes:
    """Return a package whose document's CRC-32 is wrong."""
    part = deflated("word/document.xml", DOCUMENT)
    return build(package(part._replace(crc=part.crc ^ 1)))


def stored_longer() -> bytes:
    """Return a package with a stored part that holds more bytes than it declares."""
    part = stored("word/document.xml", DOCUMENT)
    return build(package(part._replace(size=4)))


def corrupt_deflate() -> bytes:
    """Return a package whose document is not a deflate stream."""
    part = deflated("word/document.xml", DOCUMENT)
    return build(package(part._replace(data=b"\xff" * len(part.data))))


def shared_data() -> bytes:
    """Return a package whose parts all point at one local entry, as an overlapping bomb does."""
    kernel = deflated("word/document.xml", DOCUMENT)
    copies = [kernel._replace(name=f"word/copy{index}.xml", offset=0) for index in range(3)]
    return build([kernel._replace(name="[Content_Types].xml"), *copies])


def running_over() -> bytes:
    """Return a package whose first part's data runs into the next entry."""
    parts = package(deflated("word/document.xml", DOCUMENT))
    return build([parts[0]._replace(compressed=len(parts[0].data) + 40), parts[1]])


def other_local_name() -> bytes:
    """Return a package whose document's local header names another part."""
    part = deflated("word/document.xml", DOCUMENT)._replace(local_name=b"word/other.xml")
    return build(package(part))


def past_the_end() -> bytes:
    """Return a package whose document's local header is declared beyond any file's end."""
    part = deflated("word/document.xml", DOCUMENT)._replace(offset=SATURATED - 1)
    return build(package(part))


def bad_directory_signature() -> bytes:
    """Return a package whose second directory entry lacks its signature."""
    data = build(package(deflated("word/document.xml", DOCUMENT)))
    last = data.rfind(b"PK\x01\x02")
    return data[:last] + b"PK\x01\x09" + data[last + 4 :]


def bad_zip64_end() -> bytes:
    """Return a package whose zip64 locator points at something else than a zip64 end record."""
    data = build(package(deflated("word/document.xml", DOCUMENT)), zip64_end=True)
    return data.replace(b"PK\x06\x06", b"PK\x06\x09")


def missing_zip64_field() -> bytes:
    """Return a package with saturated sizes and no zip64 field to read them from."""
    part = deflated("word/document.xml", DOCUMENT)._replace(zip64=True)
    return build(package(part)).replace(b"\x01\x00\x10\x00", b"\x99\x99\x10\x00")


def bad_utf8_name() -> bytes:
    """Return a package with a name flagged UTF-8 that is not."""
    part = deflated("word/document.xml", DOCUMENT)._replace(flags=UTF8)
    return build(package(part)).replace(b"word/document.xml", b"word/d\xffcument.xml")


REFUSED: Final[dict[str, tuple[Callable[[], bytes], UnsafeReason]]] = {
    "a zip bomb that declares 4 GiB": (zip_bomb, "part_too_large"),
    "a zip bomb that declares 1 MiB and inflates to 4 GiB": (lying_bomb, "part_too_large"),
    "a part that inflates 1,000 times": (ratio_bomb, "inflate_ratio"),
    "256 small parts that each inflate 1,000 times": (small_bombs, "inflate_ratio"),
    "parts over 512 MiB together": (over_total, "total_too_large"),
    "100,000 entries": (many_entries, "too_many_entries"),
    "a directory over 8 MiB": (padded_directory, "too_many_entries"),
    "an end record that under-counts": (under_counted, "not_a_zip"),
    "a package cut in half": (lambda: truncated(sound()), "not_a_zip"),
    "a package one byte short": (lambda: one_byte_short(sound()), "not_a_zip"),
    "an OLE compound file without a directory": (not_a_zip, "not_docx"),
    "a password-protected document": (password_protected, "encrypted"),
    "a password-protected document whose directory takes two sectors": (
        lambda: compound("a", "b", "c", "d", "EncryptedPackage", directory_sectors=2),
        "encrypted",
    ),
    "a Word 97-2003 document": (legacy_doc, "not_docx"),
    "an empty file": (empty, "not_a_zip"),
    "a zip without [Content_Types].xml": (without_content_types, "not_docx"),
    "a name twice": (duplicate_names, "duplicate_name"),
    "a name twice once case is folded": (
        lambda: duplicate_names("Word/Document.XML"),
        "duplicate_name",
    ),
    "a name twice once a backslash is a slash": (
        lambda: duplicate_names("word\\document.xml"),
        "duplicate_name",
    ),
    "a name twice once a leading slash is dropped": (
        lambda: duplicate_names("/word/document.xml"),
        "duplicate_name",
    ),
    "an encrypted part": (encrypted, "encrypted"),
    "a bzip2 part": (bzip2_part, "not_docx"),
    "a part shorter than it declares": (short_part, "not_a_zip"),
    "a part with a wrong CRC-32": (wrong_crc, "not_a_zip"),
    "a stored part longer than it declares": (stored_longer, "part_too_large"),
    "a part that is not a deflate stream": (corrupt_deflate, "not_a_zip"),
    "parts that share their data": (shared_data, "not_a_zip"),
    "a part that runs into the next": (running_over, "not_a_zip"),
    "a local header with another name": (other_local_name, "not_a_zip"),
    "a local header past the end": (past_the_end, "not_a_zip"),
    "a directory entry without its signature": (bad_directory_signature, "not_a_zip"),
    "a zip64 locator pointing elsewhere": (bad_zip64_end, "not_a_zip"),
    "saturated sizes without a zip64 field": (missing_zip64_field, "not_a_zip"),
    "a UTF-8 name that is not UTF-8": (bad_utf8_name, "not_a_zip"),
}
"""Every hostile file made here from nothing, by a sentence, with the reason it is refused."""
