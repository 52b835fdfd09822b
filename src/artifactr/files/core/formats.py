"""Formats: which native format a package is, read from its content, never its name (ADR-0021).

An OOXML package says what it is in two small parts: ``_rels/.rels`` names its main part (the
``officeDocument`` relationship) and ``[Content_Types].xml`` gives that part's content type. A
:class:`Sniffer` is a :data:`~artifactr.files.core.screen.PartCheck`: run in the screen's one pass
(``fingerprint(source, check=sniffer)``), it keeps those two parts (at most
:data:`MAX_SNIFFED` bytes each) and notes a VBA project, then :meth:`Sniffer.media_type` answers
with the package's media type: :data:`~artifactr.files.core.manifests.DOCX`, ``XLSX`` or
``PPTX``.

It refuses, as :class:`~artifactr.files.core.errors.UnsafeFile`, what no native kind holds, naming
it: a macro-enabled package (.docm, .xlsm, .pptm, or any holding ``vbaProject.bin``) as
``macro_enabled``; a binary workbook (.xlsb) as ``binary_format`` (the screen refuses an Excel
97-2003 .xls or PowerPoint 97-2003 .ppt, OLE compound files, the same way); a package whose main
part is of no native kind (a template, a show, a drawing, or none) as ``not_docx``.
"""

import re
from collections.abc import Iterator, Mapping
from typing import Final
from xml.etree.ElementTree import Element, ParseError, fromstring

from artifactr.files.core.errors import UnsafeFile, UnsafeReason
from artifactr.files.core.manifests import DOCX, PPTX, XLSX
from artifactr.files.core.screen import CONTENT_TYPES, Part, part_key

MAX_SNIFFED: Final = 1024 * 1024
"""The most bytes of ``[Content_Types].xml`` or ``_rels/.rels`` read to name the format."""

RELATIONSHIPS: Final = "_rels/.rels"
"""The package's own relationships, which name its main part."""

MAIN_TYPES: Final[Mapping[str, str]] = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml": DOCX,
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml": XLSX,
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml": PPTX,
}
"""A main part's content type, and the media type of the package it makes."""

REFUSED_TYPES: Final[Mapping[str, tuple[UnsafeReason, str]]] = {
    "application/vnd.ms-word.document.macroenabled.main+xml": (
        "macro_enabled",
        "a macro-enabled Word document (.docm)",
    ),
    "application/vnd.ms-word.template.macroenabledtemplate.main+xml": (
        "macro_enabled",
        "a macro-enabled Word template (.dotm)",
    ),
    "application/vnd.ms-excel.sheet.macroenabled.main+xml": (
        "macro_enabled",
        "a macro-enabled Excel workbook (.xlsm)",
    ),
    "application/vnd.ms-excel.template.macroenabled.main+xml": (
        "macro_enabled",
        "a macro-enabled Excel template (.xltm)",
    ),
    "application/vnd.ms-excel.addin.macroenabled.main+xml": (
        "macro_enabled",
        "an Excel add-in (.xlam)",
    ),
    "application/vnd.ms-excel.sheet.binary.macroenabled.main": (
        "binary_format",
        "an Excel binary workbook (.xlsb)",
    ),
    "application/vnd.ms-powerpoint.presentation.macroenabled.main+xml": (
        "macro_enabled",
        "a macro-enabled PowerPoint presentation (.pptm)",
    ),
    "application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml": (
        "macro_enabled",
        "a macro-enabled PowerPoint show (.ppsm)",
    ),
    "application/vnd.ms-powerpoint.template.macroenabled.main+xml": (
        "macro_enabled",
        "a macro-enabled PowerPoint template (.potm)",
    ),
}
"""Main parts no native kind holds, lower-cased: the reason and what the file is, in words."""

NAMES: Final[Mapping[str, str]] = {
    DOCX: "a Word document (.docx)",
    XLSX: "an Excel workbook (.xlsx)",
    PPTX: "a PowerPoint presentation (.pptx)",
}
"""Each native format, in words."""

_OFFICE_DOCUMENT: Final = re.compile(r"/officeDocument$")
_DOCTYPE: Final = re.compile(rb"<!DOCTYPE|<!ENTITY", re.IGNORECASE)
_VBA: Final = "vbaproject.bin"


class Sniffer:
    """A check run in the screen's pass that names the package's format.

    Call it as the screen's ``check``; then :meth:`media_type`.
    """

    def __init__(self) -> None:
        self._parts: dict[str, bytes] = {}
        self._vba: str | None = None

    def __call__(self, part: Part, chunks: Iterator[bytes]) -> None:
        """Keep the parts that name the format; note a VBA project."""
        key = part_key(part.name)
        if key.rsplit("/", 1)[-1] == _VBA:
            self._vba = part.name
        if key in _KEPT:
            self._parts[key] = _head(chunks, part.name)

    def media_type(self) -> str:
        """Return the package's media type, from its main part's content type.

        Raises:
            UnsafeFile: ``macro_enabled``, ``binary_format`` or ``not_docx``, naming the file.
        """
        if self._vba is not None:
            raise UnsafeFile(
                "macro_enabled",
                f"the file holds macros ({self._vba}): {_SAVE_AS}",
            )
        return media_type_of(
            self._parts.get(part_key(CONTENT_TYPES), b""),
            self._parts.get(part_key(RELATIONSHIPS)),
        )


def media_type_of(content_types: bytes, relationships: bytes | None) -> str:
    """Return a package's media type from its ``[Content_Types].xml`` and ``_rels/.rels``.

    Raises:
        UnsafeFile: ``macro_enabled``, ``binary_format`` or ``not_docx``, naming the file.
    """
    content_type = _content_type(content_types, _main_part(relationships)).lower()
    media = MAIN_TYPES.get(content_type)
    if media is not None:
        return media
    refused = REFUSED_TYPES.get(content_type)
    if refused is not None:
        reason, what = refused
        raise UnsafeFile(reason, f"the file is {what}: {_SAVE_AS}")
    said = f"its main part is {content_type}" if content_type else "it names no main part"
    raise UnsafeFile(
        "not_docx",
        f"the package is not a Word document, an Excel workbook or a PowerPoint "
        f"presentation ({said}): {_SAVE_AS}",
    )


_KEPT: Final = frozenset({part_key(CONTENT_TYPES), part_key(RELATIONSHIPS)})
_SAVE_AS: Final = (
    "save it as a Word document (.docx), an Excel workbook (.xlsx) or a PowerPoint "
    "presentation (.pptx), without macros, and upload that"
)


def kind_name(media_type: str) -> str:
    """Return a native format in words (``an Excel workbook (.xlsx)``), or the media type."""
    return NAMES.get(media_type, media_type)


def _head(chunks: Iterator[bytes], name: str) -> bytes:
    kept = bytearray()
    for chunk in chunks:
        kept += chunk
        if len(kept) > MAX_SNIFFED:
            raise UnsafeFile(
                "part_too_large",
                f"{name} is longer than {MAX_SNIFFED} bytes, which no package needs",
            )
    return bytes(kept)


def _parsed(data: bytes, name: str) -> Element:
    if _DOCTYPE.search(data):
        raise UnsafeFile("not_docx", f"{name} declares a document type, which OPC forbids")
    try:
        return fromstring(data)
    except ParseError as error:
        raise UnsafeFile("not_docx", f"{name} is not well-formed XML: {error}") from error


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _main_part(rels: bytes | None) -> str | None:
    if rels is None:
        return None
    for child in _parsed(rels, RELATIONSHIPS):
        if _local(child.tag) != "Relationship":
            continue
        kind = child.get("Type", "")
        if _OFFICE_DOCUMENT.search(kind) and child.get("TargetMode", "Internal") == "Internal":
            return "/" + child.get("Target", "").replace("\\", "/").lstrip("/")
    return None


def _content_type(types: bytes, main: str | None) -> str:
    if main is None:
        return ""
    root = _parsed(types, CONTENT_TYPES)
    wanted = part_key(main)
    extension = wanted.rpartition(".")[2] if "." in wanted.rsplit("/", 1)[-1] else ""
    default = ""
    for child in root:
        match _local(child.tag):
            case "Override" if part_key(child.get("PartName", "")) == wanted:
                return child.get("ContentType", "")
            case "Default" if child.get("Extension", "").casefold() == extension:
                default = child.get("ContentType", "")
            case _:
                pass
    return default
