"""Reading a Writer document: the inspect job, and what the apply job reads over UNO.

``inspect`` returns ``{"outline", "text", "review", "pages"}`` from the .docx in hand, the file
given or the one just stored (``docx_read.py``), or, where that holds what only the ODF reading
reads (tracked changes, comments, notes, frames), from the office's own ODF export
(``odf_read.py``); the other functions read paragraphs over UNO, for the apply job to find what
a command names, with the same rules for what a paragraph shows.
"""

import os
import re

import docx_read
import odf_read
from desktop import each, load, source, store

HEADING = re.compile(r"^(?:heading ?([1-9])|title)$", re.I)
"""A paragraph style in the outline, with its level (a title is level 1)."""


def is_table(element):
    """Return whether a text element is a table."""
    return element.supportsService("com.sun.star.text.TextTable")


def visible(paragraph, comments=None):
    """Return a paragraph's text as the page shows it, without tracked deletions.

    Its runs, its fields' results and its content controls' text, in reading order; its comments
    are collected.
    """
    out = []
    shown(paragraph, out, comments, [False])
    return "".join(out).replace("\r", "")


def shown(container, out, comments, deleting):
    """Append the text a paragraph or a content control shows; ``deleting`` is shared state."""
    for portion in each(container):
        kind = portion.TextPortionType
        if kind == "Redline":
            if portion.RedlineType == "Delete":
                deleting[0] = portion.IsStart
        elif kind == "Annotation":
            if comments is not None:
                comments.append(portion.TextField)
        elif kind == "ContentControl":
            shown(portion.ContentControl, out, comments, deleting)
        elif kind in SHOWN and not deleting[0]:
            out.append(portion.getString())


SHOWN = {"Text", "TextField"}
"""The portions whose string the page shows: runs and fields' results."""


def level(paragraph):
    """Return a paragraph's outline level (a title is 1), or 0 for body text."""
    style = paragraph.ParaStyleName or ""
    match = HEADING.match(style)
    if match:
        return int(match.group(1) or 1)
    try:
        return int(paragraph.OutlineLevel)
    except Exception:
        return 0


def cells(table):
    """Return a table's cells, row by row, as cell names give them."""
    rows = []
    key = None
    for name in table.getCellNames():
        match = re.match(r"^[A-Za-z]+(\d+)$", name)
        row = match.group(1) if match else name
        if row != key:
            rows.append([])
            key = row
        rows[-1].append(table.getCellByName(name))
    return rows


def table_lines(table, comments):
    """Return a table's lines, a row each as tab-separated cells; collect its comments."""
    lines = []
    for row in cells(table):
        texts = []
        for cell in row:
            inner = []
            walk(cell, inner, comments)
            texts.append(" ".join(inner))
        lines.append("\t".join(texts))
    return lines


def walk(text, lines, comments):
    """Append a text's lines (tables' rows as tab-separated cells) and collect its comments."""
    for element in each(text):
        if is_table(element):
            lines.extend(table_lines(element, comments))
        else:
            lines.append(visible(element, comments))


def comments_of(document):
    """Return the document's comments, in reading order."""
    found = []
    walk(document.getText(), [], found)
    return found


def changes_of(document):
    """Return the document's tracked changes, in the engine's order."""
    return each(document.getRedlines())


def inspect(document, directory, docx):
    """Return what the document holds: outline, text, review items and pages.

    ``docx`` is the document as a .docx: the file the job loaded, or the one it just stored.
    It is read in one pass (``docx_read.py``) where it holds only what that reader reads; else
    the document is stored once as ODF in the job's directory and read in one pass
    (``odf_read.py``). Only its page count and styles are asked of the office.
    """
    count = pages(document)
    try:
        found = docx_read.read(docx, count, has_changes(document))
    except docx_read.Unread:
        package = os.path.join(directory, "inspect.odt")
        store(document, package, "writer8")
        try:
            found = odf_read.read(package, count)
        finally:
            os.remove(package)
    return {**found, "styles": styles_of(document)}


def has_changes(document):
    """Return whether the document holds tracked changes, anywhere."""
    return bool(document.getRedlines().createEnumeration().hasMoreElements())


COMMON_STYLES = {
    "ParagraphStyles": ("Standard", "Text body", "Title", "Subtitle", "Heading 1", "Heading 2"),
    "CharacterStyles": ("Strong Emphasis", "Emphasis"),
}
"""The built-in styles an agent is offered though the document uses none, by internal name."""


def styles_of(document, most=200):
    """Return the paragraph and character styles an agent may name, by their shown names.

    The document's own (user-defined) and those it uses, then the common built-ins: the office
    has a hundred more, which a command finds by name too.
    """
    families = document.getStyleFamilies()
    found = {}
    for family, kind in (("ParagraphStyles", "paragraph"), ("CharacterStyles", "character")):
        styles = families.getByName(family)
        names = []
        for internal in styles.getElementNames():
            style = styles.getByName(internal)
            if style.isUserDefined() or style.isInUse() or internal in COMMON_STYLES[family]:
                names.append(style.DisplayName)
        found[kind] = names[:most]
    return found


def pages(document):
    """Return how many pages the document lays out on."""
    return int(document.getCurrentController().getPropertyValue("PageCount"))


def run(job, directory, _context, desktop):
    """The inspect job: read the file."""
    path = source(job, directory)
    return inspect(load(desktop, path), directory, path)
