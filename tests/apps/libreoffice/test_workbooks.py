"""Workbooks on the real LibreOffice Calc: read, edited by commands, recalculated, rendered."""

import asyncio
import io
import subprocess
from pathlib import Path

import openpyxl
import pytest

from artifactr.files import AppCommand
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.core.errors import AppRefused
from artifactr.files.core.fingerprint import fingerprint
from tests.apps.libreoffice.test_app import SLOW, Listener, size
from tests.sheets import build_xlsx, linking_workbook

pytestmark = pytest.mark.timeout(240)

A4 = (794, 1123)
"""An A4 page at 96 dpi: Calc's default paper."""


def command(which: str, /, **params: object) -> AppCommand:
    return AppCommand.model_validate({"command": which, "params": params})


def reread(content: bytes, values: bool = False) -> openpyxl.Workbook:
    return openpyxl.load_workbook(io.BytesIO(content), data_only=values)


async def test_inspect_reads_sheets_used_ranges_values_formulas_comments_and_pages(
    office: LibreOffice,
) -> None:
    found = await office.inspect(build_xlsx())
    assert found.outline == "Budget: A1:B4\nNotes: A1:A1"
    assert found.text.splitlines() == [
        "# Sheet: Budget (A1:B4)",
        "1\tItem\tCost",
        "2\tRent\t1200",
        "3\tFood\t300",
        "4\tTotal\t1500 (=SUM(B2:B3))",
        "# Sheet: Notes (A1:A1)",
        "1\tReviewed by the board",
    ]
    [comment] = found.review
    assert (comment.id, comment.anchor, comment.text) == (
        "Budget!A2",
        "Budget!A2",
        "Due on the first",
    )
    assert found.pages == 2
    assert found.about.app == "libreoffice"


async def test_a_batch_sets_values_and_formulas_and_every_save_recalculates(
    office: LibreOffice,
) -> None:
    edited = await office.apply(
        build_xlsx(),
        [
            command("cell.set", cell="B3", value=450),
            command("cell.set", cell="Budget!C4", value='=IF(B4>1000,"high","low")'),
            command("sheet.add", name="Plan", position=1),
            command("range.write", cell="Plan!A1", rows=[["a", 1.5, True], ["b", "=B1*2", None]]),
            command("name.define", name="Costs", range="Budget!B2:B3"),
            command("cell.set", cell="Plan!D1", value="=SUM(Costs)"),
        ],
        author="Ada Lovelace",
    )
    assert edited.inspection.outline == "Plan: A1:D2\nBudget: A1:C4\nNotes: A1:A1"
    assert '4\tTotal\t1650 (=SUM(B2:B3))\thigh (=IF(B4>1000,"high","low"))' in (
        edited.inspection.text
    )
    assert "2\tb\t3 (=B1*2)" in edited.inspection.text
    values = reread(edited.content, values=True)
    assert values["Budget"]["B4"].value == 1650  # the stored value is the recalculated one
    assert values["Plan"]["D1"].value == 1650
    formulas = reread(edited.content)
    assert formulas["Budget"]["B4"].value == "=SUM(B2:B3)"
    assert formulas.sheetnames == ["Plan", "Budget", "Notes"]
    assert "Costs" in formulas.defined_names


async def test_rows_columns_sheets_formats_comments_and_text(office: LibreOffice) -> None:
    edited = await office.apply(
        build_xlsx(),
        [
            command("rows.insert", row=2, count=2),
            command("rows.delete", row=2),
            command("columns.insert", sheet="budget", column="A"),
            command("columns.delete", column="A"),
            command("sheet.copy", sheet="Budget", name="Budget 2"),
            command("sheet.rename", sheet="Notes", name="Remarks"),
            command("sheet.delete", sheet="Budget 2"),
            command("range.setBold", range="A1:B1"),
            command("range.setNumberFormat", range="B2:B5", format="#,##0.00"),
            command("range.clear", range="A1"),
            command("cell.deleteComment", cell="A3"),
            command("cell.addComment", cell="Remarks!A1", text="Who reviewed?"),
            command("cells.replaceAll", find="food", replace="Meals"),
        ],
    )
    book = reread(edited.content)
    assert book.sheetnames == ["Budget", "Remarks"]
    budget = book["Budget"]
    assert [budget.cell(row, 1).value for row in range(1, 6)] == [
        None,
        None,
        "Rent",
        "Meals",
        "Total",
    ]
    assert budget["B5"].value == "=SUM(B3:B4)"
    assert budget["B1"].font.b
    assert budget["B3"].number_format == "#,##0.00"
    assert budget["A3"].comment is None
    assert [(item.id, item.text) for item in edited.inspection.review] == [
        ("Remarks!A1", "Who reviewed?")
    ]


@pytest.mark.parametrize(
    ("steps", "reason"),
    [
        (
            [command("sheet.delete", sheet="Nowhere")],
            "no sheet `Nowhere`; the sheets are: `Budget`, `Notes`",
        ),
        ([command("cell.set", cell="B0", value=1)], "`B0` is not a cell"),
        ([command("cell.set", cell="B2", value="=SUMM(B1")], "can't be read"),
        ([command("sheet.add", name="notes")], "has a sheet `notes` already"),
        ([command("cell.addComment", cell="A2", text="again")], "A2 has a comment already"),
        ([command("cell.deleteComment", cell="B2")], "B2 has no comment"),
        (
            [command("sheet.delete", sheet="Notes"), command("sheet.delete", sheet="Budget")],
            "at least one sheet",
        ),
    ],
)
async def test_what_the_workbook_cannot_do_is_refused_with_the_reason(
    office: LibreOffice, steps: list[AppCommand], reason: str
) -> None:
    with pytest.raises(AppRefused, match=f"command {len(steps) - 1} .*{reason}"):
        await office.apply(build_xlsx(), steps)


async def test_a_workbook_renders_its_printed_pages(office: LibreOffice) -> None:
    source = build_xlsx()
    # Screened by the caller (the worker): only its format is read before the export.
    png = await office.render(source, 2, deadline=SLOW, screened=fingerprint(source))
    assert size(png) == A4
    with pytest.raises(AppRefused, match="no page 3: the document has 2"):
        await office.render(build_xlsx(), 3)


async def test_a_workbook_that_names_urls_reaches_nothing_and_still_renders(
    office: LibreOffice, tmp_path: Path
) -> None:
    listener = Listener()
    try:
        source = linking_workbook(f"http://127.0.0.1:{listener.port}")
        png = await office.render(source, 1, deadline=SLOW)
        found = await office.inspect(source)
        edited = await office.apply(source, [command("cell.set", cell="B3", value=6)])
        assert size(png)[0] > 0
        assert "A sheet that points elsewhere" in found.text
        assert "3\t\t6" in edited.inspection.text
        assert "(=[1]Sheet1!A1)" in found.text
        assert listener.received == []
        # The same file through a bare office does reach the listener: the workbook is live.
        (tmp_path / "linking.xlsx").write_bytes(source)
        await asyncio.to_thread(
            subprocess.run,
            [
                "soffice",
                "--headless",
                f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
                "--convert-to",
                "pdf",
                "--outdir",
                str(tmp_path),
                str(tmp_path / "linking.xlsx"),
            ],
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert listener.received
    finally:
        listener.stop()
