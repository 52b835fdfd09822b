"""The body: a .docx's main document as it reads, paragraph by paragraph (RFC-0003).

:class:`Body` reads the paragraphs, their visible text and outline levels, comments, tracked
changes and whether changes are tracked, in transitional or strict WordprocessingML.
"""

from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal
from xml.etree.ElementTree import Element

from artifactr.files.apps.fake._package import Package
from artifactr.files.apps.fake._xml import STRICT, TRANSITIONAL
from artifactr.files.core.errors import AppRefused

RELATIONSHIP_BASE = {
    TRANSITIONAL: "http://schemas.openxmlformats.org/officeDocument/2006/relationships/",
    STRICT: "http://purl.oclc.org/ooxml/officeDocument/relationships/",
}
"""The start of every relationship type, in each WordprocessingML namespace."""

_MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
_FALLBACK = f"{{{_MC}}}Fallback"
_LEVELS = {"title": 1} | {f"heading{level}": level for level in range(1, 10)}


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


def local_name(tag: str) -> str:
    """Return a tag without its namespace."""
    return tag.rpartition("}")[2]


def index_of(parent: Element, child: Element) -> int:
    """Return where a child sits among its parent's children."""
    return list(parent).index(child)


def filled(node: Element) -> bool:
    """Return whether an element holds more than its properties."""
    return any(not local_name(child.tag).endswith("Pr") for child in node)


def normalized(name: str) -> str:
    """Return a style's id or name as they are compared: no spaces, lower case."""
    return name.replace(" ", "").lower()


class Body:
    """A .docx's main document, parsed, with the parts it relates to, as it reads.

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
        if namespace not in RELATIONSHIP_BASE or body is None:
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
            elif child.tag not in (self.q("del"), _FALLBACK) and not local_name(child.tag).endswith(
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
        return _LEVELS.get(normalized(self._style_names.get(style_id, style_id)))

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
            if kind is None or (local_name(parent.tag).endswith("Pr") and not mark):
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

    def style_names(self, kind: str = "paragraph") -> list[str]:
        """Return the names of the styles of a kind (``paragraph``, ``character``).

        As Word shows them: a built-in's lower-case name capitalised (``heading 1`` is
        ``Heading 1``); a style without a name is named by its id.
        """
        name = self.package.related(self.name, "/styles")
        styles = [] if name is None else list(self.package.xml(name).root.iter(self.q("style")))
        names: list[str] = []
        for style in styles:
            label = style.find(self.q("name"))
            own = style.get(self.q("styleId"), "")
            shown = own if label is None else label.get(self.q("val"), "")
            if style.get(self.q("type"), "paragraph") == kind and shown:
                names.append(shown[:1].upper() + shown[1:])
        return names

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
                self._style_ids.setdefault(normalized(style_id), style_id)
            for style_id, style in paragraph_styles:
                label = style.find(self.q("name"))
                if label is not None:
                    self._style_names[style_id] = label.get(self.q("val"), "")
                    self._style_ids.setdefault(normalized(label.get(self.q("val"), "")), style_id)
        return self._style_ids
