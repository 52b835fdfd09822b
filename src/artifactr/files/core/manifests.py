"""Manifests: the artifact types of native files (RFC-0003).

A native file is a small Pydantic manifest that names the file's bytes by SHA-256 in a blob
store; the file is the source of truth, and nothing parses it into fields.
"""

import unicodedata
from typing import Annotated, ClassVar, Final, Literal

from artifactr.core import Artifact, WritePolicy
from pydantic import BaseModel, ConfigDict, Field

from artifactr.files.core.app_port import Styles

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
"""The media type of a Word document (.docx)."""

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
"""The media type of an Excel workbook (.xlsx)."""

PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
"""The media type of a PowerPoint presentation (.pptx)."""

MAX_OUTLINE = 4_000
"""The most characters an outline may hold; it is what an agent sees by default."""

Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
"""A lower-case hexadecimal SHA-256 digest."""


MAX_NAME_BYTES: Final = 255
"""The most UTF-8 bytes a name a download is saved under may take: what file systems hold."""

DIRECTION_CHARACTERS: Final = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Unicode's bidirectional marks, embeddings, overrides and isolates: U+202E shows
``invoice\u202excod.docx`` as ``invoicexdoc.exe``."""

_INVISIBLE: Final = frozenset({"Cc", "Cs", "Zl", "Zp"})
"""Controls, lone surrogates, and line and paragraph separators."""


def clean_text(text: str) -> str:
    """Return a name or summary without control or direction characters, on one line.

    Controls (NUL, escape, tab, newline), lone surrogates, line and paragraph separators and
    :data:`DIRECTION_CHARACTERS` go; those that separate (tab, newline) become a space, and
    runs of whitespace one space, trimmed.
    """
    kept = "".join(
        " "
        if char.isspace()
        else ""
        if char in DIRECTION_CHARACTERS or unicodedata.category(char) in _INVISIBLE
        else char
        for char in text
    )
    return " ".join(kept.split())


def saved_name(name: str, *, limit: int = MAX_NAME_BYTES) -> str:
    """Return a name to save a download under: clean, at most ``limit`` UTF-8 bytes.

    A long name loses the end of its stem, never its extension; a name with nothing left is
    ``file``.
    """
    cleaned = clean_text(name) or "file"
    if len(cleaned.encode()) <= limit:
        return cleaned
    stem, dot, extension = cleaned.rpartition(".")
    ending = f".{extension}" if dot and stem and len(extension) < limit // 4 else ""
    if not ending:
        stem = cleaned
    room = limit - len(ending.encode())
    return stem.encode()[:room].decode("utf-8", "ignore").rstrip() + ending


class Blob(BaseModel):
    """A reference to bytes in the blob store, by digest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sha256: Digest
    """The SHA-256 of the bytes."""
    size: int = Field(ge=0)
    """How many bytes."""
    media_type: str
    """The bytes' media type."""


class Provenance(BaseModel):
    """How the content was made. Who made it is the revision's actor, never this claim."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: Literal["upload", "check_in", "commands"]
    """A new file's upload, a person's check-in, or an agent's batch of commands."""
    app: str | None = None
    """The app that made or read the content (``"wordcraft"``)."""
    app_version: str | None = None
    """The app's version, as its server reported it."""
    build: str | None = None
    """The app's build (the worker image's digest)."""
    base: Digest | None = None
    """The content digest it was made from; None for a new file."""
    commands: Blob | None = None
    """The batch of commands, as canonical JSON; None unless the source is ``commands``."""


class NativeFile(Artifact, abstract=True):
    """A file in a native format, kept as a manifest over its bytes in the blob store.

    Agents' edits become proposals (``write_policy = "propose"``); people commit directly.
    """

    formats: ClassVar[frozenset[str]] = frozenset()
    """The media types this kind holds."""
    write_policy: ClassVar[WritePolicy] = "propose"

    name: str = Field(min_length=1, max_length=255)
    """The file's name, as a person would save it (``contract.docx``)."""
    content: Blob
    """The file's bytes."""
    fingerprint: Digest
    """The digest of the content, normalised (:func:`artifactr.files.fingerprint`)."""
    text: Blob | None = None
    """The plain text, for diffs and the agent."""
    review: Blob | None = None
    """Comments and tracked changes, as JSON."""
    outline: str = Field("", max_length=MAX_OUTLINE)
    """The headings, one a line, as the app read them."""
    pages: int | None = Field(None, ge=0)
    """How many pages, if the app knows."""
    styles: Styles | None = None
    """A Word document's paragraph and character styles, as the app named them; None if it
    named none (or the revision was made before it did)."""
    provenance: Provenance
    """How the content was made."""

    def render_for_agent(self) -> str:
        """Return the name, the pages if known, and the outline. Synchronous; no I/O."""
        lines = [f"{self.name} ({self.kind})"]
        if self.pages is not None:
            lines.append(f"pages: {self.pages}")
        lines.append("outline:" if self.outline else "outline: (none)")
        if self.outline:
            lines.append(self.outline)
        return "\n".join(lines)


class WordDocument(NativeFile, name="word_document"):
    """A Word document (.docx)."""

    formats: ClassVar[frozenset[str]] = frozenset({DOCX})


class Spreadsheet(NativeFile, name="spreadsheet"):
    """An Excel workbook (.xlsx): its outline is each sheet's name and used range."""

    formats: ClassVar[frozenset[str]] = frozenset({XLSX})


class Presentation(NativeFile, name="presentation"):
    """A PowerPoint presentation (.pptx): its outline is the slides' titles, numbered."""

    formats: ClassVar[frozenset[str]] = frozenset({PPTX})
