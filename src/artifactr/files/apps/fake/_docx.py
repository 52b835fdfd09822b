"""Docx: reading and editing a .docx with the standard library alone, for FakeApp (RFC-0003).

:class:`~artifactr.files.apps.fake.FakeApp` edits real .docx bytes without lxml. :class:`Package`
opens the zip, follows its relationships and writes it back, replacing only the parts an edit
touched: every other part keeps its bytes. XML parts are parsed with ElementTree and written by
our own serializer, which keeps each part's namespace prefixes and declarations (ElementTree's
would drop a prefix that only ``mc:Ignorable`` names, and Word refuses such a part).
:class:`Document` is the main document's body: its paragraphs, the visible text of each, text
replaced plainly or as tracked changes, paragraphs split, comments, styles and review. Both
transitional and strict WordprocessingML are read and edited in their own namespace.
"""

import copy
import io
import itertools
import posixpath
import re
import threading
import zipfile
import zlib
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Final, Literal
from xml.etree.ElementTree import Element, ParseError, SubElement, TreeBuilder, XMLParser

from artifactr.files.core.errors import AppRefused, AppTimeout, AppTooLarge

TRANSITIONAL = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
"""The WordprocessingML namespace of transitional documents (nearly all of them)."""

STRICT = "http://purl.oclc.org/ooxml/wordprocessingml/main"
"""The WordprocessingML namespace of strict documents."""

CONTENT_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"
"""The namespace of ``[Content_Types].xml``."""

RELATIONSHIPS = "http://schemas.openxmlformats.org/package/2006/relationships"
"""The namespace of relationship parts (``_rels/*.rels``)."""

CORE_RELATIONSHIP = (
    "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
)
"""The relationship type from the package to ``docProps/core.xml``."""

CORE_CONTENT_TYPE = "application/vnd.openxmlformats-package.core-properties+xml"
"""The content type of the core properties part."""

MAX_DEPTH = 256
"""The deepest an XML part may nest elements (WordCraft's limit); deeper is refused."""

_XML = "http://www.w3.org/XML/1998/namespace"
_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_FALLBACK = f"{{{_MC}}}Fallback"
_CP = "http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
_DC = "http://purl.org/dc/elements/1.1/"
_DCTERMS = "http://purl.org/dc/terms/"
_DCMITYPE = "http://purl.org/dc/dcmitype/"
_XSI = "http://www.w3.org/2001/XMLSchema-instance"
_PRESERVE = f"{{{_XML}}}space"

_RELATIONSHIP_BASE = {
    TRANSITIONAL: "http://schemas.openxmlformats.org/officeDocument/2006/relationships/",
    STRICT: "http://purl.oclc.org/ooxml/officeDocument/relationships/",
}
_PART_CONTENT_TYPES = {
    kind: f"application/vnd.openxmlformats-officedocument.wordprocessingml.{kind}+xml"
    for kind in ("comments", "styles", "settings")
}
_PREFERRED = {
    TRANSITIONAL: "w",
    STRICT: "w",
    _CP: "cp",
    _DC: "dc",
    _DCTERMS: "dcterms",
    _XSI: "xsi",
}
_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\r\n'
_EPOCH = (1980, 1, 1, 0, 0, 0)

# settings.xml is a schema sequence: w:trackRevisions goes after these, wherever present.
_BEFORE_TRACK_REVISIONS = frozenset(
    {
        "writeProtection",
        "view",
        "zoom",
        "removePersonalInformation",
        "removeDateAndTime",
        "doNotDisplayPageBoundaries",
        "displayBackgroundShape",
        "printPostScriptOverText",
        "printFractionalCharacterWidth",
        "printFormsData",
        "embedTrueTypeFonts",
        "embedSystemFonts",
        "saveSubsetFonts",
        "saveFormsData",
        "mirrorMargins",
        "alignBordersAndEdges",
        "bordersDoNotSurroundHeader",
        "bordersDoNotSurroundFooter",
        "gutterAtTop",
        "hideSpellingErrors",
        "hideGrammaticalErrors",
        "activeWritingStyle",
        "proofState",
        "formsDesign",
        "attachedTemplate",
        "linkStyles",
        "stylePaneFormatFilter",
        "stylePaneSortMethod",
        "documentType",
        "mailMerge",
        "revisionView",
    }
)
_LEVELS = {"title": 1} | {f"heading{level}": level for level in range(1, 10)}
_BUILTIN_STYLES = {
    "normal": ("Normal", "Normal", None),
    "title": ("Title", "Title", None),
} | {f"heading{level}": (f"Heading{level}", f"heading {level}", level) for level in range(1, 10)}


# ─── XML parts ────────────────────────────────────────────────────────────────


@dataclass
class XmlPart:
    """A parsed XML part and the namespace declarations it was written with, in order."""

    root: Element
    """The part's root element."""
    namespaces: list[tuple[str, str]]
    """Its ``(prefix, uri)`` declarations, ``""`` for a default namespace."""


class Budget:
    """What parsing a package may still build: elements, until its caller gives up.

    A part's elements are counted before it is parsed, at the speed of ``bytes.count``: every
    element opens with ``<`` not followed by ``/``, so the count of those is a bound (a comment
    or CDATA holding ``<`` only makes it higher). A part that would pass the limit is refused
    before it takes any memory. Parsing runs in a worker thread, which can't be killed: the
    caller :meth:`stop` s the budget when its deadline passes, and the parse stops at its next
    chunk of :data:`FEED_SIZE` bytes, so an abandoned parse neither runs on nor holds memory.

    Args:
        elements: The most XML elements the package's parsed parts may hold together.
    """

    def __init__(self, elements: int) -> None:
        self.limit = elements
        """The most elements, as given."""
        self._left = elements
        self._stopped = threading.Event()

    def take(self, elements: int) -> None:
        """Count a part's elements against the budget.

        Raises:
            AppTooLarge: If the package holds more than :attr:`limit` elements.
            AppTimeout: If the caller stopped waiting.
        """
        self._left -= elements
        if self._left < 0:
            raise AppTooLarge(f"the file holds more than {self.limit:,} XML elements")
        self.check()

    def check(self) -> None:
        """Go on only while the caller waits.

        Raises:
            AppTimeout: If the caller stopped waiting.
        """
        if self._stopped.is_set():
            raise AppTimeout("the parse was stopped: its caller's deadline passed")

    def stop(self) -> None:
        """Stop the parse at its next chunk: the caller gave up on it."""
        self._stopped.set()

    def again(self) -> "Budget":
        """Return a full budget for another file, stopped when this one is."""
        budget = Budget(self.limit)
        budget._stopped = self._stopped
        return budget


UNBOUNDED: Final = 2**62
"""An element limit no package reaches."""

FEED_SIZE: Final = 1 << 20
"""Bytes parsed at a time, between checks that the caller still waits."""


class _DocumentType(ValueError):
    """A part declares a document type: a .docx never does, and entities are a bomb."""


class _Builder(TreeBuilder):
    def __init__(self) -> None:
        super().__init__()
        self.namespaces: list[tuple[str, str]] = []

    def start_ns(self, prefix: str, uri: str) -> None:
        self.namespaces.append((prefix, uri))

    def doctype(self, _name: str, _pubid: str | None, _system: str | None) -> None:
        raise _DocumentType("it declares a document type")


def parse_xml(name: str, data: bytes, budget: Budget | None = None) -> XmlPart:
    """Return a part parsed, with its namespace declarations.

    Its elements are counted against ``budget`` before it is parsed (unbounded if None), and
    the parse stops between chunks if the budget is stopped.

    Raises:
        AppRefused: If the part is not well-formed, declares a document type or nests deeper
            than :data:`MAX_DEPTH`.
        AppTooLarge: If the budget's elements run out.
        AppTimeout: If the budget was stopped.
    """
    budget = budget or Budget(UNBOUNDED)
    budget.take(data.count(b"<") - data.count(b"</"))
    builder = _Builder()
    parser = XMLParser(target=builder)
    try:
        for start in range(0, len(data), FEED_SIZE):
            budget.check()
            parser.feed(data[start : start + FEED_SIZE])
        root: Element = parser.close()
    except (ParseError, ValueError, LookupError) as error:
        raise AppRefused(f"not a .docx: {name} is not XML a .docx can hold ({error})") from error
    stack = [(root, 1)]
    while stack:
        element, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise AppRefused(f"not a .docx: {name} nests deeper than {MAX_DEPTH} elements")
        stack.extend((child, depth + 1) for child in element)
    budget.check()
    return XmlPart(root, builder.namespaces)


class _Prefixes:
    """The prefix of every namespace a part uses, declared once on its root."""

    def __init__(self, part: XmlPart) -> None:
        # An element in no namespace can't sit under a default namespace: prefix that one.
        plain = any(not element.tag.startswith("{") for element in part.root.iter())
        self.declared: dict[str, str] = {}
        self.elements: dict[str, str] = {}
        self.attributes: dict[str, str] = {_XML: "xml"}
        for prefix, uri in part.namespaces:
            if prefix in self.declared or (plain and not prefix):
                continue
            self.declared[prefix] = uri
            self.elements.setdefault(uri, prefix)
            if prefix:
                self.attributes.setdefault(uri, prefix)
        # Every qualified name, worked out once: a part repeats a few dozen names many times.
        self.tags: dict[str, str] = {}
        self.keys: dict[str, str] = {}
        for element in part.root.iter():
            if element.tag not in self.tags:
                self.tags[element.tag] = self._name(element.tag, self.elements)
            for key in element.attrib:
                if key not in self.keys:
                    self.keys[key] = self._name(key, self.attributes)

    def _name(self, tag: str, table: dict[str, str]) -> str:
        if not tag.startswith("{"):
            return tag
        uri, local = tag[1:].split("}", 1)
        if uri not in table:
            self._invent(uri)
        prefix = table[uri]
        return f"{prefix}:{local}" if prefix else local

    def _invent(self, uri: str) -> None:
        base = _PREFERRED.get(uri, "ns")
        prefix = base
        number = 0
        while prefix in self.declared:
            number += 1
            prefix = f"{base}{number}"
        self.declared[prefix] = uri
        self.elements.setdefault(uri, prefix)
        self.attributes.setdefault(uri, prefix)


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    )


def _escape_attribute(text: str) -> str:
    return _escape(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")


def serialize_xml(part: XmlPart) -> bytes:
    """Return a part as UTF-8 XML, with its namespace prefixes, all declared on its root."""
    prefixes = _Prefixes(part)
    out = [_DECLARATION]
    _write(part.root, prefixes, out, declare=True)
    return "".join(out).encode()


def _write(element: Element, prefixes: _Prefixes, out: list[str], *, declare: bool) -> None:
    name = prefixes.tags[element.tag]
    out.append(f"<{name}")
    if declare:
        for prefix, uri in prefixes.declared.items():
            out.append(f' xmlns{":" if prefix else ""}{prefix}="{_escape_attribute(uri)}"')
    for key, value in element.attrib.items():
        out.append(f' {prefixes.keys[key]}="{_escape_attribute(value)}"')
    if len(element) or element.text:
        out.append(">")
        out.append(_escape(element.text or ""))
        for child in element:
            _write(child, prefixes, out, declare=False)
        out.append(f"</{name}>")
    else:
        out.append("/>")
    out.append(_escape(element.tail or ""))


# ─── the package ──────────────────────────────────────────────────────────────


def _rels_name(source: str) -> str:
    directory, base = posixpath.split(source)
    return posixpath.join(directory, "_rels", f"{base}.rels")


def _resolve(source: str, target: str) -> str:
    path = (
        target[1:] if target.startswith("/") else posixpath.join(posixpath.dirname(source), target)
    )
    return posixpath.normpath(path)


class Package:
    """An open .docx package: its parts, read when asked, and the ones an edit changed.

    Args:
        data: The file's bytes, or a seekable binary file, whose parts are read as needed.
        max_inflated: The most bytes its parts may inflate to, together (a zip bomb guard).
        budget: What its parsed parts may hold together; unbounded if None.

    Raises:
        AppRefused: If the bytes are not a zip, two parts share a name, or there is no
            ``[Content_Types].xml``.
        AppTooLarge: If the parts would inflate to more than ``max_inflated`` bytes.
    """

    def __init__(
        self, data: bytes | IO[bytes], *, max_inflated: int, budget: Budget | None = None
    ) -> None:
        try:
            archive = zipfile.ZipFile(io.BytesIO(data) if isinstance(data, bytes) else data)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
            raise AppRefused("not a .docx: not a zip file") from error
        infos = archive.infolist()
        names = [info.filename for info in infos]
        if len(set(names)) != len(names):
            raise AppRefused("not a .docx: two parts share a name")
        inflated = sum(info.file_size for info in infos)
        if inflated > max_inflated:
            raise AppTooLarge(
                f"the file's parts inflate to {inflated} bytes, over the limit of {max_inflated}"
            )
        if "[Content_Types].xml" not in names:
            raise AppRefused("not a .docx: no [Content_Types].xml")
        self._archive = archive
        self._budget = budget
        self._infos = infos
        self._names = set(names)
        self._xml: dict[str, XmlPart] = {}
        self._dirty: set[str] = set()
        self._added: list[str] = []

    def has(self, name: str) -> bool:
        """Return whether the package holds a part of this name."""
        return name in self._names

    def read(self, name: str) -> bytes:
        """Return a part's bytes as the file holds them.

        Raises:
            AppRefused: If the part can't be inflated (corrupt, encrypted, unknown method).
        """
        try:
            return self._archive.read(name)
        except (
            zipfile.BadZipFile,
            zlib.error,
            NotImplementedError,
            RuntimeError,
            EOFError,
            OSError,
            ValueError,
        ) as error:
            raise AppRefused(f"not a .docx: {name} cannot be read ({error})") from error

    def xml(self, name: str) -> XmlPart:
        """Return a part parsed, the same object each time, so edits to it are kept."""
        if name not in self._xml:
            self._xml[name] = parse_xml(name, self.read(name), self._budget)
        return self._xml[name]

    def touch(self, name: str) -> None:
        """Mark a parsed part as changed, so :meth:`save` writes it anew."""
        self._dirty.add(name)

    def related(self, source: str, suffix: str) -> str | None:
        """Return the first part ``source`` relates to by a type ending in ``suffix``.

        ``source`` ``""`` is the package itself. Relationships to missing parts or to external
        targets are passed over.
        """
        rels = _rels_name(source)
        if not self.has(rels):
            return None
        for relationship in self.xml(rels).root:
            target = _resolve(source, relationship.get("Target", ""))
            if (
                relationship.get("Type", "").endswith(suffix)
                and relationship.get("TargetMode") != "External"
                and self.has(target)
            ):
                return target
        return None

    def free_name(self, name: str) -> str:
        """Return ``name``, or ``name`` numbered (``comments1.xml``) if a part has it already."""
        stem, extension = posixpath.splitext(name)
        candidates = itertools.chain([name], (f"{stem}{n}{extension}" for n in itertools.count(1)))
        return next(candidate for candidate in candidates if not self.has(candidate))

    def add(
        self, name: str, part: XmlPart, content_type: str, *, source: str, relationship: str
    ) -> None:
        """Add a new XML part, with its content type and a relationship from ``source``."""
        types = self.xml("[Content_Types].xml")
        SubElement(
            types.root,
            f"{{{CONTENT_TYPES}}}Override",
            {"PartName": f"/{name}", "ContentType": content_type},
        )
        self.touch("[Content_Types].xml")
        rels_name = _rels_name(source)
        if self.has(rels_name):
            rels = self.xml(rels_name)
        else:
            rels = XmlPart(Element(f"{{{RELATIONSHIPS}}}Relationships"), [("", RELATIONSHIPS)])
            self._register(rels_name, rels)
        taken = {element.get("Id") for element in rels.root}
        number = next(n for n in itertools.count(len(taken) + 1) if f"rId{n}" not in taken)
        SubElement(
            rels.root,
            f"{{{RELATIONSHIPS}}}Relationship",
            {
                "Id": f"rId{number}",
                "Type": relationship,
                "Target": posixpath.relpath(name, posixpath.dirname(source) or "."),
            },
        )
        self.touch(rels_name)
        self._register(name, part)

    def _register(self, name: str, part: XmlPart) -> None:
        self._xml[name] = part
        self._names.add(name)
        self._added.append(name)
        self._dirty.add(name)

    def save(self) -> bytes:
        """Return the package as a zip: changed parts rewritten, every other part as it was."""
        written = {name: serialize_xml(self._xml[name]) for name in self._dirty}
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for info in self._infos:
                entry = zipfile.ZipInfo(info.filename, info.date_time)
                entry.compress_type = info.compress_type
                entry.external_attr = info.external_attr
                data = written.get(info.filename)
                archive.writestr(entry, self.read(info.filename) if data is None else data)
            for name in self._added:
                entry = zipfile.ZipInfo(name, _EPOCH)
                entry.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(entry, written[name])
        return out.getvalue()


def stamp_core(package: Package, author: str, now: str) -> None:
    """Stamp the core properties as WordCraft does on every save, adding the part if missing.

    ``dcterms:modified`` becomes ``now``, ``cp:revision`` goes up by one, ``cp:lastModifiedBy``
    becomes ``author``, and ``dcterms:created`` is set to ``now`` only if it was empty.
    """
    name = package.related("", "/metadata/core-properties")
    if name is None:
        name = package.free_name("docProps/core.xml")
        part = XmlPart(
            Element(f"{{{_CP}}}coreProperties"),
            [
                ("cp", _CP),
                ("dc", _DC),
                ("dcterms", _DCTERMS),
                ("dcmitype", _DCMITYPE),
                ("xsi", _XSI),
            ],
        )
        package.add(name, part, CORE_CONTENT_TYPE, source="", relationship=CORE_RELATIONSHIP)
    else:
        part = package.xml(name)
    root = part.root
    dcterms = next((prefix for prefix, uri in part.namespaces if uri == _DCTERMS), "dcterms")
    _child(root, f"{{{_CP}}}lastModifiedBy").text = author
    revision = _child(root, f"{{{_CP}}}revision")
    count = (revision.text or "").strip()
    revision.text = str(int(count) + 1 if count.isdecimal() and len(count) < 10 else 1)
    created = _child(root, f"{{{_DCTERMS}}}created")
    if not (created.text or "").strip():
        created.text = now
        created.set(f"{{{_XSI}}}type", f"{dcterms}:W3CDTF")
    modified = _child(root, f"{{{_DCTERMS}}}modified")
    modified.text = now
    modified.set(f"{{{_XSI}}}type", f"{dcterms}:W3CDTF")
    package.touch(name)


def _child(parent: Element, tag: str) -> Element:
    found = parent.find(tag)
    return SubElement(parent, tag) if found is None else found


# ─── the document ─────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Paragraph:
    """A body paragraph and the element that holds it (the body, a cell, a content control)."""

    element: Element
    """The ``w:p``."""
    parent: Element
    """Its parent."""


@dataclass(frozen=True)
class Atom:
    """A visible character or run of characters: a ``w:t``, or a tab or break (one each)."""

    element: Element
    """The ``w:t``, ``w:tab``, ``w:br`` or ``w:cr``."""
    run: Element
    """Its ``w:r``."""
    path: tuple[Element, ...]
    """The containers from the paragraph down to the run's parent (a hyperlink, an insertion)."""
    start: int
    """Its first character's offset in the paragraph's visible text."""
    text: str
    """What it shows."""

    @property
    def end(self) -> int:
        """The offset just after it."""
        return self.start + len(self.text)


@dataclass(frozen=True)
class Change:
    """A tracked change in the body: text inserted or deleted, or a paragraph mark."""

    element: Element
    """The ``w:ins`` or ``w:del``."""
    id: str
    """Its ``w:id``."""
    kind: Literal["insert", "delete"]
    """Inserted or deleted."""
    mark: bool
    """Whether it is a paragraph mark's (a paragraph inserted or joined), not text."""
    author: str | None
    """Who made it."""
    date: str | None
    """When, as the file has it."""
    text: str
    """The text inserted or deleted; a paragraph mark's is a newline."""


@dataclass(frozen=True)
class Comment:
    """A comment from the comments part, with the body text it is anchored on."""

    id: str
    """Its ``w:id``."""
    author: str | None
    """Who wrote it."""
    date: str | None
    """When, as the file has it."""
    text: str
    """Its text, a line per paragraph."""
    anchor: str | None
    """The text it is on, if its range is in the body's paragraphs."""


@dataclass(frozen=True)
class Track:
    """Who and when, for tracked changes and comments made by an edit."""

    author: str
    """Who."""
    date: str
    """When, ``YYYY-MM-DDTHH:MM:SSZ``."""


def _local(tag: str) -> str:
    return tag.rpartition("}")[2]


def _index(parent: Element, child: Element) -> int:
    return list(parent).index(child)


def _filled(node: Element) -> bool:
    return any(not _local(child.tag).endswith("Pr") for child in node)


def _norm(name: str) -> str:
    return name.replace(" ", "").lower()


class Document:
    """A .docx's main document, parsed, with the parts it relates to.

    Offsets are in characters of a paragraph's visible text: ``w:t`` text, a tab or a break as
    one character each, deleted text left out and inserted text counted. Body paragraphs are those
    of the body, its tables and content controls, not those nested in text boxes.

    Args:
        package: The open package.

    Raises:
        AppRefused: If there is no main document, or it is not WordprocessingML with a body.
    """

    def __init__(self, package: Package) -> None:
        name = package.related("", "/officeDocument")
        if name is None and package.has("word/document.xml"):
            name = "word/document.xml"
        if name is None:
            raise AppRefused("not a .docx: it has no main document part")
        part = package.xml(name)
        namespace = part.root.tag[1:].partition("}")[0]
        body = part.root.find(f"{{{namespace}}}body")
        if namespace not in _RELATIONSHIP_BASE or body is None:
            raise AppRefused(f"not a .docx: {name} is not a WordprocessingML body")
        self.package = package
        self.name = name
        self.root = part.root
        self.body = body
        self.w = namespace
        self._next_id: int | None = None
        self._style_ids: dict[str, str] | None = None
        self._style_names: dict[str, str] = {}
        self._atoms = {self.q("tab"): "\t", self.q("br"): "\n", self.q("cr"): "\n"}
        self._to_deleted = {
            self.q("t"): self.q("delText"),
            self.q("instrText"): self.q("delInstrText"),
        }
        self._to_kept = {deleted: kept for kept, deleted in self._to_deleted.items()}

    def q(self, local: str) -> str:
        """Return a WordprocessingML tag in this document's namespace (``{…}p``)."""
        return f"{{{self.w}}}{local}"

    def _touch(self) -> None:
        self.package.touch(self.name)

    # ─── reading ───

    def paragraphs(self) -> list[Paragraph]:
        """Return the body paragraphs, in document order."""
        found: list[Paragraph] = []
        self._collect(self.body, found)
        return found

    def _collect(self, node: Element, found: list[Paragraph]) -> None:
        for child in node:
            if child.tag == self.q("p"):
                found.append(Paragraph(child, node))
            elif child.tag != _FALLBACK:
                self._collect(child, found)

    def atoms(self, container: Element) -> list[Atom]:
        """Return the visible atoms of a paragraph (or any container of runs), in order."""
        atoms: list[Atom] = []
        self._gather(container, (container,), atoms)
        return atoms

    def _gather(self, node: Element, path: tuple[Element, ...], atoms: list[Atom]) -> None:
        for child in node:
            if child.tag == self.q("r"):
                for item in child:
                    text = (
                        (item.text or "") if item.tag == self.q("t") else self._atoms.get(item.tag)
                    )
                    if text:
                        start = atoms[-1].end if atoms else 0
                        atoms.append(Atom(item, child, path, start, text))
            elif child.tag not in (self.q("del"), _FALLBACK) and not _local(child.tag).endswith(
                "Pr"
            ):
                self._gather(child, (*path, child), atoms)

    def text(self, container: Element) -> str:
        """Return a paragraph's visible text."""
        return "".join(atom.text for atom in self.atoms(container))

    def _locator(self, paragraph: Element) -> Callable[[Element], int]:
        """Return where an element of a paragraph sits: the offset of the next visible atom."""
        atoms = self.atoms(paragraph)
        order = {element: number for number, element in enumerate(paragraph.iter())}
        keys = [order[atom.element] for atom in atoms]
        total = atoms[-1].end if atoms else 0

        def offset(element: Element) -> int:
            after = bisect_right(keys, order[element])
            return atoms[after].start if after < len(atoms) else total

        return offset

    def level(self, paragraph: Element) -> int | None:
        """Return a paragraph's outline level by its style (Title and Heading 1 are 1), if any."""
        style = paragraph.find(f"{self.q('pPr')}/{self.q('pStyle')}")
        if style is None:
            return None
        style_id = style.get(self.q("val"), "")
        self._styles()
        return _LEVELS.get(_norm(self._style_names.get(style_id, style_id)))

    def comments(self) -> list[Comment]:
        """Return the comments part's comments, each with the body text it is on."""
        name = self.package.related(self.name, "/comments")
        if name is None:
            return []
        anchors = self._anchors()
        return [
            Comment(
                id=element.get(self.q("id"), ""),
                author=element.get(self.q("author")),
                date=element.get(self.q("date")),
                text="\n".join(self.text(paragraph) for paragraph in element.iter(self.q("p"))),
                anchor=anchors.get(element.get(self.q("id"), "")),
            )
            for element in self.package.xml(name).root.iter(self.q("comment"))
        ]

    def _anchors(self) -> dict[str, str]:
        texts: list[str] = []
        starts: dict[str, int] = {}
        ends: dict[str, int] = {}
        marks = {self.q("commentRangeStart"): starts, self.q("commentRangeEnd"): ends}
        base = 0
        for paragraph in self.paragraphs():
            offset = self._locator(paragraph.element)
            for element in paragraph.element.iter():
                found = marks.get(element.tag)
                if found is not None:
                    found[element.get(self.q("id"), "")] = base + offset(element)
            texts.append(self.text(paragraph.element))
            base += len(texts[-1]) + 1
        full = "\n".join(texts)
        return {key: full[start : ends[key]] for key, start in starts.items() if key in ends}

    def changes(self, within: Element | None = None) -> list[Change]:
        """Return the tracked changes of the body (or of one paragraph), in document order.

        Only text and paragraph marks: table rows, cells and formatting changes are left out.
        """
        found: list[Change] = []
        kinds: dict[str, Literal["insert", "delete"]] = {
            self.q("ins"): "insert",
            self.q("del"): "delete",
        }
        for element, parent in self._walk(self.body if within is None else within):
            kind = kinds.get(element.tag)
            mark = parent.tag == self.q("rPr")
            if kind is None or (_local(parent.tag).endswith("Pr") and not mark):
                continue
            found.append(
                Change(
                    element=element,
                    id=element.get(self.q("id"), ""),
                    kind=kind,
                    mark=mark,
                    author=element.get(self.q("author")),
                    date=element.get(self.q("date")),
                    text="\n" if mark else self._changed_text(element, kind),
                )
            )
        return found

    def _walk(self, node: Element) -> Iterator[tuple[Element, Element]]:
        for child in node:
            if child.tag != _FALLBACK:
                yield child, node
                yield from self._walk(child)

    def _changed_text(self, element: Element, kind: Literal["insert", "delete"]) -> str:
        if kind == "insert":
            return self.text(element)
        deleted = self.q("delText")
        return "".join(
            (item.text or "") if item.tag == deleted else self._atoms.get(item.tag, "")
            for item in element.iter()
        )

    def change_at(self, paragraphs: Sequence[Paragraph], index: int, offset: int) -> Change | None:
        """Return the first change that ends at or after an offset of a paragraph, if any."""
        for number, paragraph in enumerate(paragraphs[index:], start=index):
            where = self._locator(paragraph.element)
            total = len(self.text(paragraph.element))
            for change in self.changes(paragraph.element):
                start = where(change.element)
                end = total if change.mark else start + len(change.text) * (change.kind == "insert")
                if number > index or end >= offset:
                    return change
        return None

    def tracking(self) -> bool:
        """Return whether the document's settings turn tracking changes on."""
        name = self.package.related(self.name, "/settings")
        element = (
            None if name is None else self.package.xml(name).root.find(self.q("trackRevisions"))
        )
        return element is not None and element.get(self.q("val"), "true") not in {
            "false",
            "0",
            "off",
        }

    # ─── editing ───

    def next_id(self) -> str:
        """Return an annotation id no element of the document or its comments uses yet."""
        if self._next_id is None:
            roots = [self.root]
            comments = self.package.related(self.name, "/comments")
            if comments is not None:
                roots.append(self.package.xml(comments).root)
            taken = [
                int(value)
                for root in roots
                for element in root.iter()
                if (value := element.get(self.q("id"), "")).isascii()
                and value.isdecimal()
                and len(value) < 10
            ]
            self._next_id = max(taken, default=-1) + 1
        self._next_id += 1
        return str(self._next_id - 1)

    def ensure_paragraph(self) -> None:
        """Add an empty paragraph to a body that has none, before its section properties."""
        last = self.body[-1] if len(self.body) else None
        at = len(self.body) - (last is not None and last.tag == self.q("sectPr"))
        self.body.insert(at, Element(self.q("p")))
        self._touch()

    def replace(
        self, paragraph: Element, start: int, end: int, text: str, track: Track | None
    ) -> None:
        """Replace the text between two offsets of a paragraph; tracked if ``track`` is given.

        The new text takes the formatting of the first character replaced (or of the one before
        the caret). Tracked, the old text becomes a ``w:del`` and the new a ``w:ins``; text that
        was itself a tracked insertion is removed outright, and new text inside an insertion
        joins it.
        """
        if start == end:
            if text:
                path, index, model = self.point(paragraph, start)
                self._put(path[-1], index, model, text, track)
            return
        runs = self.isolate(paragraph, start, end)
        first, parent = runs[0]
        index = _index(parent, first)
        if track is None:
            for run, owner in runs:
                owner.remove(run)
        else:
            for group in self._groups(runs):
                self._delete(group, track)
            index += parent.tag != self.q("ins")
        if text:
            self._put(parent, index, first, text, track)
        self._touch()

    def _groups(self, runs: list[tuple[Element, Element]]) -> list[list[tuple[Element, Element]]]:
        """Split runs into groups of siblings that follow each other directly."""
        groups: list[list[tuple[Element, Element]]] = []
        for run, owner in runs:
            if (
                groups
                and groups[-1][-1][1] is owner
                and _index(owner, run) == _index(owner, groups[-1][-1][0]) + 1
            ):
                groups[-1].append((run, owner))
            else:
                groups.append([(run, owner)])
        return groups

    def _delete(self, group: list[tuple[Element, Element]], track: Track) -> None:
        owner = group[0][1]
        if owner.tag == self.q("ins"):
            for run, _ in group:
                owner.remove(run)
            return
        deletion = self._change("del", track)
        owner.insert(_index(owner, group[0][0]), deletion)
        for run, _ in group:
            owner.remove(run)
            deletion.append(run)
            for item in run:
                item.tag = self._to_deleted.get(item.tag, item.tag)

    def _change(self, kind: str, track: Track) -> Element:
        return Element(
            self.q(kind),
            {
                self.q("id"): self.next_id(),
                self.q("author"): track.author,
                self.q("date"): track.date,
            },
        )

    def _put(
        self, parent: Element, index: int, model: Element | None, text: str, track: Track | None
    ) -> None:
        run = self._text_run(text, model)
        node = run
        if track is not None and parent.tag != self.q("ins"):
            node = self._change("ins", track)
            node.append(run)
        parent.insert(index, node)
        self._touch()

    def _text_run(self, text: str, model: Element | None) -> Element:
        run = Element(self.q("r"))
        properties = None if model is None else model.find(self.q("rPr"))
        if properties is not None:
            properties = copy.deepcopy(properties)
            for change in properties.findall(self.q("rPrChange")):
                properties.remove(change)
            run.append(properties)
        for piece in re.split(r"([\t\n])", text):
            if piece in ("\t", "\n"):
                run.append(Element(self.q("tab" if piece == "\t" else "br")))
            elif piece:
                run.append(self._t(piece))
        return run

    def _t(self, text: str) -> Element:
        element = Element(self.q("t"), {_PRESERVE: "preserve"})
        element.text = text
        return element

    def _cut(self, paragraph: Element, offset: int) -> None:
        """Split the ``w:t`` that straddles an offset in two, within its run."""
        for atom in self.atoms(paragraph):
            if atom.start < offset < atom.end:
                split = offset - atom.start
                atom.element.text = atom.text[:split]
                atom.element.set(_PRESERVE, "preserve")
                atom.run.insert(_index(atom.run, atom.element) + 1, self._t(atom.text[split:]))
                return

    def _content_start(self, run: Element) -> int:
        return int(len(run) > 0 and run[0].tag == self.q("rPr"))

    def _shell(self, node: Element) -> Element:
        """Return a copy of an element's tag, attributes and properties, without its content."""
        shell = Element(
            node.tag,
            {k: v for k, v in node.attrib.items() if _local(k) not in {"paraId", "textId"}},
        )
        for child in node:
            if _local(child.tag).endswith("Pr"):
                shell.append(copy.deepcopy(child))
        if node.tag in {self.q("ins"), self.q("del")}:
            shell.set(self.q("id"), self.next_id())
        return shell

    def _cut_off(self, node: Element, index: int, head: Element | None = None) -> Element:
        """Move a node's children from ``index`` on into a shell of it, after ``head``."""
        shell = self._shell(node)
        if head is not None:
            shell.append(head)
        for child in list(node)[index:]:
            node.remove(child)
            shell.append(child)
        return shell

    def _split_run(self, run: Element, parent: Element, index: int) -> Element:
        tail = self._cut_off(run, index)
        parent.insert(_index(parent, run) + 1, tail)
        return tail

    def isolate(self, paragraph: Element, start: int, end: int) -> list[tuple[Element, Element]]:
        """Split runs so the text between two offsets is whole runs; return them with parents.

        ``start`` must be below ``end``, and both within the paragraph's text.
        """
        self._cut(paragraph, start)
        self._cut(paragraph, end)
        inside = [a for a in self.atoms(paragraph) if start <= a.start and a.end <= end]
        runs: list[tuple[Element, Element]] = []
        for run, atoms in itertools.groupby(inside, key=lambda atom: atom.run):
            group = list(atoms)
            parent = group[0].path[-1]
            first = _index(run, group[0].element)
            last = _index(run, group[-1].element)
            if last + 1 < len(run):
                self._split_run(run, parent, last + 1)
            if first > self._content_start(run):
                run = self._split_run(run, parent, first)
            runs.append((run, parent))
        return runs

    def point(
        self, paragraph: Element, offset: int
    ) -> tuple[tuple[Element, ...], int, Element | None]:
        """Return where new content goes at an offset: its path, index, and a run to copy.

        Content goes after the run that ends at the offset, or before the first run at offset 0,
        or at the end of a paragraph with no text.
        """
        self._cut(paragraph, offset)
        atoms = self.atoms(paragraph)
        for atom in atoms:
            if atom.end == offset:
                parent = atom.path[-1]
                after = _index(atom.run, atom.element) + 1
                if after < len(atom.run):
                    self._split_run(atom.run, parent, after)
                return atom.path, _index(parent, atom.run) + 1, atom.run
        if atoms:
            atom = atoms[0]
            run, parent = atom.run, atom.path[-1]
            at = _index(run, atom.element)
            if at > self._content_start(run):
                run = self._split_run(run, parent, at)
            return atom.path, _index(parent, run), run
        return (paragraph,), len(paragraph), None

    def split(self, paragraph: Paragraph, offset: int, track: Track | None) -> Paragraph:
        """Split a paragraph at an offset, as Enter does; return the new (second) paragraph.

        The second keeps the original paragraph mark (its properties and any section break);
        the first gets a copy of the properties without them. Tracked, the first's new mark is
        a tracked insertion: rejecting it joins the two again.
        """
        element = paragraph.element
        path, index, _ = self.point(element, offset)
        tail = self._cut_off(path[-1], index)
        for depth in reversed(range(len(path) - 1)):
            # A container split at its edge leaves an empty half: drop it, keep the other.
            node, inner = path[depth], path[depth + 1]
            tail = self._cut_off(node, _index(node, inner) + 1, tail if _filled(tail) else None)
            if not _filled(inner):
                node.remove(inner)
        paragraph.parent.insert(_index(paragraph.parent, element) + 1, tail)
        properties = element.find(self.q("pPr"))
        if properties is not None:
            for holder in [properties, *properties.findall(self.q("rPr"))]:
                for child in list(holder):
                    if child.tag in {self.q("sectPr"), self.q("ins"), self.q("del")}:
                        holder.remove(child)
        if track is not None:
            self._mark(element, track)
        self._touch()
        return Paragraph(tail, paragraph.parent)

    def _mark(self, paragraph: Element, track: Track) -> None:
        properties = paragraph.find(self.q("pPr"))
        if properties is None:
            properties = Element(self.q("pPr"))
            paragraph.insert(0, properties)
        mark = properties.find(self.q("rPr"))
        if mark is None:
            mark = Element(self.q("rPr"))
            change = properties.find(self.q("pPrChange"))
            properties.insert(
                len(properties) if change is None else _index(properties, change), mark
            )
        mark.insert(0, self._change("ins", track))

    def resolve(self, changes: Sequence[Change], *, accept: bool) -> None:
        """Accept or reject tracked changes (given in document order).

        Accepting an insertion or rejecting a deletion keeps its text; the other two remove it.
        For a paragraph mark, removing it joins the paragraph with the next one.
        """
        parents = {child: parent for parent in self.root.iter() for child in parent}
        for change in reversed(changes):
            element = change.element
            parent = parents[element]
            at = _index(parent, element)
            parent.remove(element)
            keep = (change.kind == "insert") == accept
            if change.mark:
                if not keep:
                    self._join(parents[parents[parent]], parents)
            elif keep:
                children = list(element)
                if change.kind == "delete":
                    for child in children:
                        for item in child.iter():
                            item.tag = self._to_kept.get(item.tag, item.tag)
                parent[at:at] = children
        if changes:
            self._touch()

    def _join(self, paragraph: Element, parents: dict[Element, Element]) -> None:
        owner = parents[paragraph]
        at = _index(owner, paragraph) + 1
        following = owner[at] if at < len(owner) else None
        if following is None or following.tag != self.q("p"):
            return
        for child in paragraph.findall(self.q("pPr")):
            paragraph.remove(child)
        for child in list(following):
            following.remove(child)
            if child.tag == self.q("pPr"):
                paragraph.insert(0, child)
            else:
                paragraph.append(child)
        owner.remove(following)

    def add_comment(self, paragraph: Element, start: int, end: int, text: str, track: Track) -> str:
        """Add a comment on the text between two offsets (a point if equal); return its id."""
        comment_id = self.next_id()
        opening = Element(self.q("commentRangeStart"), {self.q("id"): comment_id})
        closing = Element(self.q("commentRangeEnd"), {self.q("id"): comment_id})
        reference = Element(self.q("r"))
        SubElement(reference, self.q("commentReference"), {self.q("id"): comment_id})
        if start < end:
            runs = self.isolate(paragraph, start, end)
            first, owner = runs[0]
            owner.insert(_index(owner, first), opening)
            last, owner = runs[-1]
            at = _index(owner, last) + 1
        else:
            path, index, _ = self.point(paragraph, start)
            owner = path[-1]
            owner.insert(index, opening)
            at = index + 1
        owner.insert(at, closing)
        owner.insert(at + 1, reference)
        name, part = self._part("comments", "comments")
        initials = "".join(word[0] for word in track.author.split())
        comment = SubElement(
            part.root,
            self.q("comment"),
            {
                self.q("id"): comment_id,
                self.q("author"): track.author,
                self.q("date"): track.date,
                self.q("initials"): initials,
            },
        )
        SubElement(comment, self.q("p")).append(self._text_run(text, None))
        self.package.touch(name)
        self._touch()
        return comment_id

    def _part(self, kind: str, root: str) -> tuple[str, XmlPart]:
        """Return a part related to the document by kind, added empty if there is none."""
        name = self.package.related(self.name, f"/{kind}")
        if name is not None:
            return name, self.package.xml(name)
        name = self.package.free_name(posixpath.join(posixpath.dirname(self.name), f"{kind}.xml"))
        part = XmlPart(Element(self.q(root)), [("w", self.w)])
        self.package.add(
            name,
            part,
            _PART_CONTENT_TYPES[kind],
            source=self.name,
            relationship=_RELATIONSHIP_BASE[self.w] + kind,
        )
        return name, part

    def set_tracking(self, value: bool) -> None:
        """Turn tracking changes on or off in the document's settings, if it changes."""
        if value == self.tracking():
            return
        name, part = self._part("settings", "settings")
        root = part.root
        for element in root.findall(self.q("trackRevisions")):
            root.remove(element)
        if value:
            at = max(
                (
                    n + 1
                    for n, child in enumerate(root)
                    if _local(child.tag) in _BEFORE_TRACK_REVISIONS
                ),
                default=0,
            )
            root.insert(at, Element(self.q("trackRevisions")))
        self.package.touch(name)

    def _styles(self) -> dict[str, str]:
        """Return paragraph styles by normalized id, then name (``heading1``); learn names."""
        if self._style_ids is None:
            self._style_ids = {}
            name = self.package.related(self.name, "/styles")
            styles = [] if name is None else list(self.package.xml(name).root.iter(self.q("style")))
            paragraph_styles = [
                (style_id, style)
                for style in styles
                if (style_id := style.get(self.q("styleId")))
                and style.get(self.q("type"), "paragraph") == "paragraph"
            ]
            for style_id, _ in paragraph_styles:
                self._style_ids.setdefault(_norm(style_id), style_id)
            for style_id, style in paragraph_styles:
                label = style.find(self.q("name"))
                if label is not None:
                    self._style_names[style_id] = label.get(self.q("val"), "")
                    self._style_ids.setdefault(_norm(label.get(self.q("val"), "")), style_id)
        return self._style_ids

    def resolve_style(self, name: str) -> str | None:
        """Return a paragraph style's id by id or name, adding a built-in one if missing.

        Built-ins (Normal, Title, Heading 1 to 9) are added to the styles part, or a new one,
        when the document lacks them, as Word does when it applies one.
        """
        key = _norm(name)
        found = self._styles().get(key)
        builtin = _BUILTIN_STYLES.get(key)
        if found is not None or builtin is None:
            return found
        style_id, label, level = builtin
        part_name, part = self._part("styles", "styles")
        style = SubElement(
            part.root, self.q("style"), {self.q("type"): "paragraph", self.q("styleId"): style_id}
        )
        SubElement(style, self.q("name"), {self.q("val"): label})
        SubElement(style, self.q("qFormat"))
        if level is not None:
            properties = SubElement(style, self.q("pPr"))
            SubElement(properties, self.q("outlineLvl"), {self.q("val"): str(level - 1)})
            run = SubElement(style, self.q("rPr"))
            SubElement(run, self.q("b"))
            SubElement(run, self.q("sz"), {self.q("val"): str(max(24, 36 - 2 * level))})
        self.package.touch(part_name)
        self._styles()[key] = style_id
        self._style_names[style_id] = label
        return style_id

    def set_style(self, paragraph: Element, style_id: str) -> None:
        """Give a paragraph a style, by id."""
        properties = paragraph.find(self.q("pPr"))
        if properties is None:
            properties = Element(self.q("pPr"))
            paragraph.insert(0, properties)
        style = properties.find(self.q("pStyle"))
        if style is None:
            style = Element(self.q("pStyle"))
            properties.insert(0, style)
        style.set(self.q("val"), style_id)
        self._touch()
