"""The workbooks and decks the package builds for the demo open in openpyxl and python-pptx."""

import io

import openpyxl
import pptx

from artifactr.files.core.documents import build_pptx, build_xlsx
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.formats import Sniffer
from artifactr.files.core.manifests import PPTX, XLSX


def kind(data: bytes) -> str:
    sniffer = Sniffer()
    fingerprint(data, check=sniffer)
    return sniffer.media_type()


def test_a_built_workbook_holds_texts_numbers_formulas_and_gaps() -> None:
    data = build_xlsx({"Budget": [["Item", 1.5], [None, "=SUM(B1:B1)"]], "Notes": [["<&>"]]})
    assert kind(data) == XLSX
    assert data == build_xlsx(
        {"Budget": [["Item", 1.5], [None, "=SUM(B1:B1)"]], "Notes": [["<&>"]]}
    )
    book = openpyxl.load_workbook(io.BytesIO(data))
    assert book.sheetnames == ["Budget", "Notes"]
    budget = book["Budget"]
    assert (budget["A1"].value, budget["B1"].value, budget["A2"].value) == ("Item", 1.5, None)
    assert budget["B2"].value == "=SUM(B1:B1)"
    assert book["Notes"]["A1"].value == "<&>"
    wide = openpyxl.load_workbook(io.BytesIO(build_xlsx({"S": [[1] * 28]})))
    assert wide["S"]["AB1"].value == 1


def test_a_built_deck_holds_its_slides_titles_and_bodies() -> None:
    data = build_pptx([("Plan", "Grow\nHire"), ("Costs", "Rent")])
    assert kind(data) == PPTX
    deck = pptx.Presentation(io.BytesIO(data))
    shown = [[shape.text_frame.text for shape in slide.shapes] for slide in deck.slides]
    assert shown == [["Plan", "Grow\nHire"], ["Costs", "Rent"]]
