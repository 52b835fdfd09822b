"""The apply job on a workbook: run a batch of Calc commands, recalculate, save ``out.xlsx``.

Every command runs in order; the workbook is recalculated (``calculateAll``) and saved only if
each succeeds, then read back as the inspect job reads it. Formulas are written in Excel's
syntax with English function names (``=IF(B2>1,"high","low")``); the adapter (``_calc.py``) has
refused any that reaches outside the file before this runs. Here is checked what only the
workbook can tell (is there such a sheet, is the cell inside it).
"""

import os

import uno
from calc_inspect import (
    FILTER,
    cell_address,
    cell_position,
    column_index,
    column_name,
    formulas,
    inspect,
    load,
    quoted,
    range_of,
    sheet_named,
    sheets,
    split_reference,
)
from desktop import Refused, source, store
from kinds import run_batch

BOLD, NORMAL_WEIGHT = 150.0, 100.0
"""com.sun.star.awt.FontWeight.BOLD and NORMAL."""

CONTENTS = 1 | 2 | 4 | 16
"""com.sun.star.sheet.CellFlags VALUE, DATETIME, STRING and FORMULA: what a clear removes."""

UNKNOWN_NAME = 525
"""The error of a formula naming a function or a name the office doesn't know (``#NAME?``)."""

MAX_ROWS, MAX_COLUMNS = 1_048_576, 16_384
"""The most rows and columns a sheet has in an .xlsx."""


class Workbook:
    """A batch's state: the workbook and its formula parser."""

    def __init__(self, document):
        self.document = document
        self.parser = formulas(document)


def sheet_index(book, sheet):
    """Return a sheet's index in the workbook."""
    names = [each.getName() for each in sheets(book.document)]
    return names.index(sheet.getName())


def put(book, sheet, column, row, value):
    """Set one cell: a formula (a string from ``=``), a number, a boolean, a text, or nothing."""
    cell = sheet.getCellByPosition(column, row)
    if value is None:
        sheet.getCellRangeByPosition(column, row, column, row).clearContents(CONTENTS)
    elif isinstance(value, bool):
        cell.setValue(1.0 if value else 0.0)
    elif isinstance(value, (int, float)):
        cell.setValue(float(value))
    elif value.startswith("=") and len(value) > 1:
        at = cell_address(sheet_index(book, sheet), column, row)
        cell.setTokens(book.parser.parseFormula(value, at))
        error = cell.getError()
        if 501 <= error <= 510 or error == UNKNOWN_NAME:
            raise Refused(
                f"the formula `{value}` can't be read (error {error}): write it in Excel's "
                "syntax, with English function names, commas between arguments and names the "
                "workbook defines"
            )
    else:
        cell.setString(value)


def set_cell(book, params):
    """Set a cell's value or formula."""
    sheet, _, (column, row) = range_of(book.document, params["cell"])
    put(book, sheet, column, row, params["value"])
    return {}


def write_range(book, params):
    """Write rows of values from a cell down and right."""
    sheet, _, (left, top) = range_of(book.document, params["cell"])
    rows = params["rows"]
    width = max((len(row) for row in rows), default=0)
    if top + len(rows) > MAX_ROWS or left + width > MAX_COLUMNS:
        raise Refused("the rows run past the sheet's last row or column")
    for down, row in enumerate(rows):
        for right, value in enumerate(row):
            put(book, sheet, left + right, top + down, value)
    return {"cells": sum(len(row) for row in rows)}


def clear_range(book, params):
    """Clear a range's values and formulas, keeping its formats."""
    _, cells, _ = range_of(book.document, params["range"])
    cells.clearContents(CONTENTS)
    return {}


def sheet_of(book, params):
    """Return the sheet a command names (``sheet``), or the first."""
    if "sheet" in params:
        return sheet_named(book.document, params["sheet"])
    return sheets(book.document)[0]


def insert_rows(book, params):
    """Insert rows before a row."""
    sheet = sheet_of(book, params)
    sheet.getRows().insertByIndex(params["row"] - 1, params.get("count", 1))
    return {}


def delete_rows(book, params):
    """Delete rows from a row."""
    sheet = sheet_of(book, params)
    sheet.getRows().removeByIndex(params["row"] - 1, params.get("count", 1))
    return {}


def column_of(params):
    """Return the index of the column a command names by its letters, or refuse."""
    letters = params["column"].strip().upper()
    if not letters.isalpha() or len(letters) > 3 or column_index(letters) >= MAX_COLUMNS:
        raise Refused(f"`{params['column']}` is not a column (write it as C, or AB)")
    return column_index(letters)


def insert_columns(book, params):
    """Insert columns before a column."""
    sheet = sheet_of(book, params)
    sheet.getColumns().insertByIndex(column_of(params), params.get("count", 1))
    return {}


def delete_columns(book, params):
    """Delete columns from a column."""
    sheet = sheet_of(book, params)
    sheet.getColumns().removeByIndex(column_of(params), params.get("count", 1))
    return {}


def free_name(book, name):
    """Refuse a sheet's name the workbook has already, or one Excel forbids."""
    if any(char in name for char in "[]:*?/\\") or len(name) > 31 or name.startswith("'"):
        raise Refused(f"`{name}` can't name a sheet (at most 31 characters, none of []:*?/\\)")
    if any(sheet.getName().casefold() == name.casefold() for sheet in sheets(book.document)):
        raise Refused(f"the workbook has a sheet `{name}` already")


def position_of(book, params):
    """Return where a new sheet goes: ``position`` (from 1), or last."""
    count = len(sheets(book.document))
    return min(params.get("position", count + 1), count + 1) - 1


def add_sheet(book, params):
    """Add an empty sheet."""
    free_name(book, params["name"])
    book.document.getSheets().insertNewByName(params["name"], position_of(book, params))
    return {}


def rename_sheet(book, params):
    """Rename a sheet."""
    sheet = sheet_named(book.document, params["sheet"])
    free_name(book, params["name"])
    sheet.setName(params["name"])
    return {}


def delete_sheet(book, params):
    """Delete a sheet; never the last one."""
    sheet = sheet_named(book.document, params["sheet"])
    if len(sheets(book.document)) == 1:
        raise Refused("a workbook keeps at least one sheet")
    book.document.getSheets().removeByName(sheet.getName())
    return {}


def copy_sheet(book, params):
    """Copy a sheet, under a new name."""
    sheet = sheet_named(book.document, params["sheet"])
    free_name(book, params["name"])
    book.document.getSheets().copyByName(sheet.getName(), params["name"], position_of(book, params))
    return {}


def number_format(book, params):
    """Set a range's number format (``0.00``, ``#,##0``, ``0%``, ``yyyy-mm-dd``)."""
    _, cells, _ = range_of(book.document, params["range"])
    formats = book.document.getNumberFormats()
    locale = uno.createUnoStruct("com.sun.star.lang.Locale")
    key = formats.queryKey(params["format"], locale, False)
    if key < 0:
        try:
            key = formats.addNew(params["format"], locale)
        except Exception:
            raise Refused(f"`{params['format']}` is not a number format") from None
    cells.NumberFormat = key
    return {}


def set_bold(book, params):
    """Make a range bold, or not."""
    _, cells, _ = range_of(book.document, params["range"])
    cells.CharWeight = BOLD if params.get("value", True) else NORMAL_WEIGHT
    return {}


def define_name(book, params):
    """Define a named range over a range."""
    name = params["name"]
    ranges = book.document.NamedRanges
    if ranges.hasByName(name):
        raise Refused(f"the workbook has a name `{name}` already")
    sheet, _, (left, top) = range_of(book.document, params["range"])
    _, cells = split_reference(params["range"])
    corners = [cell_position(cell.replace("$", "")) for cell in cells.split(":")]
    content = ":".join(f"${column_name(column)}${row + 1}" for column, row in corners)
    content = f"${quoted(sheet.getName())}.{content}"
    at = cell_address(sheet_index(book, sheet), left, top)
    try:
        ranges.addNewByName(name, content, at, 0)
    except Exception:
        raise Refused(
            f"`{name}` can't name a range (a letter first, then letters, digits, _)"
        ) from None
    return {}


def add_comment(book, params):
    """Add a comment on a cell; a cell holds one comment."""
    sheet, _, (column, row) = range_of(book.document, params["cell"])
    annotations = sheet.getAnnotations()
    for index in range(annotations.getCount()):
        at = annotations.getByIndex(index).getPosition()
        if (at.Column, at.Row) == (column, row):
            raise Refused(f"{params['cell']} has a comment already; delete it first")
    annotations.insertNew(cell_address(sheet_index(book, sheet), column, row), params["text"])
    return {}


def delete_comment(book, params):
    """Delete a cell's comment."""
    sheet, _, (column, row) = range_of(book.document, params["cell"])
    annotations = sheet.getAnnotations()
    for index in range(annotations.getCount()):
        at = annotations.getByIndex(index).getPosition()
        if (at.Column, at.Row) == (column, row):
            annotations.removeByIndex(index)
            return {}
    raise Refused(f"{params['cell']} has no comment")


def replace_all(book, params):
    """Replace a text in every cell's text (not formulas), in one sheet or all."""
    chosen = [sheet_of(book, params)] if "sheet" in params else sheets(book.document)
    count = 0
    for sheet in chosen:
        descriptor = sheet.createReplaceDescriptor()
        descriptor.setSearchString(params["find"])
        descriptor.setReplaceString(params["replace"])
        descriptor.SearchCaseSensitive = params.get("matchCase", False)
        count += sheet.replaceAll(descriptor)
    return {"replaced": count}


COMMANDS = {
    "cell.set": set_cell,
    "range.write": write_range,
    "range.clear": clear_range,
    "rows.insert": insert_rows,
    "rows.delete": delete_rows,
    "columns.insert": insert_columns,
    "columns.delete": delete_columns,
    "sheet.add": add_sheet,
    "sheet.rename": rename_sheet,
    "sheet.delete": delete_sheet,
    "sheet.copy": copy_sheet,
    "range.setNumberFormat": number_format,
    "range.setBold": set_bold,
    "name.define": define_name,
    "cell.addComment": add_comment,
    "cell.deleteComment": delete_comment,
    "cells.replaceAll": replace_all,
}
"""What runs each command of the adapter's Calc catalog."""


def run(job, directory, _context, desktop):
    """The apply job: run the batch, recalculate, save ``out.xlsx``, read the saved file back."""
    document = load(desktop, source(job, directory))
    results = run_batch(COMMANDS, Workbook(document), job["commands"])
    document.calculateAll()
    saved = os.path.join(directory, "out.xlsx")
    store(document, saved, FILTER)
    document.close(True)
    result = inspect(load(desktop, saved))
    result["results"] = results
    return result
