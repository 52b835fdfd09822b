"""Screen: what the worker checks in a file before any app sees it (RFC-0003).

Every file is hostile until screened. :func:`screen_file` runs the package's one zip screen
(:mod:`artifactr.files.core.screen`: entries, declared and actual sizes, inflate ratio, duplicate
names, not a zip), which checks the whole directory before it inflates a byte, then reads each
part once, in chunks, and never past the size it declares. As it reads each part, the worker
checks what the zip screen can't see, and the fingerprint is digested in the same pass, so the
app is given the fingerprint and never reads the file to screen it again:

- **XML.** Each part named ``.xml``, ``.rels`` or ``.vml``, or whose bytes start like XML, goes
  through the standard library's expat parser, streaming. A document type declaration is
  refused outright (OPC forbids them, ECMA-376 part 2), and with it every entity declaration: a
  billion laughs never expands. Elements may nest :data:`MAX_DEPTH` deep (WordCraft's own
  limit), and the package may hold :data:`MAX_ELEMENTS` of them in all. Expat rescans a token
  it hasn't finished on every feed, so a token (a tag, a comment) may not run on for more than
  :data:`MAX_TOKEN` bytes: a hundred-megabyte attribute would take minutes. A part named as XML
  must be well-formed; another that merely starts with ``<`` (HTML, say) is screened until it
  stops parsing.
- **Images.** A part that starts like a PNG, a GIF or a JPEG may declare at most
  :data:`MAX_PIXELS` pixels (the PNG's ``IHDR``, the GIF's screen, the JPEG's first frame
  header): a 100,000 x 100,000 image fits in a few hundred bytes and decodes to 40 GB.
- **Packages inside.** A part that is itself a zip (an embedded workbook, or a zip bomb inside
  a .docx) is screened the same way, to :data:`MAX_NESTING` levels.

Each refusal is an :class:`~artifactr.files.core.errors.UnsafeFile` naming the part, with a reason
from the package's one list (:data:`~artifactr.files.core.errors.UnsafeReason`), named for what
happened: a declaration (DTD) is ``not_docx``, as is a part named as XML that isn't; nesting
over its limit is ``too_deep``, elements ``too_many_elements``, a token ``token_too_large``; an
image over its pixels (or hiding its size) is ``image_too_large``; a package nested too deep is
``nested_too_deep``. A part that lies about its size or CRC-32 is refused for that
(``part_too_large``, ``not_a_zip``) whatever its content was refused for. Memory stays bounded:
a chunk, expat's buffer of one unfinished token, and a nested part spooled to disk past a
mebibyte.
"""

import itertools
import struct
import tempfile
import xml.parsers.expat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Final

from artifactr.files.core.errors import UnsafeFile
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.screen import DEFAULT_LIMITS, Part, PartCheck, ZipLimits, screen

_MIB: Final = 1024 * 1024

MAX_DEPTH: Final = 256
"""How deep elements may nest in an XML part (WordCraft refuses deeper ones too)."""

MAX_ELEMENTS: Final = 8_000_000
"""How many XML elements a package may hold in all its parts (WordCraft: as many per part)."""

MAX_TOKEN: Final = 8 * _MIB
"""How many bytes one XML token (a tag, a comment, a declaration) may take."""

MAX_PIXELS: Final = 100_000_000
"""How many pixels an image may declare: 100 megapixels, a 10,000 x 10,000 picture."""

MAX_NESTING: Final = 2
"""How many levels of packages inside packages are screened; deeper ones are refused."""

CHUNK_SIZE: Final = _MIB
"""Bytes fed to the XML parser at a time, at least: expat's rescans cost less per big chunk."""

MAX_JPEG_STEPS: Final = 65_536
"""How many bytes and segments of a JPEG are walked to find its size before it is refused."""

SPOOL_SIZE: Final = _MIB
"""Bytes of a nested package held in memory before it is spooled to disk."""

XML_NAMES: Final = (".xml", ".rels", ".vml")
"""The endings of part names that must hold well-formed XML."""


@dataclass(frozen=True, slots=True)
class Screening:
    """The limits a file is screened against; the defaults are the module's constants."""

    zip: ZipLimits = DEFAULT_LIMITS
    """The zip screen's limits: entries, sizes, inflate ratio."""
    max_depth: int = MAX_DEPTH
    """How deep XML elements may nest."""
    max_elements: int = MAX_ELEMENTS
    """How many XML elements the package may hold in all."""
    max_token: int = MAX_TOKEN
    """How many bytes one XML token may take."""
    max_pixels: int = MAX_PIXELS
    """How many pixels an image may declare."""
    max_nesting: int = MAX_NESTING
    """How many levels of nested packages are screened."""


DEFAULT_SCREENING: Final = Screening()
"""The limits every file is screened against unless the worker is given others."""


def screen_file(source: IO[bytes], screening: Screening = DEFAULT_SCREENING) -> str:
    """Check a .docx package against the limits, reading it once in chunks, before any app sees it.

    Args:
        source: A seekable binary file, read from its start; its position is put back.
        screening: The limits.

    Returns:
        The file's fingerprint (:func:`artifactr.files.core.fingerprint.fingerprint`), digested
        in the same pass.

    Raises:
        UnsafeFile: If the file is not a sound .docx package or is over a limit, naming the part.
    """
    check = _checker(screening, _Budget(screening.max_elements), level=0)
    return fingerprint(source, limits=screening.zip, check=check)


# ─── the package ──────────────────────────────────────────────────────────────


@dataclass
class _Budget:
    elements: int
    """XML elements left for the whole package, nested ones included."""


def _checker(screening: Screening, budget: _Budget, level: int) -> PartCheck:
    """Return the check the zip screen runs on each part of a package ``level`` deep."""

    def check(part: Part, chunks: Iterator[bytes]) -> None:
        if not part.name.endswith("/"):
            _screen_part(part.name, _rechunked(chunks), screening, budget, level)

    return check


def _screen_part(
    name: str, chunks: Iterator[bytes], screening: Screening, budget: _Budget, level: int
) -> None:
    head = next(chunks, b"")
    pixels = _pixels(name, head, chunks)
    if pixels is not None:
        if pixels > screening.max_pixels:
            raise UnsafeFile(
                "image_too_large",
                f"{name} is an image of {pixels:,} pixels; the limit is {screening.max_pixels:,}",
            )
    elif head.startswith(_ZIP_SIGNATURES):
        _screen_nested(name, itertools.chain((head,), chunks), screening, budget, level)
    elif name.lower().endswith(XML_NAMES) or _looks_like_xml(head):
        _screen_xml(name, itertools.chain((head,), chunks), screening, budget)


def _screen_nested(
    name: str, chunks: Iterator[bytes], screening: Screening, budget: _Budget, level: int
) -> None:
    if level + 1 > screening.max_nesting:
        raise UnsafeFile(
            "nested_too_deep",
            f"{name} is a package nested {level + 1} deep; the limit is {screening.max_nesting}",
        )
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_SIZE) as inner:
        for chunk in chunks:
            inner.write(chunk)
        inner.seek(0)
        try:
            screen(inner, limits=screening.zip, check=_checker(screening, budget, level + 1))
        except UnsafeFile as error:
            raise UnsafeFile(error.reason, f"{name}, a package inside: {error}") from error


def _rechunked(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Return a part's chunks joined into pieces of :data:`CHUNK_SIZE` or more, none empty."""
    piece = bytearray()
    for chunk in chunks:
        piece += chunk
        if len(piece) >= CHUNK_SIZE:
            yield bytes(piece)
            piece.clear()
    if piece:
        yield bytes(piece)


_ZIP_SIGNATURES: Final = (b"PK\x03\x04", b"PK\x05\x06")


# ─── XML ──────────────────────────────────────────────────────────────────────

_BOMS: Final = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


def _looks_like_xml(head: bytes) -> bool:
    for bom in _BOMS:
        head = head.removeprefix(bom)
    return head.lstrip(b" \t\r\n\x00").startswith(b"<")


class _Refused(Exception):
    """Raised inside expat's handlers, to stop the parse with a refusal."""

    def __init__(self, refusal: UnsafeFile) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


@dataclass
class _Walk:
    """What the parse has seen of one part."""

    name: str
    named: bool
    """Whether the part is named as XML, so must be well-formed and declare no type."""
    screening: Screening
    budget: _Budget
    depth: int = 0
    progressed: bool = False

    def start(self, _tag: str, _attributes: object) -> None:
        self.progressed = True
        self.depth += 1
        self.budget.elements -= 1
        if self.depth > self.screening.max_depth:
            raise _Refused(
                UnsafeFile(
                    "too_deep",
                    f"{self.name} nests elements more than {self.screening.max_depth} deep",
                )
            )
        if self.budget.elements < 0:
            raise _Refused(
                UnsafeFile(
                    "too_many_elements",
                    f"the package holds more than {self.screening.max_elements:,} XML elements",
                )
            )

    def end(self, _tag: str) -> None:
        self.progressed = True
        self.depth -= 1

    def text(self, _data: str) -> None:
        self.progressed = True

    def doctype(self, _name: str, system: str | None, _public: str | None, subset: object) -> None:
        # A part named as XML may declare no document type at all (OPC). Another part, which
        # may be HTML, may say ``<!DOCTYPE html>``, but never declare or fetch anything.
        if self.named or system or subset:
            raise _Refused(
                UnsafeFile(
                    "not_docx",
                    f"{self.name} declares a document type, which OPC forbids "
                    "(and which could declare entities)",
                )
            )


def _screen_xml(name: str, chunks: Iterator[bytes], screening: Screening, budget: _Budget) -> None:
    walk = _Walk(name, name.lower().endswith(XML_NAMES), screening, budget)
    parser = xml.parsers.expat.ParserCreate()
    parser.StartElementHandler = walk.start
    parser.EndElementHandler = walk.end
    parser.CharacterDataHandler = walk.text
    parser.StartDoctypeDeclHandler = walk.doctype
    stalled = 0
    try:
        for chunk in chunks:
            walk.progressed = False
            parser.Parse(chunk, False)
            stalled = 0 if walk.progressed else stalled + len(chunk)
            if stalled > screening.max_token:
                raise UnsafeFile(
                    "token_too_large",
                    f"{name} holds an XML token over {screening.max_token:,} bytes",
                )
        parser.Parse(b"", True)
    except _Refused as refused:
        raise refused.refusal from None
    except xml.parsers.expat.ExpatError as error:
        if walk.named:
            raise UnsafeFile("not_docx", f"{name} is not well-formed XML: {error}") from error


# ─── images ───────────────────────────────────────────────────────────────────

_PNG: Final = b"\x89PNG\r\n\x1a\n"
_PNG_HEADER: Final = struct.Struct(">I4sII")
_GIF: Final = (b"GIF87a", b"GIF89a")
_GIF_SCREEN: Final = struct.Struct("<HH")
_JPEG: Final = b"\xff\xd8"
_JPEG_FRAMES: Final = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""The start-of-frame markers: every ``SOFn`` but DHT, JPG and DAC, which share the range."""
_JPEG_STANDALONE: Final = frozenset({0x01, *range(0xD0, 0xD9)})
_JPEG_ENDS: Final = frozenset({0xD9, 0xDA})
"""The end of the image, and the start of a scan: no frame header comes after them."""
_JPEG_SIZE: Final = struct.Struct(">BHH")


def _pixels(name: str, head: bytes, rest: Iterator[bytes]) -> int | None:
    """Return how many pixels an image declares, 0 if it doesn't say, None if not an image."""
    if head.startswith(_PNG):
        if len(head) < len(_PNG) + _PNG_HEADER.size:
            return 0
        _, kind, width, height = _PNG_HEADER.unpack_from(head, len(_PNG))
        return width * height if kind == b"IHDR" else 0
    if head.startswith(_GIF):
        if len(head) < 6 + _GIF_SCREEN.size:
            return 0
        width, height = _GIF_SCREEN.unpack_from(head, 6)
        return width * height
    if head.startswith(_JPEG):
        return _jpeg_pixels(name, _Reader(head[len(_JPEG) :], rest))
    return None


class _Reader:
    """Bytes from a part, a few at a time, over its chunks."""

    def __init__(self, head: bytes, rest: Iterator[bytes]) -> None:
        self.buffer = head
        self.at = 0
        self.rest = rest

    def take(self, count: int) -> bytes:
        while len(self.buffer) - self.at < count:
            chunk = next(self.rest, b"")
            if not chunk:
                break
            self.buffer = self.buffer[self.at :] + chunk
            self.at = 0
        taken = self.buffer[self.at : self.at + count]
        self.at += len(taken)
        return taken


def _jpeg_pixels(name: str, reader: _Reader) -> int:
    """Return the pixels of a JPEG's first frame header, walking its segments to it."""
    marked = False
    for _ in range(MAX_JPEG_STEPS):
        byte = reader.take(1)
        if byte == b"\xff":
            marked = True
            continue
        if not byte or not marked or byte[0] in _JPEG_ENDS:
            return 0
        marked = False
        if byte[0] in _JPEG_STANDALONE:
            continue
        size = reader.take(2)
        length = int.from_bytes(size)
        if len(size) < 2 or length < 2:
            return 0
        if byte[0] in _JPEG_FRAMES:
            frame = reader.take(5)
            if len(frame) < 5:
                return 0
            _, height, width = _JPEG_SIZE.unpack(frame)
            # A height of 0 is set later, by a DNL marker: count it as the most it could be.
            return width * (height or 0xFFFF)
        if len(reader.take(length - 2)) < length - 2:
            return 0
    raise UnsafeFile(
        "image_too_large",
        f"{name} is a JPEG whose size isn't declared within {MAX_JPEG_STEPS:,} steps",
    )
