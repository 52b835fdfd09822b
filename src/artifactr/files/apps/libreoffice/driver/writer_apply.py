"""The apply job: run a batch of commands on a Writer document and save it as ``out.docx``.

Every command runs in order; the file is saved only if each succeeds, then the saved file and
the document still open are read as the inspect job reads its file (no second load, and no
second export where ``docx_read.py`` reads the saved file). A command the document can't do
refuses the whole batch, its reason naming the command's index. The commands and their
parameters are checked by the adapter (``_catalog.py``) before this runs; here is checked what
only the document can tell (is there such a heading, table or change).
"""

import difflib
import os
import time

import uno
from desktop import Refused, each, load, message, source, store
from writer_inspect import changes_of, comments_of, inspect, is_table, level, visible

PARAGRAPH_BREAK = 0
"""com.sun.star.text.ControlCharacter.PARAGRAPH_BREAK."""

BOLD, NORMAL_WEIGHT = 150.0, 100.0
"""com.sun.star.awt.FontWeight.BOLD and NORMAL."""

STYLE_ALIASES = {"body": "Standard", "normal": "Standard", "default": "Standard"}
"""Names an agent may give for the document's default paragraph style."""


def paragraphs(document):
    """Return the body's top-level elements: paragraphs and tables, in order."""
    return each(document.getText())


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


def style_of(document, name: str) -> str:
    """Return the paragraph style's internal name for a name an agent gives."""
    wanted = STYLE_ALIASES.get(name.strip().lower(), name.strip())
    styles = document.getStyleFamilies().getByName("ParagraphStyles")
    if styles.hasByName(wanted):
        return wanted
    folded = wanted.casefold().replace(" ", "")
    names = styles.getElementNames()
    shown_names = []
    for internal in names:
        shown = styles.getByName(internal).DisplayName
        if folded in (internal.casefold().replace(" ", ""), shown.casefold().replace(" ", "")):
            return internal
        shown_names.append(shown)
    nearest = difflib.get_close_matches(name.strip(), shown_names, 3, 0.5)
    raise Refused(
        f"no paragraph style `{name}`"
        + (f"; the nearest the document has: {', '.join(nearest)}" if nearest else "")
    )


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


BY_ID = ("changes.accept", "changes.reject")
"""The commands that name a tracked change by its id."""


class Batch:
    """One batch's state: the document, the office, and who acts."""

    def __init__(self, context, document, author, commands=()):
        self.context = context
        self.document = document
        self.author = author
        self.dispatcher = context.ServiceManager.createInstanceWithContext(
            "com.sun.star.frame.DispatchHelper", context
        )
        # Ids are those of the document as loaded, whatever the batch adds or removes before;
        # the comments are read on first use, as finding them reads every paragraph, and the
        # tracked changes only for a batch that names one by its id (read before its first
        # command, as loaded): no other batch pays for walking them.
        self.found = None
        named = any(step["command"] in BY_ID for step in commands)
        self.changes = changes_of(document) if named else []

    @property
    def comments(self):
        """The document's comments as loaded, then as the batch changed them."""
        if self.found is None:
            self.found = comments_of(self.document)
        return self.found

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


def replace_all(batch, params):
    """Replace every match."""
    search = batch.document.createReplaceDescriptor()
    search.SearchString = params["find"]
    search.ReplaceString = params["replace"]
    search.SearchCaseSensitive = params.get("matchCase", False)
    search.SearchRegularExpression = False
    count = batch.document.replaceAll(search)
    if not count:
        raise Refused(f"not found: `{params['find']}`")
    return {"replaced": count}


def replace_one(batch, params):
    """Replace the nth match."""
    case = params.get("matchCase", False)
    (match,) = nth(batch.document, params["find"], params.get("occurrence", 1), case)
    match.setString(params["replace"])
    return {"replaced": 1}


def set_bold(batch, params):
    """Make matches bold, or not."""
    weight = BOLD if params.get("value", True) else NORMAL_WEIGHT
    matches = nth(batch.document, params["find"], params.get("occurrence"))
    for match in matches:
        match.CharWeight = weight
    return {"changed": len(matches)}


def set_italic(batch, params):
    """Make matches italic, or not."""
    posture = "ITALIC" if params.get("value", True) else "NONE"
    slant = uno.Enum("com.sun.star.awt.FontSlant", posture)
    matches = nth(batch.document, params["find"], params.get("occurrence"))
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


def insert_after(batch, params):
    """Insert a paragraph after the one found."""
    body, index = target(batch.document, params)
    paragraph = body[index]
    style = new_style(batch.document, params, paragraph)
    text = paragraph.getText()
    cursor = text.createTextCursorByRange(paragraph.getEnd())
    text.insertControlCharacter(cursor, PARAGRAPH_BREAK, False)
    cursor.ParaStyleName = style
    cursor.BreakType = uno.Enum("com.sun.star.style.BreakType", "NONE")
    text.insertString(cursor, params["text"], False)
    return {"style": style}


def insert_before(batch, params):
    """Insert a paragraph before the one found."""
    body, index = target(batch.document, params)
    paragraph = body[index]
    style = new_style(batch.document, params, paragraph)
    text = paragraph.getText()
    cursor = text.createTextCursorByRange(paragraph.getStart())
    text.insertControlCharacter(cursor, PARAGRAPH_BREAK, False)
    cursor.gotoPreviousParagraph(False)
    cursor.ParaStyleName = style
    text.insertString(cursor, params["text"], False)
    return {"style": style}


def last_paragraph(document):
    """Return the body's last paragraph, reached from its end: no walk over the body.

    The range at the body's end reads its paragraph's properties (its style, its outline level);
    a body that ends in a table (a .docx may) has no last paragraph: None. (A cursor made
    there, inside the table, would leave the office unable to add a paragraph after it.)
    """
    end = document.getText().getEnd()
    return None if end.TextTable else end


def append(batch, params):
    """Add a paragraph at the end, in the last paragraph's body style (found from the end)."""
    style = new_style(batch.document, params, last_paragraph(batch.document))
    text = batch.document.getText()
    # finishParagraph adds a paragraph after the last, leaving what is anchored to it in place.
    text.finishParagraph(())
    cursor = text.createTextCursorByRange(text.getEnd())
    cursor.ParaStyleName = style
    text.insertString(cursor, params["text"], False)
    return {"style": style}


def set_text(batch, params):
    """Replace a paragraph's text."""
    body, index = target(batch.document, params)
    paragraph = body[index]
    cursor = paragraph.getText().createTextCursorByRange(paragraph.getStart())
    cursor.gotoRange(paragraph.getEnd(), True)
    cursor.setString(params["text"])
    return {}


def set_style(batch, params):
    """Set a paragraph's style."""
    body, index = target(batch.document, params)
    style = style_of(batch.document, params["style"])
    body[index].ParaStyleName = style
    return {"style": style}


def delete(batch, params):
    """Delete a paragraph, its mark too."""
    body, index = target(batch.document, params)
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


def page_break(batch, params):
    """Start a page before a paragraph."""
    body, index = target(batch.document, params)
    body[index].BreakType = uno.Enum("com.sun.star.style.BreakType", "PAGE_BEFORE")
    return {}


def annotate(batch, anchor, text):
    """Put a comment by the batch's author on a range."""
    known = batch.comments  # read before this one is added
    field = batch.document.createInstance("com.sun.star.text.textfield.Annotation")
    field.Author = batch.author
    field.Initials = "".join(word[0] for word in batch.author.split())[:4].upper()
    field.Content = text
    field.DateTimeValue = batch.now()
    text = anchor.getText()
    cursor = text.createTextCursorByRange(anchor.getStart())
    cursor.gotoRange(anchor.getEnd(), True)
    text.insertTextContent(cursor, field, True)
    known.append(field)


def add_comment(batch, params):
    """Comment on the nth match."""
    (match,) = nth(batch.document, params["anchor"], params.get("occurrence", 1))
    annotate(batch, match, params["text"])
    return {}


def reply(batch, params):
    """Comment again on a comment's text."""
    comment = by_id(batch.comments, params["id"], "comment")
    annotate(batch, comment.getAnchor(), params["text"])
    return {}


def resolve(batch, params):
    """Mark a comment resolved, or not."""
    comment = by_id(batch.comments, params["id"], "comment")
    comment.Resolved = params.get("value", True)
    return {}


def delete_comment(batch, params):
    """Delete a comment."""
    comment = by_id(batch.comments, params["id"], "comment")
    # Word never tracks removing a comment; LibreOffice would record it as a deletion.
    tracking = batch.document.RecordChanges
    batch.document.RecordChanges = False
    try:
        comment.getAnchor().getText().removeTextContent(comment)
    finally:
        batch.document.RecordChanges = tracking
    batch.comments[batch.comments.index(comment)] = None
    return {}


def track(batch, params):
    """Track changes on or off."""
    batch.document.RecordChanges = params["value"]
    return {"value": params["value"]}


def settle(batch, params, command):
    """Accept or reject one tracked change, selected, by an office command."""
    change = by_id(batch.changes, params["id"], "tracked change")
    before = len(changes_of(batch.document))
    start, end = change.RedlineStart, change.RedlineEnd
    cursor = start.getText().createTextCursorByRange(start)
    cursor.gotoRange(end, True)
    batch.document.getCurrentController().select(cursor)
    batch.dispatch(command)
    batch.changes[batch.changes.index(change)] = None
    if len(changes_of(batch.document)) >= before:
        raise Refused(f"LibreOffice did not settle tracked change `{params['id']}`")
    return {}


def accept(batch, params):
    """Accept one tracked change."""
    return settle(batch, params, ".uno:AcceptTrackedChange")


def reject(batch, params):
    """Reject one tracked change."""
    return settle(batch, params, ".uno:RejectTrackedChange")


def settle_all(batch, command):
    """Accept or reject every tracked change by an office command."""
    count = len(changes_of(batch.document))
    if count:
        batch.dispatch(command)
    batch.changes = [None] * len(batch.changes)
    left = len(changes_of(batch.document))
    if left:
        raise Refused(f"LibreOffice left {left} tracked changes")
    return {"settled": count}


def accept_all(batch, _params):
    """Accept every tracked change."""
    return settle_all(batch, ".uno:AcceptAllTrackedChanges")


def reject_all(batch, _params):
    """Reject every tracked change."""
    return settle_all(batch, ".uno:RejectAllTrackedChanges")


def insert_row(batch, params):
    """Insert a table row."""
    table = table_of(batch.document, params["table"])
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


def delete_row(batch, params):
    """Delete a table row."""
    table = table_of(batch.document, params["table"])
    rows = table.getRows()
    row = params["row"]
    if row > rows.getCount():
        raise Refused(f"table {params['table']} has {rows.getCount()} rows, not {row}")
    if rows.getCount() == 1:
        raise Refused(f"table {params['table']} has only one row; delete the table instead")
    rows.removeByIndex(row - 1, 1)
    return {}


def set_cell(batch, params):
    """Set a cell's text."""
    table = table_of(batch.document, params["table"])
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


def update_fields(batch, _params):
    """Update every field."""
    batch.document.getTextFields().refresh()
    return {}


def update_toc(batch, _params):
    """Update every index."""
    indexes = batch.document.getDocumentIndexes()
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


def run(job, directory, context, desktop):
    """The apply job: run the batch, save ``out.docx``, and read the saved file back."""
    document = load(desktop, source(job, directory))
    batch = Batch(context, document, job["author"], job["commands"])
    results = []
    for index, step in enumerate(job["commands"]):
        try:
            results.append(COMMANDS[step["command"]](batch, step.get("params", {})))
        except Refused as refusal:
            raise Refused(f"command {index} (`{step['command']}`): {refusal}") from None
        except Exception as error:
            raise Refused(
                f"command {index} (`{step['command']}`): LibreOffice failed: {message(error)}"
            ) from None
    saved = os.path.join(directory, "out.docx")
    store(document, saved, "MS Word 2007 XML")
    result = inspect(document, directory, saved)
    result["results"] = results
    return result
