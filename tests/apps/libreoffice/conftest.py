"""Fixtures for the LibreOffice adapter: the real office (or a skip), documents, and leftovers.

Every test here runs the real ``soffice``. Where it, Debian's ``python3-uno`` or ``pdftoppm``
is missing the tests skip with the reason, except in CI (``CI=true``), where the skip is a
failure: CI installs them (``.ci/run``). Documents are built here with python-docx, so the
tests never need ``/work/shared``. Each test that runs a job checks that no process of its jobs
is alive when it ends.
"""

import io
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import docx
import pytest
from docx.document import Document
from docx.opc.constants import RELATIONSHIP_TYPE
from docx.opc.packuri import PackURI
from docx.opc.part import Part
from docx.oxml import OxmlElement, parse_xml
from docx.oxml.ns import nsdecls, qn
from lxml import etree
from PIL import Image

from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.apps.libreoffice._process import TEMPLATE_PREFIX
from artifactr.files.apps.libreoffice._sandbox import can_sandbox
from tests.office import REQUIRED, need_office, running

TEMPLATE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/attachedTemplate"
"""The relationship of a document's settings to its attached template."""

VML = 'xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"'
"""The VML and Office namespaces, which python-docx doesn't declare."""

STAMP = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The directory this test's jobs make their directories in; nothing may outlive the test."""
    path = tmp_path / "jobs"
    path.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    yield path
    assert running(str(path)) == []
    # What stays is the adapter's template profile, made once and copied into each job.
    assert [p for p in path.iterdir() if not p.name.startswith(TEMPLATE_PREFIX)] == []


@pytest.fixture
async def office(jobs: Path) -> AsyncIterator[LibreOffice]:
    """The adapter over the real office (skipped, or failed in CI, where it can't run).

    Closed at the test's end: an export its renders left going in the background is stopped, and
    its office gone, before ``jobs`` looks.
    """
    need_office()
    app = LibreOffice()
    yield app
    await app.close()


# ─── documents ────────────────────────────────────────────────────────────────


def saved(document: Document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def tracked(kind: str, text: str, ident: str, author: str = "Linus") -> OxmlElement:
    """Return a ``w:ins`` or ``w:del`` of one run, by ``author`` at :data:`STAMP`."""
    change = OxmlElement(kind)
    change.set(qn("w:id"), ident)
    change.set(qn("w:author"), author)
    change.set(qn("w:date"), STAMP)
    run = OxmlElement("w:r")
    element = OxmlElement("w:delText" if kind == "w:del" else "w:t")
    element.text = text
    element.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
    run.append(element)
    change.append(run)
    return change


def add_footnote(document: Document, paragraph_index: int, text: str) -> None:
    """Give a paragraph a footnote (id 1), with the footnotes part Word expects."""
    body = (
        f"<w:footnotes {nsdecls('w')}>"
        '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p>'
        "</w:footnote>"
        '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r>'
        "<w:continuationSeparator/></w:r></w:p></w:footnote>"
        f'<w:footnote w:id="1"><w:p><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'
        "</w:footnote></w:footnotes>"
    )
    part = Part(
        PackURI("/word/footnotes.xml"),
        "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml",
        body.encode(),
        document.part.package,
    )
    document.part.relate_to(part, RELATIONSHIP_TYPE.FOOTNOTES)
    reference = parse_xml(
        f'<w:r {nsdecls("w")}><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
        '<w:footnoteReference w:id="1"/></w:r>'
    )
    document.paragraphs[paragraph_index]._p.append(reference)


def report_document() -> Document:
    """A report: a title, headings, body text, a 2x2 table, a footnote."""
    document = docx.Document()
    document.add_heading("Quarterly report", 0)
    document.add_heading("Summary", 1)
    document.add_paragraph("The quick brown fox jumps over the lazy dog.")
    document.add_heading("Details", 2)
    document.add_paragraph("Draft figures follow.")
    table = document.add_table(rows=2, cols=2)
    for row, cells in enumerate((("Region", "Sales"), ("North", "12"))):
        for column, text in enumerate(cells):
            table.cell(row, column).text = text
    document.add_paragraph("Closing words.")
    add_footnote(document, 2, "Source: the annual survey.")
    return document


@pytest.fixture
def report() -> bytes:
    """The report, as .docx bytes."""
    return saved(report_document())


@pytest.fixture
def reviewed() -> bytes:
    """The report with a comment by Grace and a tracked insertion and deletion by Linus."""
    document = report_document()
    document.add_comment(document.paragraphs[4].runs, text="Check the figures", author="Grace")
    body = document.paragraphs[2]._p
    body.append(tracked("w:ins", " Quickly.", "7"))
    body.append(tracked("w:del", " Slowly.", "8"))
    return saved(document)


@pytest.fixture
def long_document() -> bytes:
    """Three pages: each section starts on a new page."""
    document = docx.Document()
    for number in (1, 2, 3):
        heading = document.add_heading(f"Section {number}", 1)
        if number > 1:
            heading.paragraph_format.page_break_before = True
        document.add_paragraph(f"Body of section {number}.")
    return saved(document)


def toc_document() -> Document:
    """The report with a stale table of contents (a TOC field) before its first heading."""
    document = report_document()
    field = parse_xml(
        f"<w:p {nsdecls('w')}>"
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r>'
        '<w:r><w:instrText xml:space="preserve"> TOC \\o "1-3" \\h \\z \\u </w:instrText></w:r>'
        '<w:r><w:fldChar w:fldCharType="separate"/></w:r>'
        "<w:r><w:t>Stale contents</w:t></w:r>"
        '<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>'
    )
    document.paragraphs[1]._p.addprevious(field)
    return document


def linking_document(base: str) -> bytes:
    """A document that names three URLs under ``base``: a linked picture, an INCLUDEPICTURE
    field and an attached template. An office that fetches any of them reaches ``base``."""
    document = docx.Document()
    document.add_paragraph("A page that points elsewhere.")
    picture = document.part.relate_to(f"{base}/linked.png", RELATIONSHIP_TYPE.IMAGE, True)
    drawing = (
        f"<w:p {nsdecls('w', 'r', 'wp', 'a', 'pic')}><w:r><w:drawing>"
        '<wp:inline><wp:extent cx="914400" cy="914400"/><wp:docPr id="1" name="Linked"/>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture">'
        '<pic:pic><pic:nvPicPr><pic:cNvPr id="1" name="Linked"/><pic:cNvPicPr/></pic:nvPicPr>'
        f'<pic:blipFill><a:blip r:link="{picture}"/><a:stretch><a:fillRect/></a:stretch>'
        '</pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" cy="914400"/>'
        '</a:xfrm><a:prstGeom prst="rect"/></pic:spPr></pic:pic></a:graphicData></a:graphic>'
        "</wp:inline></w:drawing></w:r></w:p>"
    )
    document.element.body.append(parse_xml(drawing))
    include = (
        f"<w:p {nsdecls('w')}>"
        f"<w:fldSimple w:instr=' INCLUDEPICTURE \"{base}/included.png\" \\d '>"
        "<w:r><w:t>picture</w:t></w:r></w:fldSimple></w:p>"
    )
    document.element.body.append(parse_xml(include))
    settings = document.part._settings_part
    template = settings.relate_to(f"{base}/template.dotx", TEMPLATE, True)
    attached = f'<w:attachedTemplate {nsdecls("w", "r")} r:id="{template}"/>'
    settings.element.append(parse_xml(attached))
    # The body must end with its section properties.
    body = document.element.body
    body.append(body.sectPr)
    return saved(document)


def solid_png(color: tuple[int, int, int], size: int = 64) -> bytes:
    """A square PNG of one colour."""
    buffer = io.BytesIO()
    Image.new("RGB", (size, size), color).save(buffer, "PNG")
    return buffer.getvalue()


def field(instruction: str, shown: str) -> str:
    """A paragraph holding one simple field with the result ``shown``."""
    return (
        f"<w:p {nsdecls('w')}><w:fldSimple w:instr='{instruction}'>"
        f"<w:r><w:t>{shown}</w:t></w:r></w:fldSimple></w:p>"
    )


def reaching_document(secrets: Path, font: bytes, escape: Path) -> bytes:
    """A document that reaches for the machine: a linked picture and an INCLUDEPICTURE of
    ``secrets/secret.png``, an INCLUDETEXT of ``secrets/secret.txt``, an OLE object linked to
    it, and an embedded font (``font``) whose name climbs out of the profile to ``escape``."""
    document = docx.Document()
    document.add_paragraph("A page that reaches for the machine.")
    picture_url = (secrets / "secret.png").as_uri()
    text_url = (secrets / "secret.txt").as_uri()
    picture = document.part.relate_to(picture_url, RELATIONSHIP_TYPE.IMAGE, True)
    body = document.element.body
    body.append(
        parse_xml(
            f"<w:p {nsdecls('w', 'r', 'wp', 'a', 'pic')}><w:r><w:drawing>"
            '<wp:inline><wp:extent cx="914400" cy="914400"/><wp:docPr id="1" name="Linked"/>'
            "<a:graphic><a:graphicData "
            'uri="http://schemas.openxmlformats.org/drawingml/2006/picture">'
            '<pic:pic><pic:nvPicPr><pic:cNvPr id="1" name="Linked"/><pic:cNvPicPr/></pic:nvPicPr>'
            f'<pic:blipFill><a:blip r:link="{picture}"/><a:stretch><a:fillRect/></a:stretch>'
            '</pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" '
            'cy="914400"/></a:xfrm><a:prstGeom prst="rect"/></pic:spPr></pic:pic>'
            "</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"
        )
    )
    body.append(parse_xml(field(f' INCLUDEPICTURE "{picture_url}" \\d ', "picture")))
    body.append(parse_xml(field(f' INCLUDETEXT "{secrets / "secret.txt"}" ', "included")))
    preview, _ = document.part.get_or_add_image(io.BytesIO(solid_png((0, 160, 0), 16)))
    linked = document.part.relate_to(
        text_url,
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/oleObject",
        True,
    )
    body.append(
        parse_xml(
            f'<w:p {nsdecls("w", "r")} {VML}><w:r><w:object w:dxaOrig="1440" '
            'w:dyaOrig="1440"><v:shape id="_x0000_i1025" style="width:72pt;height:72pt" '
            f'o:ole=""><v:imagedata r:id="{preview}" o:title=""/></v:shape>'
            f'<o:OLEObject Type="Link" ProgID="Package" ShapeID="_x0000_i1025" '
            f'DrawAspect="Content" r:id="{linked}" UpdateMode="Always">'
            "<o:LinkType>EnhancedMetaFile</o:LinkType></o:OLEObject></w:object></w:r></w:p>"
        )
    )
    climb = "../" * 24 + str(escape).lstrip("/")
    fonts = next(
        part for part in document.part.package.iter_parts() if part.partname.endswith("Table.xml")
    )
    embedded = Part(
        PackURI("/word/fonts/font1.odttf"),
        "application/vnd.openxmlformats-officedocument.obfuscatedFont",
        font,
        document.part.package,
    )
    key = fonts.relate_to(embedded, RELATIONSHIP_TYPE.FONT)
    entry = (
        f'<w:font {nsdecls("w", "r")} w:name="{climb}"><w:embedRegular r:id="{key}" '
        'w:fontKey="{00000000-0000-0000-0000-000000000000}"/></w:font>'
    )
    table = parse_xml(fonts.blob)
    table.append(parse_xml(entry))
    fonts._blob = etree.tostring(table, xml_declaration=True, encoding="UTF-8", standalone=True)
    document.settings.element.append(parse_xml(f"<w:embedTrueTypeFonts {nsdecls('w')}/>"))
    run = document.paragraphs[0].runs[0]
    run.font.name = climb
    body.append(body.sectPr)
    return saved(document)


@pytest.fixture
async def sealed(jobs: Path) -> AsyncIterator[LibreOffice]:
    """The adapter with the sandbox required (skipped, or failed in CI, where bwrap can't run)."""
    need_office()
    bwrap = shutil.which("bwrap")
    if bwrap is None or not can_sandbox(bwrap):
        reason = "bubblewrap can't run here (apt-get install bubblewrap)"
        if REQUIRED:
            pytest.fail(reason + " (CI=true requires it)")
        pytest.skip(reason)
    app = LibreOffice(sandbox=True)
    yield app
    await app.close()


def run_xml(text: str) -> str:
    """One run of text."""
    return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'


def shown_document() -> bytes:
    """Text the page shows through fields and content controls: a merge field, a DATE field, an
    AUTHOR and a DOCPROPERTY field, a drop-down, a rich-text and a block content control."""
    document = docx.Document()
    document.core_properties.author = "Grace Hopper"
    document.core_properties.title = "The Contract"
    body = document.element.body

    def paragraph(inner: str) -> None:
        body.append(parse_xml(f"<w:p {nsdecls('w')}>{inner}</w:p>"))

    def simple(instruction: str, shown: str) -> str:
        return f"<w:fldSimple w:instr=' {instruction} '>{run_xml(shown)}</w:fldSimple>"

    paragraph(run_xml("Dear ") + simple("MERGEFIELD FirstName", "«FirstName»") + run_xml(", hi."))
    paragraph(
        run_xml("Signed on ")
        + '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve">'
        ' DATE \\@ "d MMMM yyyy" </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/>'
        f'</w:r>{run_xml("3 March 2025")}<w:r><w:fldChar w:fldCharType="end"/></w:r>'
        + run_xml(" by the parties.")
    )
    paragraph(
        run_xml("Author: ")
        + simple("AUTHOR", "Grace Hopper")
        + run_xml("; title: ")
        + simple("DOCPROPERTY Title", "The Contract")
    )
    paragraph(
        run_xml("Plan: ")
        + '<w:sdt><w:sdtPr><w:dropDownList><w:listItem w:displayText="Gold" w:value="Gold"/>'
        f"</w:dropDownList></w:sdtPr><w:sdtContent>{run_xml('Choose an item.')}</w:sdtContent>"
        "</w:sdt>" + run_xml(" (pick one).")
    )
    paragraph(
        run_xml("Notes: ")
        + "<w:sdt><w:sdtPr><w:richText/></w:sdtPr><w:sdtContent><w:r><w:rPr><w:b/></w:rPr>"
        f"<w:t>Rich words</w:t></w:r>{run_xml(' here')}</w:sdtContent></w:sdt>" + run_xml(" end.")
    )
    body.append(
        parse_xml(
            f"<w:sdt {nsdecls('w')}><w:sdtPr><w:text/></w:sdtPr><w:sdtContent><w:p>"
            f"{run_xml('A paragraph in a block control.')}</w:p></w:sdtContent></w:sdt>"
        )
    )
    body.append(body.sectPr)
    return saved(document)
