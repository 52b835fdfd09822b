"""Reading a Writer document: its outline, text, review items and pages.

``inspect`` returns ``{"outline", "text", "review", "pages"}``; the other functions are what the
apply job shares to find what a command names.
"""

import re

from desktop import each, load, source

HEADING = re.compile(r"^(?:heading ?([1-9])|title)$", re.I)
"""A paragraph style in the outline, with its level (a title is level 1)."""

CHANGE_KINDS = {"Insert": "insert", "Delete": "delete"}
"""The review's kind of each tracked change the office names."""


def is_table(element):
    """Return whether a text element is a table."""
    return element.supportsService("com.sun.star.text.TextTable")


def visible(paragraph, comments=None):
    """Return a paragraph's text without tracked deletions; collect its comments."""
    out = []
    deleting = False
    for portion in each(paragraph):
        kind = portion.TextPortionType
        if kind == "Redline":
            if portion.RedlineType == "Delete":
                deleting = portion.IsStart
        elif kind == "Text" and not deleting:
            out.append(portion.getString())
        elif kind == "Annotation" and comments is not None:
            comments.append(portion.TextField)
    return "".join(out)


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


def walk(text, lines, comments, outline=None):
    """Append a text's lines and collect its comments, and its headings if given an outline."""
    for element in each(text):
        if is_table(element):
            lines.extend(table_lines(element, comments))
            continue
        line = visible(element, comments)
        lines.append(line)
        if outline is not None:
            depth = level(element)
            if depth and line.strip():
                outline.append("  " * (depth - 1) + " ".join(line.split()))


def stamp(value):
    """Return a com.sun.star.util.DateTime as ISO 8601, in UTC."""
    if value is None or not value.Year:
        return None
    return (
        f"{value.Year:04d}-{value.Month:02d}-{value.Day:02d}"
        f"T{value.Hours:02d}:{value.Minutes:02d}:{value.Seconds:02d}Z"
    )


def comments_of(document):
    """Return the document's comments, in reading order."""
    found = []
    walk(document.getText(), [], found)
    return found


def changes_of(document):
    """Return the document's tracked changes, in the engine's order."""
    return each(document.getRedlines())


def change_text(change):
    """Return the text a tracked change covers, or an empty string."""
    try:
        start, end = change.RedlineStart, change.RedlineEnd
        cursor = start.getText().createTextCursorByRange(start)
        cursor.gotoRange(end, True)
        return cursor.getString()
    except Exception:
        return ""


def inspect(document):
    """Return what the document holds: outline, text, review items and pages."""
    lines = []
    comments = []
    outline = []
    walk(document.getText(), lines, comments, outline)
    lines.extend(boxes(document, comments))
    notes = document.getFootnotes()
    lines.extend(
        f"[{index + 1}] {notes.getByIndex(index).getString()}" for index in range(notes.getCount())
    )
    endnotes = document.getEndnotes()
    lines.extend(
        f"[{roman(index + 1)}] {endnotes.getByIndex(index).getString()}"
        for index in range(endnotes.getCount())
    )
    review = [comment_item(number, comment) for number, comment in enumerate(comments, 1)]
    review.extend(
        change_item(number, change) for number, change in enumerate(changes_of(document), 1)
    )
    return {
        "outline": "\n".join(outline),
        "text": "\n".join(lines),
        "review": review,
        "pages": pages(document),
    }


def comment_item(number, comment):
    """Return a comment as a review item."""
    try:
        anchor = comment.getAnchor().getString() or None
    except Exception:
        anchor = None
    return {
        "kind": "comment",
        "id": str(number),
        "author": comment.Author or None,
        "date": stamp(comment.DateTimeValue),
        "text": comment.Content,
        "anchor": anchor,
        "resolved": bool(comment.Resolved),
    }


def change_item(number, change):
    """Return a tracked change as a review item."""
    return {
        "kind": "change",
        "id": str(number),
        "author": change.RedlineAuthor or None,
        "date": stamp(change.RedlineDateTime),
        "text": change_text(change),
        "change": CHANGE_KINDS.get(change.RedlineType),
        "type": change.RedlineType,
    }


def boxes(document, comments):
    """Return the lines of the text frames and text boxes, in the draw page's order."""
    found = []
    page = document.getDrawPage()
    for index in range(page.getCount()):
        shape = page.getByIndex(index)
        try:
            text = shape.getText()
        except Exception:
            continue
        inner = []
        try:
            walk(text, inner, comments)
        except Exception:
            inner = [text.getString()]
        found.extend(line for line in inner if line.strip())
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


def pages(document):
    """Return how many pages the document lays out on."""
    return int(document.getCurrentController().getPropertyValue("PageCount"))


def run(job, directory, _context, desktop):
    """The inspect job: read the file."""
    return inspect(load(desktop, source(job, directory)))
