"""Reading a Calc workbook: each sheet's used range, its cells, its comments and printed pages.

``inspect`` returns ``{"outline", "text", "review", "pages"}``. The outline is a line a sheet,
``Budget: A1:B4``. The text is each sheet in order, a ``# Sheet: <name> (<range>)`` line, then a
line a non-empty row: the row's number and its cells from column A, tab-separated, each the
computed value, with ``(=FORMULA)`` after it where the cell has a formula, written in Excel's
syntax with English function names (``1500 (=SUM(B2:B3))``). The review is the cell comments,
each with its author, text and cell (``Budget!A2``), which is its id. Pages are the printed
pages, as the print preview lays them out. The apply job shares what finds a sheet or a cell.
"""

import re

import uno
from desktop import Refused, prop, source
from kinds import export_pdf, load_as

SPREADSHEET = "com.sun.star.sheet.SpreadsheetDocument"
"""The service a workbook's model supports."""

OOXML_LANGUAGE = 5
"""com.sun.star.sheet.FormulaLanguage.OOXML: Excel's English function names and commas."""

XL_OOX = 3
"""com.sun.star.sheet.AddressConvention.XL_OOX: Excel's ``Sheet!A1`` references."""

ALL_GROUPS, SPECIAL = 0x7FFFFFFF, 0
"""com.sun.star.sheet.FormulaMapGroup.ALL_EXCEPT_SPECIAL and SPECIAL."""

CELL = re.compile(r"^\$?([A-Za-z]{1,3})\$?([1-9][0-9]{0,6})$")
"""A cell's address in A1 notation, with or without ``$``."""


FILTER = "Calc MS Excel 2007 XML"
"""A workbook's format, which it is loaded and saved with."""


def load(desktop, path):
    """Load a workbook, or refuse a file that is not one."""
    return load_as(desktop, path, SPREADSHEET, "a spreadsheet", FILTER)


def column_name(index):
    """Return a column's letters from its index from 0 (``0`` is ``A``, ``26`` is ``AA``)."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def column_index(letters):
    """Return a column's index from 0 from its letters."""
    index = 0
    for letter in letters.upper():
        index = index * 26 + ord(letter) - 64
    return index - 1


def address(column, row):
    """Return a cell's address (``B4``) from its column and row, from 0."""
    return f"{column_name(column)}{row + 1}"


def quoted(name):
    """Return a sheet's name as a reference spells it (``'My sheet'`` where it must be)."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return name
    return "'" + name.replace("'", "''") + "'"


def used(sheet):
    """Return the last column and row used, from 0, or None for an empty sheet."""
    cursor = sheet.createCursor()
    cursor.gotoEndOfUsedArea(False)
    end = cursor.getRangeAddress()
    if (end.EndColumn, end.EndRow) == (0, 0) and sheet.getCellByPosition(
        0, 0
    ).getType().value == "EMPTY":
        return None
    return end.EndColumn, end.EndRow


def used_range(sheet):
    """Return the sheet's used range from A1 (``A1:B4``), or ``empty``."""
    end = used(sheet)
    if end is None:
        return "empty"
    return f"A1:{address(*end)}"


def sheets(document):
    """Return the workbook's sheets, in order."""
    container = document.getSheets()
    return [container.getByIndex(index) for index in range(container.getCount())]


def sheet_named(document, name):
    """Return the sheet of this name (any case), or refuse, naming the sheets there are."""
    for sheet in sheets(document):
        if sheet.getName().casefold() == name.casefold():
            return sheet
    known = ", ".join(f"`{sheet.getName()}`" for sheet in sheets(document))
    raise Refused(f"no sheet `{name}`; the sheets are: {known}")


def split_reference(reference):
    """Return the sheet's name (or None) and the cells of ``Sheet!B4`` or ``'My sheet'!A1:B2``."""
    match = re.fullmatch(r"(?:'((?:[^']|'')+)'|([^!']+))!(.+)", reference.strip())
    if match is None:
        return None, reference.strip()
    name = match.group(1).replace("''", "'") if match.group(1) else match.group(2)
    return name, match.group(3)


def cell_position(cells):
    """Return the column and row, from 0, of ``B4``, or refuse."""
    match = CELL.match(cells)
    if match is None:
        raise Refused(f"`{cells}` is not a cell (write it as B4, or Sheet1!B4)")
    return column_index(match.group(1)), int(match.group(2)) - 1


def range_of(document, reference):
    """Return the sheet and the range (a cell, or ``A1:C3``) a reference names."""
    name, cells = split_reference(reference)
    sheet = sheet_named(document, name) if name is not None else sheets(document)[0]
    parts = cells.split(":")
    if len(parts) > 2:
        raise Refused(f"`{reference}` is not a cell or a range (write B4, or A1:C3)")
    start = cell_position(parts[0])
    end = cell_position(parts[-1])
    left, right = sorted((start[0], end[0]))
    top, bottom = sorted((start[1], end[1]))
    try:
        return sheet, sheet.getCellRangeByPosition(left, top, right, bottom), (left, top)
    except Exception:
        raise Refused(f"`{reference}` is outside the sheet") from None


def formulas(document):
    """Return a parser that reads and writes formulas in Excel's syntax, English names."""
    mapper = document.createInstance("com.sun.star.sheet.FormulaOpCodeMapper")
    parser = document.createInstance("com.sun.star.sheet.FormulaParser")
    parser.OpCodeMap = tuple(mapper.getAvailableMappings(OOXML_LANGUAGE, SPECIAL)) + tuple(
        mapper.getAvailableMappings(OOXML_LANGUAGE, ALL_GROUPS)
    )
    parser.FormulaConvention = XL_OOX
    return parser


def shown(value):
    """Return a computed value as the text shows it: a whole number without ``.0``."""
    if value is None:
        return ""
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return repr(value)
    return " ".join(str(value).split())


def cell_address(sheet_index, column, row):
    """Return a com.sun.star.table.CellAddress."""
    position = uno.createUnoStruct("com.sun.star.table.CellAddress")
    position.Sheet = sheet_index
    position.Column = column
    position.Row = row
    return position


def sheet_text(sheet, sheet_index, parser, lines):
    """Append a sheet's heading and non-empty rows to ``lines``."""
    lines.append(f"# Sheet: {sheet.getName()} ({used_range(sheet)})")
    end = used(sheet)
    if end is None:
        return
    cells = sheet.getCellRangeByPosition(0, 0, end[0], end[1])
    values = cells.getDataArray()
    written = cells.getFormulaArray()
    for row, (row_values, row_formulas) in enumerate(zip(values, written, strict=True)):
        shown_cells = []
        for column, (value, formula) in enumerate(zip(row_values, row_formulas, strict=True)):
            text = shown(value)
            if isinstance(formula, str) and formula.startswith("=") and len(formula) > 1:
                cell = sheet.getCellByPosition(column, row)
                at = cell_address(sheet_index, column, row)
                excel = parser.printFormula(cell.getTokens(), at)
                text = f"{text} (={excel})" if text else f"(={excel})"
            shown_cells.append(text)
        while shown_cells and not shown_cells[-1]:
            shown_cells.pop()
        if shown_cells:
            lines.append("\t".join([str(row + 1), *shown_cells]))


def comments_of(document):
    """Return every cell comment, sheet by sheet, with its cell as its id."""
    items = []
    for sheet in sheets(document):
        annotations = sheet.getAnnotations()
        for index in range(annotations.getCount()):
            note = annotations.getByIndex(index)
            at = note.getPosition()
            cell = f"{quoted(sheet.getName())}!{address(at.Column, at.Row)}"
            items.append(
                {
                    "kind": "comment",
                    "id": cell,
                    "author": note.getAuthor() or None,
                    "date": note.getDate() or None,
                    "text": note.getString(),
                    "anchor": cell,
                }
            )
    return items


def pages(document):
    """Return how many pages the workbook prints on."""
    return document.getRendererCount(document, (prop("IsPrinter", True),))


def inspect(document):
    """Return the workbook's outline, text, comments and printed pages."""
    parser = formulas(document)
    lines = []
    outline = []
    for index, sheet in enumerate(sheets(document)):
        outline.append(f"{sheet.getName()}: {used_range(sheet)}")
        sheet_text(sheet, index, parser, lines)
    return {
        "outline": "\n".join(outline),
        "text": "\n".join(lines),
        "review": comments_of(document),
        "pages": pages(document),
    }


def run(job, directory, _context, desktop):
    """The inspect job."""
    return inspect(load(desktop, source(job, directory)))


def pdf(job, directory, _context, desktop):
    """The pdf job: export ``out.pdf`` as the print preview lays the pages out."""
    return export_pdf(load(desktop, source(job, directory)), directory, "calc_pdf_Export")
