"""A workbook's and a deck's commands: listed, checked and refused before any office starts.

The adapter here has an office that isn't there: a batch that got as far as starting it would
fail as crashed, so a refusal proves the check came first.
"""

import json

import pytest

from artifactr.files import AppCommand
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.apps.libreoffice._calc import reaches_outside
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTooLarge
from artifactr.files.core.fingerprint import fingerprint
from tests import hostile
from tests.documents import build_docx
from tests.sheets import XLSX_MAIN, build_pptx, build_xlsx, with_main_type, with_vba

NOWHERE = "/nonexistent/soffice"


def one_paragraph() -> bytes:
    return build_docx(("Hello",))


def command(which: str, /, **params: object) -> AppCommand:
    return AppCommand.model_validate({"command": which, "params": params})


async def test_the_workbook_and_deck_commands_are_listed_with_labels_and_schemas() -> None:
    specs = await LibreOffice().commands()
    ids = [spec.id for spec in specs]
    assert {"cell.set", "range.write", "sheet.copy", "name.define", "cells.replaceAll"} <= set(ids)
    assert {"slide.insert", "slide.move", "slide.setNotes", "slide.addComment"} <= set(ids)
    assert len(ids) == len(set(ids))
    cell = json.loads(next(spec for spec in specs if spec.id == "cell.set").params)
    assert cell["properties"]["value"]["type"] == ["string", "number", "boolean", "null"]
    assert cell["required"] == ["cell", "value"]
    rows = json.loads(next(spec for spec in specs if spec.id == "range.write").params)
    assert rows["properties"]["rows"]["type"] == "array"
    decks = await LibreOffice().commands("deck:")
    assert [spec.id for spec in decks][:2] == ["slide.insert", "slide.duplicate"]


@pytest.mark.parametrize(
    ("source", "steps", "reason"),
    [
        (
            build_xlsx,
            [command("text.replaceAll", find="a", replace="b")],
            "a command for a Word document \\(.docx\\), and the file is an Excel workbook",
        ),
        (
            build_docx_one := (lambda: build_docx(("Hello",))),
            [command("cell.set", cell="A1", value=1)],
            "a command for an Excel workbook \\(.xlsx\\), and the file is a Word document",
        ),
        (build_pptx, [command("sheet.add", name="x")], "the file is a PowerPoint presentation"),
        (build_xlsx, [command("cell.sett", cell="A1", value=1)], "unknown command"),
        (build_xlsx, [command("cell.set", cell="A1", value=[1])], "`value` must be a string"),
        (build_xlsx, [command("range.write", cell="A1", rows=[1, 2])], "must be a list of rows"),
        (
            build_xlsx,
            [command("range.write", cell="A1", rows=[[{"a": 1}]])],
            "`rows` must be a string",
        ),
        (
            build_xlsx,
            [command("range.write", cell="A1", rows=[[0] * 100_001])],
            "more than 100000 cells",
        ),
        (
            build_xlsx,
            [command("cell.set", cell="A1", value=float("inf"))],
            "must be a finite number",
        ),
        (build_pptx, [command("slide.move", slide=0, to=1)], "`slide` must be a whole number"),
        (
            build_xlsx,
            [command("cell.set", cell="B1", value='=WEBSERVICE("http://example.com")')],
            "reaches outside the file, which is refused: WEBSERVICE",
        ),
        (
            build_xlsx,
            [command("range.write", cell="A1", rows=[["ok", '=DDE("a","b","c")']])],
            "DDE asks another program",
        ),
        (
            build_xlsx,
            [command("cell.set", cell="B1", value="=[Other.xlsx]Sheet1!A1")],
            "another workbook",
        ),
        (
            build_xlsx,
            [
                command(
                    "cell.set", cell="B1", value="=INDIRECT(\"'file:///etc/passwd'#$Sheet1.A1\")"
                )
            ],
            "a URL or a file",
        ),
    ],
)
async def test_a_bad_batch_is_refused_before_any_office_starts(
    source: object, steps: list[AppCommand], reason: str
) -> None:
    assert callable(source)
    with pytest.raises(AppRefused, match=reason):
        await LibreOffice(soffice=NOWHERE).apply(source(), steps)


def test_formulas_inside_the_file_are_not_taken_for_outside() -> None:
    assert reaches_outside("=SUM(Table1[Cost])") is None
    assert reaches_outside('=CONCATENATE("[a]b!", A1)') is None
    assert reaches_outside("='C:\\data\\[Book.xlsx]Sheet1'!A1") == "it refers to another workbook"
    assert reaches_outside('=RTD("x",,"y")') == "RTD asks a real-time data server"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (with_vba(build_xlsx()), "holds macros"),
        (
            with_main_type(
                build_xlsx(), XLSX_MAIN, "application/vnd.ms-excel.sheet.macroEnabled.main+xml"
            ),
            ".xlsm",
        ),
        (hostile.compound("Workbook"), ".xls"),
    ],
)
async def test_a_macro_enabled_or_binary_file_is_refused_by_name(data: bytes, reason: str) -> None:
    office = LibreOffice(soffice=NOWHERE)
    for call in (office.inspect(data), office.apply(data, [])):
        with pytest.raises(AppRefused, match=reason):
            await call


async def test_a_screened_file_is_read_for_its_format_only() -> None:
    office = LibreOffice(soffice=NOWHERE)
    workbook = build_xlsx()
    printed = fingerprint(workbook)
    with pytest.raises(AppRefused, match="a command for a Word document"):
        await office.apply(workbook, [command("paragraph.append", text="x")], screened=printed)
    with pytest.raises(AppCrashed):
        await office.inspect(workbook, screened=printed)
    with pytest.raises(AppRefused, match=r"not a \.docx, \.xlsx or \.pptx"):
        await office.inspect(b"not a zip", screened="0" * 64)
    macro = with_main_type(
        workbook, XLSX_MAIN, "application/vnd.ms-excel.sheet.macroEnabled.main+xml"
    )
    with pytest.raises(AppRefused, match="macro-enabled"):
        await office.apply(macro, [], screened="0" * 64)
    with pytest.raises(AppTooLarge):
        await office.inspect(
            hostile.build([hostile.deflated("[Content_Types].xml", bytes(300 * 1024 * 1024))])
        )
