"""Workbooks and decks for tests, built with openpyxl and python-pptx (dev-only readers)."""

import io
import zipfile
from collections.abc import Callable

from openpyxl import Workbook
from openpyxl.comments import Comment
from pptx import Presentation

XLSX_MAIN = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"
PPTX_MAIN = "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml"


def build_xlsx() -> bytes:
    """Return a budget: two sheets, numbers, a formula, a comment and a defined name."""
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Budget"
    sheet.append(["Item", "Cost"])
    sheet.append(["Rent", 1200])
    sheet.append(["Food", 300])
    sheet["A4"] = "Total"
    sheet["B4"] = "=SUM(B2:B3)"
    sheet["A2"].comment = Comment("Due on the first", "Ada")
    notes = book.create_sheet("Notes")
    notes["A1"] = "Reviewed by the board"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def build_pptx(slides: int = 2) -> bytes:
    """Return a deck: a title slide, then slides with a title, bullets and speaker notes."""
    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])
    assert first.shapes.title is not None
    first.shapes.title.text = "Quarterly review"
    first.placeholders[1].text = "Draft for the board"
    for number in range(2, slides + 1):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        assert slide.shapes.title is not None
        slide.shapes.title.text = f"Topic {number}"
        slide.placeholders[1].text = f"Point {number}a\nPoint {number}b"
        notes = slide.notes_slide.notes_text_frame
        assert notes is not None
        notes.text = f"Say {number}"
    out = io.BytesIO()
    deck.save(out)
    return out.getvalue()


def rewritten(data: bytes, change: Callable[[str, bytes], bytes], *add: tuple[str, bytes]) -> bytes:
    """Return a package with each part passed through ``change``, and parts added."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            target.writestr(info.filename, change(info.filename, source.read(info.filename)))
        for name, body in add:
            target.writestr(name, body)
    return out.getvalue()


def with_main_type(data: bytes, old: str, new: str) -> bytes:
    """Return a package whose main part's content type is ``new`` instead of ``old``."""

    def change(name: str, body: bytes) -> bytes:
        if name == "[Content_Types].xml":
            return body.replace(old.encode(), new.encode())
        return body

    return rewritten(data, change)


def with_vba(data: bytes) -> bytes:
    """Return a package with a VBA project beside its main part, its type left alone."""
    return rewritten(data, lambda _name, body: body, ("xl/vbaProject.bin", b"\xd0\xcf\x11\xe0"))
