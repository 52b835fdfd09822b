"""LibreOffice's driver: one job, run by the system Python with Debian's python3-uno (ADR-0008).

It is one module of some 900 lines on purpose: another interpreter runs it by path, as a single
file that imports nothing of this package, so its parts can't live in modules beside it.

The adapter never imports ``uno``: it writes a job (``job.json`` and the file) into a fresh
directory and runs ``/usr/bin/python3 driver.py <dir>``. The driver writes a fresh profile
(macros off, no lock files, the author as the user's name), starts ``soffice --headless`` on a
named pipe, loads the file hidden (macros never run, links never update), does the job, and
writes one JSON line to stdout: ``{"ok": true, "result": ...}`` or ``{"ok": false, "kind":
"refused" | "crashed", "reason": ..., "index": n}``. The adapter kills the whole process group
as soon as it has the line, or at the deadline.

Jobs (``op``): ``inspect`` (outline, text, review, pages), ``apply`` (run a batch, save to
``out.docx`` only if every command succeeds, then load the saved file again and inspect it), and
``pdf`` (export ``out.pdf`` and count its pages). The commands and their parameters are checked
by the adapter (``_catalog.py``) before this runs; the driver checks what only the document can
tell (is there such a heading, table or change).

This file runs under Python 3.11 and imports only the standard library and ``uno``.
"""

import json
import os
import re
import subprocess
import sys
import time
import traceback
from xml.sax.saxutils import escape

import uno

CONNECT_POLL = 0.05
"""Seconds between attempts to reach the office over its pipe."""

PARAGRAPH_BREAK = 0
"""com.sun.star.text.ControlCharacter.PARAGRAPH_BREAK."""

BOLD, NORMAL_WEIGHT = 150.0, 100.0
"""com.sun.star.awt.FontWeight.BOLD and NORMAL."""

HEADING = re.compile(r"^(?:heading ?([1-9])|title)$", re.I)
"""A paragraph style in the outline, with its level (a title is level 1)."""

STYLE_ALIASES = {"body": "Standard", "normal": "Standard", "default": "Standard"}
"""Names an agent may give for the document's default paragraph style."""

PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry"
 xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.UserProfile/Data"><prop oor:name="givenname" oor:op="fuse">
<value>{author}</value></prop></item>
<item oor:path="/org.openoffice.UserProfile/Data"><prop oor:name="sn" oor:op="fuse">
<value></value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
<prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
<prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting">
<prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc">
<prop oor:name="UseLocking" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"""
"""The fresh profile's settings: the author, macros never run, no lock files, no remote links."""


class Refused(Exception):
    """The document can't do what a command asks; the batch is refused with this reason."""


# ─── the office ───────────────────────────────────────────────────────────────


def prop(name, value):
    """Return a com.sun.star.beans.PropertyValue."""
    value_ = uno.createUnoStruct("com.sun.star.beans.PropertyValue")
    value_.Name = name
    value_.Value = value
    return value_


def url(path):
    """Return a file URL for a path."""
    return uno.systemPathToFileUrl(os.path.abspath(path))


def launch(job, profile, log):
    """Start soffice on a profile, listening on the job's pipe."""
    return subprocess.Popen(
        [
            job["soffice"],
            "--headless",
            "--invisible",
            "--nocrashreport",
            "--nodefault",
            "--nologo",
            "--nofirststartwizard",
            "--norestore",
            "--nolockcheck",
            "-env:UserInstallation=" + url(profile),
            "--accept=pipe,name=" + job["pipe"] + ";urp;",
        ],
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )


def start(job, directory):
    """Start soffice on a fresh profile; return the context and desktop once it answers."""
    profile = os.path.join(directory, "profile")
    os.makedirs(os.path.join(profile, "user"))
    with open(os.path.join(profile, "user", "registrymodifications.xcu"), "w") as settings:
        settings.write(PROFILE.format(author=escape(job["author"])))
    with open(os.path.join(directory, "soffice.log"), "wb") as log:
        office = launch(job, profile, log)
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext(
        "com.sun.star.bridge.UnoUrlResolver", local
    )
    while True:
        try:
            context = resolver.resolve(
                "uno:pipe,name=" + job["pipe"] + ";urp;StarOffice.ComponentContext"
            )
            break
        except Exception:
            if office.poll() is not None:
                raise RuntimeError(f"soffice exited with status {office.returncode}") from None
            time.sleep(CONNECT_POLL)
    manager = context.ServiceManager
    desktop = manager.createInstanceWithContext("com.sun.star.frame.Desktop", context)
    return context, desktop


def load(desktop, path):
    """Load a file hidden, macros never run and links never updated, or refuse it."""
    properties = (
        prop("Hidden", True),
        prop("ReadOnly", False),
        prop("MacroExecutionMode", 0),  # MacroExecMode.NEVER_EXECUTE
        prop("UpdateDocMode", 0),  # UpdateDocMode.NO_UPDATE
        prop("Silent", True),
    )
    try:
        document = desktop.loadComponentFromURL(url(path), "_blank", 0, properties)
    except Exception as error:
        raise Refused("LibreOffice can't open the file: " + message(error)) from None
    if document is None or not document.supportsService("com.sun.star.text.TextDocument"):
        if document is not None:
            document.close(True)
        raise Refused("LibreOffice can't open the file as a text document")
    return document


def message(error):
    """Return a UNO exception's message, or its type's name."""
    text = getattr(error, "Message", None) or str(error)
    return text.strip() or type(error).__name__


# ─── reading ──────────────────────────────────────────────────────────────────


def elements(text):
    """Return the paragraphs and tables of a text, in order."""
    found = []
    enumeration = text.createEnumeration()
    while enumeration.hasMoreElements():
        found.append(enumeration.nextElement())
    return found


def is_table(element):
    """Return whether a text element is a table."""
    return element.supportsService("com.sun.star.text.TextTable")


def portions(paragraph):
    """Return a paragraph's text portions, in order."""
    found = []
    enumeration = paragraph.createEnumeration()
    while enumeration.hasMoreElements():
        found.append(enumeration.nextElement())
    return found


def visible(paragraph, comments=None):
    """Return a paragraph's text without tracked deletions; collect its comments."""
    out = []
    deleting = False
    for portion in portions(paragraph):
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
    """Return a table's cells' texts, row by row, as cell names give them."""
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


def walk(text, lines, comments):
    """Append a text's lines (tables' rows as tab-separated cells) and collect its comments."""
    for element in elements(text):
        if is_table(element):
            for row in cells(element):
                texts = []
                for cell in row:
                    inner = []
                    walk(cell, inner, comments)
                    texts.append(" ".join(inner))
                lines.append("\t".join(texts))
        else:
            lines.append(visible(element, comments))


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
    found = []
    enumeration = document.getRedlines().createEnumeration()
    while enumeration.hasMoreElements():
        found.append(enumeration.nextElement())
    return found


def change_text(change):
    """Return the text a tracked change covers, or an empty string."""
    try:
        start, end = change.RedlineStart, change.RedlineEnd
        cursor = start.getText().createTextCursorByRange(start)
        cursor.gotoRange(end, True)
        return cursor.getString()
    except Exception:
        return ""


CHANGE_KINDS = {"Insert": "insert", "Delete": "delete"}


def inspect(document):
    """Return what the document holds: outline, text, review items and pages."""
    lines = []
    comments = []
    outline = []
    for element in elements(document.getText()):
        if is_table(element):
            for row in cells(element):
                texts = []
                for cell in row:
                    inner = []
                    walk(cell, inner, comments)
                    texts.append(" ".join(inner))
                lines.append("\t".join(texts))
            continue
        line = visible(element, comments)
        lines.append(line)
        depth = level(element)
        if depth and line.strip():
            outline.append("  " * (depth - 1) + " ".join(line.split()))
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
    review = []
    for number, comment in enumerate(comments, 1):
        anchor = None
        try:
            anchor = comment.getAnchor().getString() or None
        except Exception:
            anchor = None
        review.append(
            {
                "kind": "comment",
                "id": str(number),
                "author": comment.Author or None,
                "date": stamp(comment.DateTimeValue),
                "text": comment.Content,
                "anchor": anchor,
                "resolved": bool(comment.Resolved),
            }
        )
    for number, change in enumerate(changes_of(document), 1):
        review.append(
            {
                "kind": "change",
                "id": str(number),
                "author": change.RedlineAuthor or None,
                "date": stamp(change.RedlineDateTime),
                "text": change_text(change),
                "change": CHANGE_KINDS.get(change.RedlineType),
                "type": change.RedlineType,
            }
        )
    return {
        "outline": "\n".join(outline),
        "text": "\n".join(lines),
        "review": review,
        "pages": pages(document),
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


# ─── finding ──────────────────────────────────────────────────────────────────


def paragraphs(document):
    """Return the body's top-level elements: paragraphs and tables, in order."""
    return elements(document.getText())


def target(document, params):
    """Return the index and the paragraph a command names, among the body's elements."""
    body = paragraphs(document)
    wanted = params.get("occurrence", 1)
    seen = 0
    if "heading" in params:
        title = " ".join(params["heading"].split()).casefold()
        headings = []
        for index, element in enumerate(body):
            if is_table(element) or not level(element):
                continue
            text = " ".join(visible(element).split())
            headings.append(text)
            if text.casefold() == title:
                seen += 1
                if seen == wanted:
                    return body, index
        known = ", ".join(f"`{h}`" for h in headings[:20]) or "none"
        raise Refused(f"no heading `{params['heading']}`; the headings are: {known}")
    needle = params["paragraph"]
    for index, element in enumerate(body):
        if not is_table(element) and needle in visible(element):
            seen += 1
            if seen == wanted:
                return body, index
    if seen:
        raise Refused(f"only {seen} paragraphs contain `{needle}`")
    raise Refused(f"no paragraph contains `{needle}`")


def found(document, text, case=True):
    """Return every range where a text occurs, in order."""
    search = document.createSearchDescriptor()
    search.SearchString = text
    search.SearchCaseSensitive = case
    search.SearchRegularExpression = False
    matches = document.findAll(search)
    return [matches.getByIndex(index) for index in range(matches.getCount())]


def nth(document, text, occurrence, case=True):
    """Return the ranges a command acts on: the nth match, or every match if no n."""
    matches = found(document, text, case)
    if not matches:
        raise Refused(f"not found: `{text}`")
    if occurrence is None:
        return matches
    if occurrence > len(matches):
        raise Refused(f"`{text}` occurs {len(matches)} times, not {occurrence}")
    return [matches[occurrence - 1]]


def style_of(document, name):
    """Return the paragraph style's internal name for a name an agent gives."""
    wanted = STYLE_ALIASES.get(name.strip().lower(), name.strip())
    styles = document.getStyleFamilies().getByName("ParagraphStyles")
    if styles.hasByName(wanted):
        return wanted
    folded = wanted.casefold().replace(" ", "")
    names = styles.getElementNames()
    for internal in names:
        shown = styles.getByName(internal).DisplayName
        if folded in (internal.casefold().replace(" ", ""), shown.casefold().replace(" ", "")):
            return internal
    raise Refused(f"no paragraph style `{name}`")


def by_id(items, ident, what):
    """Return the item whose id (its number, from 1) is given."""
    text = str(ident).strip()
    if text.isdigit() and 1 <= int(text) <= len(items):
        item = items[int(text) - 1]
        if item is None:
            raise Refused(f"{what} `{ident}` was settled or deleted earlier in this batch")
        return item
    raise Refused(f"no {what} `{ident}` (there are {len(items)})")


def table_of(document, number):
    """Return the body's nth table (from 1)."""
    tables = [element for element in paragraphs(document) if is_table(element)]
    if number > len(tables):
        raise Refused(f"no table {number} (there are {len(tables)})")
    return tables[number - 1]


# ─── commands ─────────────────────────────────────────────────────────────────


class Session:
    """One batch's state: the document, the office, and who acts."""

    def __init__(self, context, document, author):
        self.context = context
        self.document = document
        self.author = author
        self.dispatcher = context.ServiceManager.createInstanceWithContext(
            "com.sun.star.frame.DispatchHelper", context
        )
        # Ids are those of the document as loaded, whatever the batch adds or removes before.
        self.comments = comments_of(document)
        self.changes = changes_of(document)

    def dispatch(self, command):
        """Run an office command (``.uno:...``) on the document's frame."""
        frame = self.document.getCurrentController().getFrame()
        self.dispatcher.executeDispatch(frame, command, "", 0, ())

    def now(self):
        """Return the time now, as a com.sun.star.util.DateTime in UTC."""
        moment = time.gmtime()
        value = uno.createUnoStruct("com.sun.star.util.DateTime")
        value.Year, value.Month, value.Day = moment.tm_year, moment.tm_mon, moment.tm_mday
        value.Hours, value.Minutes, value.Seconds = moment.tm_hour, moment.tm_min, moment.tm_sec
        return value


def replace_all(session, params):
    """Replace every match."""
    search = session.document.createReplaceDescriptor()
    search.SearchString = params["find"]
    search.ReplaceString = params["replace"]
    search.SearchCaseSensitive = params.get("matchCase", False)
    search.SearchRegularExpression = False
    count = session.document.replaceAll(search)
    if not count:
        raise Refused(f"not found: `{params['find']}`")
    return {"replaced": count}


def replace_one(session, params):
    """Replace the nth match."""
    case = params.get("matchCase", False)
    (match,) = nth(session.document, params["find"], params.get("occurrence", 1), case)
    match.setString(params["replace"])
    return {"replaced": 1}


def set_bold(session, params):
    """Make matches bold, or not."""
    weight = BOLD if params.get("value", True) else NORMAL_WEIGHT
    matches = nth(session.document, params["find"], params.get("occurrence"))
    for match in matches:
        match.CharWeight = weight
    return {"changed": len(matches)}


def set_italic(session, params):
    """Make matches italic, or not."""
    posture = "ITALIC" if params.get("value", True) else "NONE"
    slant = uno.Enum("com.sun.star.awt.FontSlant", posture)
    matches = nth(session.document, params["find"], params.get("occurrence"))
    for match in matches:
        match.CharPosture = slant
    return {"changed": len(matches)}


def new_style(document, params, neighbour):
    """Return the style a new paragraph takes: the one given, else its neighbour's body style."""
    if "style" in params:
        return style_of(document, params["style"])
    if neighbour is None or level(neighbour):
        return "Standard"
    return neighbour.ParaStyleName


def insert_after(session, params):
    """Insert a paragraph after the one found."""
    body, index = target(session.document, params)
    paragraph = body[index]
    style = new_style(session.document, params, paragraph)
    text = paragraph.getText()
    cursor = text.createTextCursorByRange(paragraph.getEnd())
    text.insertControlCharacter(cursor, PARAGRAPH_BREAK, False)
    cursor.ParaStyleName = style
    cursor.BreakType = uno.Enum("com.sun.star.style.BreakType", "NONE")
    text.insertString(cursor, params["text"], False)
    return {"style": style}


def insert_before(session, params):
    """Insert a paragraph before the one found."""
    body, index = target(session.document, params)
    paragraph = body[index]
    style = new_style(session.document, params, paragraph)
    text = paragraph.getText()
    cursor = text.createTextCursorByRange(paragraph.getStart())
    text.insertControlCharacter(cursor, PARAGRAPH_BREAK, False)
    cursor.gotoPreviousParagraph(False)
    cursor.ParaStyleName = style
    text.insertString(cursor, params["text"], False)
    return {"style": style}


def append(session, params):
    """Add a paragraph at the end."""
    body = paragraphs(session.document)
    last = body[-1] if body and not is_table(body[-1]) else None
    style = new_style(session.document, params, last)
    text = session.document.getText()
    # finishParagraph adds a paragraph after the last, leaving what is anchored to it in place.
    text.finishParagraph(())
    cursor = text.createTextCursorByRange(text.getEnd())
    cursor.ParaStyleName = style
    text.insertString(cursor, params["text"], False)
    return {"style": style}


def set_text(session, params):
    """Replace a paragraph's text."""
    body, index = target(session.document, params)
    paragraph = body[index]
    cursor = paragraph.getText().createTextCursorByRange(paragraph.getStart())
    cursor.gotoRange(paragraph.getEnd(), True)
    cursor.setString(params["text"])
    return {}


def set_style(session, params):
    """Set a paragraph's style."""
    body, index = target(session.document, params)
    style = style_of(session.document, params["style"])
    body[index].ParaStyleName = style
    return {"style": style}


def delete(session, params):
    """Delete a paragraph, its mark too."""
    body, index = target(session.document, params)
    paragraph = body[index]
    text = paragraph.getText()
    following = body[index + 1] if index + 1 < len(body) else None
    preceding = body[index - 1] if index > 0 else None
    if following is not None and not is_table(following):
        cursor = text.createTextCursorByRange(paragraph.getStart())
        cursor.gotoRange(following.getStart(), True)
    elif preceding is not None and not is_table(preceding):
        cursor = text.createTextCursorByRange(preceding.getEnd())
        cursor.gotoRange(paragraph.getEnd(), True)
    else:
        raise Refused("the paragraph stands alone between tables or in an empty document")
    cursor.setString("")
    return {}


def page_break(session, params):
    """Start a page before a paragraph."""
    body, index = target(session.document, params)
    body[index].BreakType = uno.Enum("com.sun.star.style.BreakType", "PAGE_BEFORE")
    return {}


def annotate(session, anchor, text):
    """Put a comment by the session's author on a range."""
    field = session.document.createInstance("com.sun.star.text.textfield.Annotation")
    field.Author = session.author
    field.Initials = "".join(word[0] for word in session.author.split())[:4].upper()
    field.Content = text
    field.DateTimeValue = session.now()
    text = anchor.getText()
    cursor = text.createTextCursorByRange(anchor.getStart())
    cursor.gotoRange(anchor.getEnd(), True)
    text.insertTextContent(cursor, field, True)
    session.comments.append(field)


def add_comment(session, params):
    """Comment on the nth match."""
    (match,) = nth(session.document, params["anchor"], params.get("occurrence", 1))
    annotate(session, match, params["text"])
    return {}


def reply(session, params):
    """Comment again on a comment's text."""
    comment = by_id(session.comments, params["id"], "comment")
    annotate(session, comment.getAnchor(), params["text"])
    return {}


def resolve(session, params):
    """Mark a comment resolved, or not."""
    comment = by_id(session.comments, params["id"], "comment")
    comment.Resolved = params.get("value", True)
    return {}


def delete_comment(session, params):
    """Delete a comment."""
    comment = by_id(session.comments, params["id"], "comment")
    # Word never tracks removing a comment; LibreOffice would record it as a deletion.
    tracking = session.document.RecordChanges
    session.document.RecordChanges = False
    try:
        comment.getAnchor().getText().removeTextContent(comment)
    finally:
        session.document.RecordChanges = tracking
    session.comments[session.comments.index(comment)] = None
    return {}


def track(session, params):
    """Track changes on or off."""
    session.document.RecordChanges = params["value"]
    return {"value": params["value"]}


def settle(session, params, command):
    """Accept or reject one tracked change, selected, by an office command."""
    change = by_id(session.changes, params["id"], "tracked change")
    before = len(changes_of(session.document))
    start, end = change.RedlineStart, change.RedlineEnd
    cursor = start.getText().createTextCursorByRange(start)
    cursor.gotoRange(end, True)
    session.document.getCurrentController().select(cursor)
    session.dispatch(command)
    session.changes[session.changes.index(change)] = None
    if len(changes_of(session.document)) >= before:
        raise Refused(f"LibreOffice did not settle tracked change `{params['id']}`")
    return {}


def accept(session, params):
    """Accept one tracked change."""
    return settle(session, params, ".uno:AcceptTrackedChange")


def reject(session, params):
    """Reject one tracked change."""
    return settle(session, params, ".uno:RejectTrackedChange")


def settle_all(session, command):
    """Accept or reject every tracked change by an office command."""
    count = len(changes_of(session.document))
    if count:
        session.dispatch(command)
    session.changes = [None] * len(session.changes)
    left = len(changes_of(session.document))
    if left:
        raise Refused(f"LibreOffice left {left} tracked changes")
    return {"settled": count}


def accept_all(session, _params):
    """Accept every tracked change."""
    return settle_all(session, ".uno:AcceptAllTrackedChanges")


def reject_all(session, _params):
    """Reject every tracked change."""
    return settle_all(session, ".uno:RejectAllTrackedChanges")


def insert_row(session, params):
    """Insert a table row."""
    table = table_of(session.document, params["table"])
    rows = table.getRows()
    row = params["row"]
    if row > rows.getCount():
        raise Refused(f"table {params['table']} has {rows.getCount()} rows, not {row}")
    at = row - 1 if params.get("before", False) else row
    rows.insertByIndex(at, 1)
    texts = params.get("cells", [])
    columns = table.getColumns().getCount()
    if len(texts) > columns:
        raise Refused(f"table {params['table']} has {columns} columns, not {len(texts)}")
    for column, value in enumerate(texts):
        table.getCellByPosition(column, at).setString(value)
    return {}


def delete_row(session, params):
    """Delete a table row."""
    table = table_of(session.document, params["table"])
    rows = table.getRows()
    row = params["row"]
    if row > rows.getCount():
        raise Refused(f"table {params['table']} has {rows.getCount()} rows, not {row}")
    if rows.getCount() == 1:
        raise Refused(f"table {params['table']} has only one row; delete the table instead")
    rows.removeByIndex(row - 1, 1)
    return {}


def set_cell(session, params):
    """Set a cell's text."""
    table = table_of(session.document, params["table"])
    try:
        cell = table.getCellByPosition(params["column"] - 1, params["row"] - 1)
    except Exception:
        cell = None
    if cell is None:
        raise Refused(
            f"table {params['table']} has no cell at row {params['row']}, column {params['column']}"
        )
    cell.setString(params["text"])
    return {}


def update_fields(session, _params):
    """Update every field."""
    session.document.getTextFields().refresh()
    return {}


def update_toc(session, _params):
    """Update every index."""
    indexes = session.document.getDocumentIndexes()
    if not indexes.getCount():
        raise Refused("the document has no table of contents or index")
    for index in range(indexes.getCount()):
        indexes.getByIndex(index).update()
    return {"updated": indexes.getCount()}


COMMANDS = {
    "text.replaceAll": replace_all,
    "text.replace": replace_one,
    "text.setBold": set_bold,
    "text.setItalic": set_italic,
    "paragraph.insertBefore": insert_before,
    "paragraph.insertAfter": insert_after,
    "paragraph.append": append,
    "paragraph.setText": set_text,
    "paragraph.setStyle": set_style,
    "paragraph.delete": delete,
    "page.insertBreak": page_break,
    "comment.add": add_comment,
    "comment.reply": reply,
    "comment.resolve": resolve,
    "comment.delete": delete_comment,
    "changes.track": track,
    "changes.accept": accept,
    "changes.reject": reject,
    "changes.acceptAll": accept_all,
    "changes.rejectAll": reject_all,
    "table.insertRow": insert_row,
    "table.deleteRow": delete_row,
    "table.setCell": set_cell,
    "fields.update": update_fields,
    "toc.update": update_toc,
}
"""What runs each command of the adapter's catalog."""


# ─── jobs ─────────────────────────────────────────────────────────────────────


def run(job, directory):
    """Do the job; return its result."""
    context, desktop = start(job, directory)
    source = os.path.join(directory, job["source"])
    document = load(desktop, source)
    if job["op"] == "inspect":
        return inspect(document)
    if job["op"] == "pdf":
        count = pages(document)
        document.storeToURL(
            url(os.path.join(directory, "out.pdf")), (prop("FilterName", "writer_pdf_Export"),)
        )
        return {"pages": count}
    session = Session(context, document, job["author"])
    results = []
    for index, step in enumerate(job["commands"]):
        try:
            results.append(COMMANDS[step["command"]](session, step.get("params", {})))
        except Refused as refusal:
            raise Refused(f"command {index} (`{step['command']}`): {refusal}") from None
        except Exception as error:
            raise Refused(
                f"command {index} (`{step['command']}`): LibreOffice failed: {message(error)}"
            ) from None
    saved = os.path.join(directory, "out.docx")
    document.storeToURL(url(saved), (prop("FilterName", "MS Word 2007 XML"),))
    document.close(True)
    result = inspect(load(desktop, saved))
    result["results"] = results
    return result


def main():
    """Run the job in the directory named on the command line; print one JSON line."""
    directory = sys.argv[1]
    with open(os.path.join(directory, "job.json")) as spec:
        job = json.load(spec)
    try:
        reply_ = {"ok": True, "result": run(job, directory)}
    except Refused as refusal:
        reply_ = {"ok": False, "kind": "refused", "reason": str(refusal)}
    except Exception as error:
        traceback.print_exc()
        reply_ = {"ok": False, "kind": "crashed", "reason": message(error)}
    sys.stdout.write(json.dumps(reply_) + "\n")
    sys.stdout.flush()
    # The adapter kills the process group as soon as it reads the line: no office outlives it.
    os._exit(0)


if __name__ == "__main__":
    main()
