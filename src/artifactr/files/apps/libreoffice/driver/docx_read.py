"""Reading a plain Writer document's inspection from its .docx, without a second export.

An edit stores ``out.docx`` (the office's own export of the document it holds) and an inspection
is given a .docx: this reads ``word/document.xml`` in one pass, as ``odf_read.py`` reads the ODF
export, and returns what it returns (``outline``, ``text``, ``review``, ``pages``). The ODF export
it replaces is the slowest store the office makes (3-5x the .docx store of a long document), and
an edit made it after the .docx store it had already paid for.

It reads only what it reads exactly as the ODF reading does: paragraphs (runs, tabs, line
breaks, hyperlinks, fields' results), tables (a row a line, cells tab-separated, a merged cell
once) and headings (the style's name, else an outline level). A file that holds anything else a
page or a review shows (tracked changes, comments, notes, text boxes, frames, content controls,
formulas, symbols, or any element not named here) raises :class:`Unread`, and the job reads the
ODF export as before: a document the office can read more of is never read for less.
"""

import re
import zipfile
from xml.etree import ElementTree

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
REL = "http://schemas.openxmlformats.org/package/2006/relationships"
MAIN = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
STRICT_MAIN = "http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument"


def w(name):
    """Return a WordprocessingML element's or attribute's name, as ElementTree spells it."""
    return "{" + W + "}" + name


P, TABLE, ROW, CELL, RUN = w("p"), w("tbl"), w("tr"), w("tc"), w("r")
TEXT, TAB, BREAK = w("t"), w("tab"), w("br")
FIELD_CHAR, FIELD_SIMPLE = w("fldChar"), w("fldSimple")
VAL, TYPE, BREAK_TYPE = w("val"), w("fldCharType"), w("type")

HEADING = re.compile(r"^(?:heading ?([1-9])|title)$", re.I)
"""A paragraph style in the outline, with its level (a title is level 1): ``odf_read``'s."""

UNREAD = {
    w(name)
    for name in (
        "ins",
        "del",
        "moveFrom",
        "moveTo",
        "rPrChange",
        "pPrChange",
        "sectPrChange",
        "tblPrChange",
        "tblGridChange",
        "trPrChange",
        "tcPrChange",
        "numberingChange",
        "cellIns",
        "cellDel",
        "cellMerge",
        "commentRangeStart",
        "commentRangeEnd",
        "commentReference",
        "footnoteReference",
        "endnoteReference",
        "txbxContent",
        "framePr",
        "sdt",
        "object",
        "pict",
        "ruby",
        "subDoc",
        "altChunk",
    )
} | {
    "{http://schemas.openxmlformats.org/markup-compatibility/2006}AlternateContent",
    "{http://schemas.openxmlformats.org/officeDocument/2006/math}oMath",
    "{http://schemas.openxmlformats.org/officeDocument/2006/math}oMathPara",
}
"""Elements whose text or review items the ODF reading finds elsewhere than in order (review
items, notes, frames) or spells otherwise: a file holding one is read from the ODF export."""

SKIPPED_BLOCKS = {w(name) for name in ("sectPr", "bookmarkStart", "bookmarkEnd", "proofErr")}
SKIPPED_BLOCKS |= {w("permStart"), w("permEnd")}
"""Block-level elements that show nothing."""

SKIPPED_INLINE = SKIPPED_BLOCKS | {w("pPr"), w("rPr"), w("lastRenderedPageBreak")}
SKIPPED_INLINE |= {w("instrText"), w("drawing"), w("noProof")}
"""Elements within a paragraph that show nothing (a picture's drawing holds no text here: its
text boxes are :data:`UNREAD`)."""

WRAPPERS = {w(name) for name in ("hyperlink", "smartTag", "customXml", "dir", "bdo")}
"""Elements within a paragraph whose runs the page shows as its own."""

SKIPPED_ROW = {w("trPr"), w("tblPrEx")}
SKIPPED_TABLE = {w("tblPr"), w("tblGrid")} | SKIPPED_BLOCKS


class Unread(Exception):
    """The file holds something this reader leaves to the ODF export's reading."""


def read(path, pages, redlines=False):
    """Return the inspection of the .docx at a path, with its page count, or raise Unread.

    ``redlines`` says whether the office holds tracked changes anywhere (a header's included):
    those are read from the ODF export.
    """
    if redlines:
        raise Unread("tracked changes")
    try:
        with zipfile.ZipFile(path) as package:
            main = main_part(package)
            names = set(package.namelist())
            if "word/comments.xml" in names and b"comment " in package.read("word/comments.xml"):
                raise Unread("comments")
            styles = styles_of(package) if "word/styles.xml" in names else {}
            with package.open(main) as content:
                root = ElementTree.parse(content).getroot()
    except (KeyError, zipfile.BadZipFile, ElementTree.ParseError) as error:
        raise Unread(f"the package: {error}") from None
    for element in root.iter():
        if element.tag in UNREAD:
            raise Unread(element.tag)
    body = root.find(w("body"))
    if body is None:
        raise Unread("no body")
    reading = Reading(styles)
    lines, outline = [], []
    reading.blocks(body, lines, outline)
    return {"outline": "\n".join(outline), "text": "\n".join(lines), "review": [], "pages": pages}


def main_part(package):
    """Return the name of the package's main part, from its relationships."""
    relations = ElementTree.fromstring(package.read("_rels/.rels"))
    for relation in relations.iter("{" + REL + "}Relationship"):
        if relation.get("Type") in (MAIN, STRICT_MAIN):
            return relation.get("Target", "").lstrip("/")
    raise Unread("no main part")


def styles_of(package):
    """Return each paragraph style's name, parent and outline level (or None), by its id."""
    root = ElementTree.fromstring(package.read("word/styles.xml"))
    found = {}
    for style in root.iter(w("style")):
        if style.get(BREAK_TYPE) not in (None, "paragraph"):
            continue
        ident = style.get(w("styleId"))
        if style.get(w("default")) in ("1", "true", "on"):
            found[None] = (ident, None, None)
        name = style.find(w("name"))
        based = style.find(w("basedOn"))
        level = style.find(f"{w('pPr')}/{w('outlineLvl')}")
        found[ident] = (
            name.get(VAL, ident) if name is not None else ident,
            based.get(VAL) if based is not None else None,
            level.get(VAL) if level is not None else None,
        )
    return found


def empty(paragraph):
    """Return whether a paragraph holds no run (its properties, bookmarks and such only)."""
    return all(child.tag in SKIPPED_INLINE for child in paragraph)


def grid(row, side):
    """Return how many grid columns a row leaves out before or after its cells.

    The office fills them with empty cells.
    """
    found = row.find(f"{w('trPr')}/{w(side)}")
    value = found.get(VAL, "0") if found is not None else "0"
    return int(value) if value.isdigit() else 0


class Reading:
    """One pass's state: the styles, and the fields open at this point of the text."""

    def __init__(self, styles):
        self.styles = styles
        self.fields = []

    def blocks(self, parent, lines, outline=None):
        """Append the lines of a body's or a cell's paragraphs and tables; its headings too."""
        for element in parent:
            if element.tag == P:
                if element.find(f"{w('pPr')}/{w('sectPr')}") is not None and empty(element):
                    continue  # the office's import drops an empty paragraph ending a section
                line = self.line(element)
                lines.append(line)
                depth = self.level(element)
                if outline is not None and depth and line.strip():
                    outline.append("  " * (depth - 1) + " ".join(line.split()))
            elif element.tag == TABLE:
                lines.extend(self.table(element))
            elif element.tag not in SKIPPED_BLOCKS and element.tag != w("tcPr"):
                raise Unread(element.tag)

    def line(self, paragraph):
        """Return a paragraph's text as the page shows it."""
        out = []
        self.inline(paragraph, out)
        if self.fields:
            raise Unread("a field that ends in another paragraph")
        return "".join(out)

    def inline(self, parent, out):
        """Append what the runs within an element show, in reading order."""
        for child in parent:
            kind = child.tag
            if kind == RUN:
                self.run(child, out)
            elif kind in WRAPPERS or kind == FIELD_SIMPLE:
                self.inline(child, out)
            elif kind not in SKIPPED_INLINE:
                raise Unread(kind)

    def run(self, run, out):
        """Append what a run shows: its text, tabs and line breaks, a field's result only."""
        for child in run:
            kind = child.tag
            if kind == FIELD_CHAR:
                self.field(child.get(TYPE))
            elif kind in SKIPPED_INLINE:
                continue
            elif kind == BREAK:
                if child.get(BREAK_TYPE, "textWrapping") != "textWrapping":
                    if out:
                        raise Unread("a page or column break within a paragraph")
                elif self.shown():
                    out.append("\n")
            elif kind == TEXT:
                if self.shown():
                    out.append(child.text or "")
            elif kind == TAB:
                if self.shown():
                    out.append("\t")
            else:
                raise Unread(kind)

    def field(self, kind):
        """Follow a complex field: its code is hidden, its result shown."""
        if kind == "begin":
            self.fields.append("code")
        elif kind == "separate" and self.fields:
            self.fields[-1] = "result"
        elif kind == "end" and self.fields:
            self.fields.pop()

    def shown(self):
        """Return whether the text here is shown: no field's code is open around it."""
        return all(state == "result" for state in self.fields)

    def table(self, element):
        """Return a table's lines, a row each as tab-separated cells; a merged cell once."""
        lines = []
        for row in element:
            if row.tag in SKIPPED_TABLE:
                continue
            if row.tag != ROW:
                raise Unread(row.tag)
            texts = [""] * grid(row, "gridBefore")
            for cell in row:
                if cell.tag in SKIPPED_ROW or cell.tag in SKIPPED_BLOCKS:
                    continue
                if cell.tag != CELL:
                    raise Unread(cell.tag)
                merge = cell.find(f"{w('tcPr')}/{w('vMerge')}")
                if merge is not None and merge.get(VAL, "continue") != "restart":
                    continue
                inner = []
                self.blocks(cell, inner)
                texts.append(" ".join(inner))
            texts.extend([""] * grid(row, "gridAfter"))
            lines.append("\t".join(texts))
        return lines

    def level(self, paragraph):
        """Return a paragraph's outline level (a title is 1), or 0 for body text."""
        properties = paragraph.find(w("pPr"))
        ident = None
        own = None
        if properties is not None:
            style = properties.find(w("pStyle"))
            ident = style.get(VAL) if style is not None else None
            outline = properties.find(w("outlineLvl"))
            own = outline.get(VAL) if outline is not None else None
        if ident is None and None in self.styles:
            ident = self.styles[None][0]
        name = self.styles.get(ident, (ident or "", None, None))[0]
        match = HEADING.match(name)
        if match:
            return int(match.group(1) or 1)
        if own is None:
            own = self.inherited(ident)
        return int(own) + 1 if own is not None and own.isdigit() and int(own) < 9 else 0

    def inherited(self, ident):
        """Return the outline level a style has or inherits, or None."""
        seen = set()
        while ident is not None and ident not in seen and ident in self.styles:
            seen.add(ident)
            _, based, level = self.styles[ident]
            if level is not None:
                return level
            ident = based
        return None
