"""Reading a Writer document from the office's own ODF export, in one pass over its XML.

The inspect job stores the loaded document as ODF (``writer8``) once and reads ``content.xml``
here, instead of walking the document over UNO portion by portion: the cost then grows with the
document as the office's own load and save do. What it returns is what the UNO walk returned:
the body's lines (a paragraph a line, with its runs, fields' results and content controls' text;
a table's rows as tab-separated cells; tracked deletions left out), then the lines of text frames
and boxes, then the footnotes (``[1] ...``) and endnotes (``[i] ...``); the outline of the body's
headings; comments in reading order (the body's, then the frames'), with their anchors; tracked
changes in the office's order, with the text each covers.
"""

import re
import zipfile
from xml.etree import ElementTree

NS = {
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "draw": "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0",
    "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
    "dc": "http://purl.org/dc/elements/1.1/",
    "loext": "urn:org:documentfoundation:names:experimental:office:xmlns:loext:1.0",
}


def tag(prefix, name):
    """Return an element's or attribute's qualified name, as ElementTree spells it."""
    return "{" + NS[prefix] + "}" + name


P, H = tag("text", "p"), tag("text", "h")
TABLE, ROW, CELL = tag("table", "table"), tag("table", "table-row"), tag("table", "table-cell")
NOTE, NOTE_BODY = tag("text", "note"), tag("text", "note-body")
ANNOTATION, ANNOTATION_END = tag("office", "annotation"), tag("office", "annotation-end")
CHANGE_START, CHANGE_END = tag("text", "change-start"), tag("text", "change-end")
SPACE, TAB, BREAK = tag("text", "s"), tag("text", "tab"), tag("text", "line-break")
NAME, STYLE = tag("office", "name"), tag("text", "style-name")
CHANGE_ID = tag("text", "change-id")
SKIPPED = {
    tag("text", "tracked-changes"),
    tag("text", "variable-decls"),
    tag("text", "sequence-decls"),
    tag("text", "user-field-decls"),
    tag("text", "dde-connection-decls"),
    tag("office", "forms"),
    tag("text", "number"),
    tag("table", "table-columns"),
    tag("table", "table-column"),
    tag("table", "covered-table-cell"),
}
"""Elements that hold nothing the page shows as text (or nothing here: a list label, a cell
another spans)."""

XML_ID = "{http://www.w3.org/XML/1998/namespace}id"
"""The id a changed region may carry instead of ``text:id``."""

CHANGE_TYPES = {"insertion": "Insert", "deletion": "Delete", "format-change": "Format"}
"""The office's type of each kind of tracked change."""

CHANGE_KINDS = {"Insert": "insert", "Delete": "delete"}
"""The review's kind of each tracked change the office names."""

HEADING = re.compile(r"^(?:heading ?([1-9])|title)$", re.I)
"""A paragraph style in the outline, with its level (a title is level 1)."""


class Reading:
    """One pass's state: what is read, and the ranges (comment anchors, insertions) still open."""

    def __init__(self, parents, styles=None):
        self.parents = parents
        self.styles = styles or {}
        self.comments = []
        self.notes = []
        self.frames = []
        self.open = {}
        self.inserted = {}
        self.commented = set()

    def add(self, text, out):
        """Append text to a line, and to every range open around it."""
        if text:
            out.append(text)
            for recorded in self.open.values():
                recorded.append(text)

    def line(self, element):
        """Return a paragraph's text as the page shows it."""
        out = []
        self.inline(element, out)
        return "".join(out)

    def inline(self, element, out):
        """Append an element's text and its children's, in reading order."""
        self.add(element.text, out)
        for child in element:
            self.child(child, out)
            self.add(child.tail, out)

    def child(self, child, out):
        """Append what one element within a paragraph shows."""
        kind = child.tag
        if kind == SPACE:
            self.add(" " * int(child.get(tag("text", "c"), "1")), out)
        elif kind == TAB:
            self.add("\t", out)
        elif kind == BREAK:
            self.add("\n", out)
        elif kind == NOTE:
            self.notes.append(child)
        elif kind == ANNOTATION:
            self.annotation(child)
        elif kind == ANNOTATION_END:
            self.commented.update(key[1] for key in self.open if key[0] == "change")
            self.close(("comment", child.get(NAME)))
        elif kind == CHANGE_START:
            self.open[("change", child.get(CHANGE_ID))] = []
        elif kind == CHANGE_END:
            key = ("change", child.get(CHANGE_ID))
            self.inserted[key[1]] = "".join(self.open.pop(key, []))
        elif kind.startswith("{" + NS["draw"] + "}"):
            self.frames.append(child)
        elif kind not in SKIPPED:
            self.inline(child, out)

    def annotation(self, element):
        """Record a comment; its anchor runs to its end mark, if it has one."""
        self.commented.update(key[1] for key in self.open if key[0] == "change")
        comment = {
            "author": text_of(element, tag("dc", "creator")) or None,
            "date": stamp(text_of(element, tag("dc", "date"))),
            "text": "\n".join(plain(p) for p in element.iter(P)),
            "anchor": None,
            "resolved": element.get(tag("loext", "resolved")) == "true",
        }
        self.comments.append(comment)
        name = element.get(NAME)
        if name:
            self.open[("comment", name)] = comment["anchor"] = []

    def close(self, key):
        """Close a comment's anchor."""
        recorded = self.open.pop(key, None)
        if recorded is not None:
            for comment in self.comments:
                if comment["anchor"] is recorded:
                    comment["anchor"] = "".join(recorded) or None

    def blocks(self, parent, lines, outline=None):
        """Append the lines of a text's paragraphs and tables; its headings if given an outline."""
        for element in parent:
            if element.tag in (P, H):
                line = self.line(element)
                lines.append(line)
                depth = self.level(element)
                if outline is not None and depth and line.strip():
                    outline.append("  " * (depth - 1) + " ".join(line.split()))
            elif element.tag == TABLE:
                lines.extend(self.table(element))
            elif element.tag.startswith("{" + NS["draw"] + "}"):
                self.frames.append(element)
            elif element.tag not in SKIPPED and not element.tag.endswith("-source"):
                self.blocks(element, lines, outline)

    def table(self, element):
        """Return a table's lines, a row each as tab-separated cells."""
        lines = []
        for row in element.iter(ROW):
            if self.owner(row, element):
                texts = []
                for cell in row:
                    if cell.tag == CELL:
                        inner = []
                        self.blocks(cell, inner)
                        texts.append(" ".join(inner))
                lines.append("\t".join(texts))
        return lines

    def owner(self, row, table):
        """Return whether a row is the table's own, not a nested table's."""
        parent = self.parents.get(row)
        while parent is not None and parent.tag != TABLE:
            parent = self.parents.get(parent)
        return parent is table

    def level(self, element):
        """Return a paragraph's outline level (a title is 1), or 0 for body text."""
        style = self.style(element.get(STYLE, ""))
        match = HEADING.match(style)
        if match:
            return int(match.group(1) or 1)
        if element.tag == H:
            return int(element.get(tag("text", "outline-level"), "1"))
        return 0

    def style(self, name):
        """Return the named style a paragraph's (maybe automatic) style derives from."""
        return self.styles.get(name, name).replace("_20_", " ")


def plain(element):
    """Return a paragraph's text, read apart from the document's pass (a comment, a deletion)."""
    return Reading({}).line(element)


def text_of(element, name):
    """Return the text of an element's first child of that name, or an empty string."""
    found = element.find(name)
    return "" if found is None or found.text is None else found.text


def stamp(value):
    """Return an ODF date and time as ISO 8601 in UTC (the office writes UTC), or None."""
    if len(value) < 19 or value.startswith("0000"):
        return None
    return value[:19] + "Z"


def read(path, pages):
    """Return the inspection of the ODF package at a path, with its page count."""
    with zipfile.ZipFile(path) as package, package.open("content.xml") as content:
        root = ElementTree.parse(content).getroot()
    parents = {child: parent for parent in root.iter() for child in parent}
    styles = {
        style.get(tag("style", "name")): style.get(tag("style", "parent-style-name"))
        for style in root.iter(tag("style", "style"))
        if style.get(tag("style", "parent-style-name"))
    }
    reading = Reading(parents, styles)
    body = root.find(f"{tag('office', 'body')}/{tag('office', 'text')}")
    lines, outline = [], []
    reading.blocks(body, lines, outline)
    boxes(reading, lines)
    lines.extend(notes(reading))
    review = [
        {"kind": "comment", "id": str(number), **comment}
        for number, comment in enumerate(reading.comments, 1)
    ]
    review.extend(changes(reading, body))
    return {
        "outline": "\n".join(outline),
        "text": "\n".join(lines),
        "review": review,
        "pages": pages,
    }


def boxes(reading, lines):
    """Append the non-blank lines of text frames and boxes, after the body, as found."""
    done = 0
    while done < len(reading.frames):
        frame = reading.frames[done]
        done += 1
        inner = []
        for box in frame.iter(tag("draw", "text-box")):
            reading.blocks(box, inner)
        if not inner:
            inner.extend(reading.line(e) for e in frame.iter() if e.tag in (P, H))
        lines.extend(line for line in inner if line.strip())


def notes(reading):
    """Return the footnotes' and endnotes' lines, each numbered as the page marks it."""
    footnotes, endnotes = [], []
    for note in reading.notes:
        body = note.find(NOTE_BODY)
        inner = []
        if body is not None:
            reading.blocks(body, inner)
        if note.get(tag("text", "note-class")) == "endnote":
            endnotes.append("\n".join(inner))
        else:
            footnotes.append("\n".join(inner))
    found = [f"[{index}] {text}" for index, text in enumerate(footnotes, 1)]
    found.extend(f"[{roman(index)}] {text}" for index, text in enumerate(endnotes, 1))
    return found


def changes(reading, body):
    """Return the tracked changes as review items, in the office's order."""
    found = []
    regions = body.find(tag("text", "tracked-changes"))
    if regions is None:
        return found
    for region in regions:
        ident = region.get(tag("text", "id")) or region.get(XML_ID)
        kind = next(iter(region), None)
        if kind is None:
            continue
        office_type = CHANGE_TYPES.get(kind.tag.rsplit("}", 1)[1], "Format")
        info = kind.find(tag("office", "change-info"))
        if office_type == "Delete":
            text = "\n".join(plain(p) for p in kind.iter() if p.tag in (P, H))
        else:
            text = reading.inserted.get(ident, "")
            if not text and ident in reading.commented:
                continue  # a comment's insertion: Word never tracks it, and a .docx drops it
        found.append(
            {
                "kind": "change",
                "id": str(len(found) + 1),
                "author": (text_of(info, tag("dc", "creator")) if info is not None else "") or None,
                "date": stamp(text_of(info, tag("dc", "date")) if info is not None else ""),
                "text": text,
                "change": CHANGE_KINDS.get(office_type),
                "type": office_type,
            }
        )
    return found


def roman(number):
    """Return a number in lower-case Roman numerals, as endnotes are marked."""
    out = ""
    for value, letters in (
        (1000, "m"),
        (900, "cm"),
        (500, "d"),
        (400, "cd"),
        (100, "c"),
        (90, "xc"),
        (50, "l"),
        (40, "xl"),
        (10, "x"),
        (9, "ix"),
        (5, "v"),
        (4, "iv"),
        (1, "i"),
    ):
        while number >= value:
            out += letters
            number -= value
    return out
