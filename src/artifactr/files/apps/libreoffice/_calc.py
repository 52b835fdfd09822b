"""LibreOffice Calc's commands: the catalog an agent reads for a workbook, and its formula check.

Cells and ranges are named as Excel names them (``B4``, ``Budget!B4``, ``'Q1 plan'!A1:C3``; the
first sheet where no sheet is named), sheets by name (any case), rows from 1 and columns by
their letters. A value is a number, a boolean, a text, null (nothing), or a formula: a string
from ``=``, in Excel's syntax with English function names and commas (``=SUM(B2:B3)``). The
driver (``driver/calc_apply.py``) runs them and recalculates the workbook before every save.

:func:`check_formulas` refuses, before any office starts, a formula that reaches outside the
file: ``WEBSERVICE`` (and so ``FILTERXML`` over one), ``DDE``, ``RTD``, a reference to another
workbook (``[Book.xlsx]Sheet1!A1``), or a URL or ``file:`` path anywhere in it (``INDIRECT`` of
one).
"""

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Final

from pydantic import JsonValue

from artifactr.files.apps.libreoffice._catalog import Command, Param
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.errors import AppRefused

_CELL = Param("cell", "text", about="a cell, as Excel names it: B4, or Budget!B4")
_RANGE = Param("range", "text", about="a range: A1:C3, or Budget!A1:C3 (or one cell)")
_SHEET = Param("sheet", "text", False, "the sheet's name (default: the first sheet)")
_NAMED = Param("sheet", "text", about="the sheet's name")
_COUNT = Param("count", "integer", False, "how many (default 1)")
_NEW_NAME = Param("name", "text", about="the sheet's new name (at most 31 characters)")
_POSITION = Param("position", "integer", False, "where it goes, from 1 (default: last)")
_VALUE = Param(
    "value",
    "value",
    about="a number, true or false, a text, null to clear, or a formula from = in Excel's "
    "syntax with English function names (=SUM(B2:B3))",
)

CATALOG: Final[tuple[Command, ...]] = (
    Command("cell.set", "Workbook: set a cell's value or formula", (_CELL, _VALUE)),
    Command(
        "range.write",
        "Workbook: write rows of values (or formulas) from a cell down and to the right",
        (
            Param("cell", "text", about="the top-left cell: A1, or Budget!A1"),
            Param("rows", "rows", about="the rows, each a list of values from the left"),
        ),
    ),
    Command("range.clear", "Workbook: clear a range's values and formulas", (_RANGE,)),
    Command(
        "rows.insert",
        "Workbook: insert rows before a row",
        (_SHEET, Param("row", "integer", about="the row, from 1"), _COUNT),
    ),
    Command(
        "rows.delete",
        "Workbook: delete rows, from a row",
        (_SHEET, Param("row", "integer", about="the first row, from 1"), _COUNT),
    ),
    Command(
        "columns.insert",
        "Workbook: insert columns before a column",
        (_SHEET, Param("column", "text", about="the column's letters: C"), _COUNT),
    ),
    Command(
        "columns.delete",
        "Workbook: delete columns, from a column",
        (_SHEET, Param("column", "text", about="the first column's letters: C"), _COUNT),
    ),
    Command(
        "sheet.add",
        "Workbook: add an empty sheet",
        (Param("name", "text", about="its name (at most 31 characters)"), _POSITION),
    ),
    Command("sheet.rename", "Workbook: rename a sheet", (_NAMED, _NEW_NAME)),
    Command("sheet.delete", "Workbook: delete a sheet", (_NAMED,)),
    Command(
        "sheet.copy",
        "Workbook: copy a sheet under a new name",
        (_NAMED, Param("name", "text", about="the copy's name"), _POSITION),
    ),
    Command(
        "range.setNumberFormat",
        "Workbook: set a range's number format (0.00, #,##0, 0%, yyyy-mm-dd)",
        (_RANGE, Param("format", "text", about="the number format code")),
    ),
    Command(
        "range.setBold",
        "Workbook: make a range bold (or not)",
        (_RANGE, Param("value", "boolean", False, "bold or not (default true)")),
    ),
    Command(
        "name.define",
        "Workbook: define a named range",
        (Param("name", "text", about="the name (a letter first)"), _RANGE),
    ),
    Command(
        "cell.addComment",
        "Workbook: add a comment on a cell",
        (_CELL, Param("text", "text", about="the comment")),
    ),
    Command("cell.deleteComment", "Workbook: delete a cell's comment", (_CELL,)),
    Command(
        "cells.replaceAll",
        "Workbook: replace a text in every cell's text, on one sheet or all",
        (
            Param("find", "text", about="the text to find"),
            Param("replace", "string", about="the new text"),
            Param("sheet", "text", False, "the sheet's name (default: every sheet)"),
            Param("matchCase", "boolean", False, "match case (default false)"),
        ),
    ),
)
"""Every Calc command, in the order :meth:`LibreOffice.commands` lists them."""

COMMANDS: Final[Mapping[str, Command]] = {command.id: command for command in CATALOG}
"""The Calc commands by id."""

_OUTSIDE: Final = (
    (re.compile(r"\bWEBSERVICE\s*\(", re.I), "WEBSERVICE fetches a URL"),
    (re.compile(r"\bDDE\s*\(", re.I), "DDE asks another program for data"),
    (re.compile(r"\bRTD\s*\(", re.I), "RTD asks a real-time data server"),
    (re.compile(r"[a-z][a-z0-9+.-]*://|\bfile:", re.I), "it names a URL or a file outside"),
)
_STRING: Final = re.compile(r'"(?:[^"]|"")*"')
_OTHER_BOOK: Final = re.compile(r"\[[^\]\[]+\][^!\s(),;]*!|\]'?!|'[^']*\[[^']*\][^']*'!")


def formulas(params: Mapping[str, JsonValue]) -> Iterator[str]:
    """Return the formulas a command's parameters write."""
    values: list[JsonValue] = [params.get("value")]
    rows = params.get("rows")
    if isinstance(rows, list):
        values.extend(cell for row in rows if isinstance(row, list) for cell in row)
    return (value for value in values if isinstance(value, str) and value.startswith("="))


def reaches_outside(formula: str) -> str | None:
    """Return why a formula reaches outside the file, or None if it doesn't."""
    for pattern, why in _OUTSIDE:
        if pattern.search(formula):
            return why
    if _OTHER_BOOK.search(_STRING.sub('""', formula)):
        return "it refers to another workbook"
    return None


def check_formulas(commands: Sequence[AppCommand]) -> None:
    """Refuse a batch that writes a formula reaching outside the file, naming the command.

    Raises:
        AppRefused: ``command 0 (`cell.set`): the formula `=WEBSERVICE(...)` reaches outside
            the file: WEBSERVICE fetches a URL``.
    """
    for index, step in enumerate(commands):
        for formula in formulas(step.params):
            why = reaches_outside(formula)
            if why is not None:
                raise AppRefused(
                    f"command {index} (`{step.command}`): the formula `{formula}` reaches "
                    f"outside the file, which is refused: {why}"
                )
