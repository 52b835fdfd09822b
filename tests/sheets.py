"""Workbooks and decks for tests, built with openpyxl and python-pptx (dev-only readers)."""

import io
import re
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


BRANDED = ("Acme Title", "Acme Title and Content")
"""The layouts of :func:`build_branded_pptx`'s deck, as its slides use them."""

ACME_BLUE = (0x1F, 0x6F, 0xB2)
"""The colour of the branded content layout's titles."""

ACME_RED = (0xC0, 0x39, 0x2B)
"""The colour of the branded content layout's bullets."""

_ACME_LOOKS = (
    # The content layout's title: 54 pt, centred, blue; its body's bullets: red squares.
    '<a:lstStyle><a:lvl1pPr algn="ctr"><a:defRPr sz="5400"><a:solidFill>'
    '<a:srgbClr val="1F6FB2"/></a:solidFill></a:defRPr></a:lvl1pPr></a:lstStyle>',
    '<a:lstStyle><a:lvl1pPr><a:buClr><a:srgbClr val="C0392B"/></a:buClr>'
    '<a:buFont typeface="Arial"/><a:buChar char="\u25aa"/></a:lvl1pPr></a:lstStyle>',
)


def _acme_look(name: str, body: bytes) -> bytes:
    """Give the content layout's title and body their own look (python-pptx has no call)."""
    if name != "ppt/slideLayouts/slideLayout2.xml":
        return body
    for look in _ACME_LOOKS:
        body = body.replace(b"<a:lstStyle/>", look.encode(), 1)
    return body


def build_branded_pptx() -> bytes:
    """Return a deck in its own look: layouts named ``Acme ...``; the content layout's title low
    on the left in a small box, 54 pt, centred and blue, its bullets red squares; a cover and two
    slides of title and bullets."""
    deck = Presentation()
    cover, content = deck.slide_layouts[0], deck.slide_layouts[1]
    cover.name, content.name = BRANDED
    title = content.placeholders[0]
    title.left, title.top, title.width, title.height = 457200, 4800000, 4000000, 900000
    first = deck.slides.add_slide(cover)
    assert first.shapes.title is not None
    first.shapes.title.text = "Acme plan"
    for name, points in (("Topic A", "a1\na2"), ("Topic B", "b1")):
        slide = deck.slides.add_slide(content)
        assert slide.shapes.title is not None
        slide.shapes.title.text = name
        slide.placeholders[1].text = points
    out = io.BytesIO()
    deck.save(out)
    return rewritten(out.getvalue(), _acme_look)


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


def _png() -> io.BytesIO:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(buffer, "PNG")
    buffer.seek(0)
    return buffer


EXTERNAL_LINK = (
    '<externalLink xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<externalBook r:id="rId1"><sheetNames><sheetName val="Sheet1"/></sheetNames>'
    '<sheetDataSet><sheetData sheetId="0"><row r="1"><cell r="A1"><v>7</v></cell></row>'
    "</sheetData></sheetDataSet></externalBook></externalLink>"
)
_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def linking_workbook(base: str) -> bytes:
    """Return a workbook reaching ``base``: an external link, WEBSERVICE and a remote picture."""
    from openpyxl.drawing.image import Image as Picture

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Links"
    sheet["A1"] = "A sheet that points elsewhere"
    sheet["B1"] = f'=_xlfn.WEBSERVICE("{base}/webservice")'
    sheet["B2"] = "=[1]Sheet1!A1"
    sheet["B3"] = 5
    sheet.add_image(Picture(_png()), "D4")
    out = io.BytesIO()
    book.save(out)

    def change(name: str, body: bytes) -> bytes:
        if not name.endswith((".xml", ".rels")):
            return body
        text = body.decode()
        if name == "[Content_Types].xml":
            text = text.replace(
                "</Types>",
                '<Override PartName="/xl/externalLinks/externalLink1.xml" ContentType="application/'
                'vnd.openxmlformats-officedocument.spreadsheetml.externalLink+xml"/></Types>',
            )
        elif name == "xl/_rels/workbook.xml.rels":
            text = text.replace(
                "</Relationships>",
                f'<Relationship Id="rIdExt" Type="{_RELS}/externalLink" '
                'Target="externalLinks/externalLink1.xml"/></Relationships>',
            )
        elif name == "xl/workbook.xml":
            text = text.replace(
                "</sheets>",
                f'</sheets><externalReferences xmlns:r="{_RELS}">'
                '<externalReference r:id="rIdExt"/></externalReferences>',
            )
        elif name.startswith("xl/drawings/_rels/"):
            text = re.sub(
                r'Target="[^"]*"', f'Target="{base}/picture.png" TargetMode="External"', text
            )
        elif name.startswith("xl/drawings/drawing"):
            text = text.replace("r:embed=", "r:link=")
        return text.encode()

    return rewritten(
        out.getvalue(),
        change,
        ("xl/externalLinks/externalLink1.xml", EXTERNAL_LINK.encode()),
        (
            "xl/externalLinks/_rels/externalLink1.xml.rels",
            (
                '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
                f'relationships"><Relationship Id="rId1" Type="{_RELS}/externalLinkPath" '
                f'Target="{base}/book.xlsx" TargetMode="External"/></Relationships>'
            ).encode(),
        ),
    )


def linking_deck(base: str) -> bytes:
    """Return a deck that reaches ``base``: a remote picture and a linked video."""
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    assert slide.shapes.title is not None
    slide.shapes.title.text = "A slide that points elsewhere"
    slide.shapes.add_picture(_png(), Inches(1), Inches(2))
    slide.shapes.add_movie(
        io.BytesIO(bytes(100)),
        Inches(4),
        Inches(2),
        Inches(2),
        Inches(2),
        poster_frame_image=_png(),
        mime_type="video/mp4",
    )
    out = io.BytesIO()
    deck.save(out)

    def change(name: str, body: bytes) -> bytes:
        text = body.decode(errors="replace") if name.endswith((".xml", ".rels")) else None
        if text is None:
            return body
        if name == "ppt/slides/_rels/slide1.xml.rels":
            text = text.replace(
                'Target="../media/image1.png"',
                f'Target="{base}/picture.png" TargetMode="External"',
            ).replace(
                'Target="../media/media1.mp4"', f'Target="{base}/video.mp4" TargetMode="External"'
            )
        elif name == "ppt/slides/slide1.xml":
            text = text.replace("r:embed=", "r:link=")
        return text.encode()

    return rewritten(out.getvalue(), change)
