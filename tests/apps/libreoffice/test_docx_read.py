"""An edit's report is read from the .docx in hand, not from a second export (issue 42).

The driver's ``docx_read.py`` reads what an inspection reports (outline, text) from the saved
file in one pass, where the ODF export it replaces cost a long document's edit 3-5x its .docx
store. It runs here as the driver runs it, under the system Python, on files built here; a file
holding what only the ODF reading reads (tracked changes, comments, notes, text boxes, content
controls) is declined, and the job reads the ODF export as before. That the reading equals the
office's ODF reading is what ``test_app.py``'s inspections of plain documents check, through it.
"""

import io
import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from artifactr.files.apps.libreoffice._availability import SYSTEM_PYTHON
from artifactr.files.apps.libreoffice._process import DRIVER

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
MAIN = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"

STYLES = (
    f'<w:styles {W}><w:style w:type="paragraph" w:default="1" w:styleId="Normal">'
    '<w:name w:val="Normal"/></w:style>'
    '<w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style>'
    '<w:style w:type="paragraph" w:styleId="Part"><w:name w:val="Part"/>'
    '<w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>'
    '<w:style w:type="paragraph" w:styleId="Chapter"><w:name w:val="Chapter"/>'
    '<w:basedOn w:val="Part"/></w:style></w:styles>'
)
"""A default style, a heading by its name, and a level set by one style and inherited."""

READ = """
import json, sys
sys.path.insert(0, sys.argv[1])
import docx_read
try:
    print(json.dumps(docx_read.read(sys.argv[2], 7, sys.argv[3] == "changes")))
except docx_read.Unread as unread:
    print(json.dumps({"unread": str(unread)}))
"""
"""Read a file as the driver does, under the system Python: its inspection, or why not."""


def package(body: str, *, comments: bool = False) -> bytes:
    """Return a .docx whose body is ``body``, with the styles above."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zipped:
        zipped.writestr(
            "_rels/.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{MAIN}" Target="word/document.xml"/></Relationships>',
        )
        zipped.writestr(
            "word/document.xml", f"<w:document {W}><w:body>{body}</w:body></w:document>"
        )
        zipped.writestr("word/styles.xml", STYLES)
        if comments:
            zipped.writestr(
                "word/comments.xml",
                f'<w:comments {W}><w:comment w:id="0" w:author="A"><w:p/></w:comment></w:comments>',
            )
    return out.getvalue()


def paragraph(text: str, style: str = "") -> str:
    """Return a paragraph of one run, in a style if given."""
    styled = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    return f'<w:p>{styled}<w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def read(tmp_path: Path, content: bytes, changes: bool = False) -> dict[str, object]:
    """Return the driver's reading of a file (``{"unread": why}`` where it declines it)."""
    if not Path(SYSTEM_PYTHON).exists():
        pytest.skip(f"the driver's Python, {SYSTEM_PYTHON}, is not installed")
    path = tmp_path / "in.docx"
    path.write_bytes(content)
    flag = "changes" if changes else "none"
    ran = subprocess.run(
        [SYSTEM_PYTHON, "-c", READ, str(DRIVER), str(path), flag],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    found: dict[str, object] = json.loads(ran.stdout)
    return found


def test_a_plain_document_is_read_from_its_docx_as_the_page_shows_it(tmp_path: Path) -> None:
    field = (
        '<w:p><w:r><w:t xml:space="preserve">Page </w:t></w:r>'
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE </w:instrText></w:r>'
        '<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>3</w:t></w:r>'
        '<w:r><w:fldChar w:fldCharType="end"/></w:r>'
        '<w:hyperlink><w:r><w:t xml:space="preserve"> of</w:t><w:tab/><w:t>five</w:t>'
        "<w:br/><w:t>lines</w:t></w:r></w:hyperlink></w:p>"
    )
    table = (
        "<w:tbl><w:tblPr/><w:tblGrid/>"
        '<w:tr><w:tc><w:tcPr><w:vMerge w:val="restart"/></w:tcPr><w:p><w:r><w:t>a</w:t></w:r></w:p>'
        "</w:tc><w:tc><w:p><w:r><w:t>b</w:t></w:r></w:p><w:p><w:r><w:t>c</w:t></w:r></w:p></w:tc></w:tr>"
        "<w:tr><w:tc><w:tcPr><w:vMerge/></w:tcPr><w:p/></w:tc><w:tc><w:p><w:r><w:t>d</w:t></w:r>"
        "</w:p></w:tc></w:tr>"
        '<w:tr><w:trPr><w:gridBefore w:val="1"/></w:trPr><w:tc><w:p><w:r><w:t>e</w:t></w:r></w:p>'
        "</w:tc></w:tr></w:tbl>"
    )
    body = (
        paragraph("Report", "Heading1")
        + paragraph("Part one", "Part")
        + paragraph("Chapter one", "Chapter")
        + field
        + table
        + paragraph("The end.")
        + "<w:p><w:pPr><w:sectPr/></w:pPr></w:p><w:sectPr/>"
    )
    found = read(tmp_path, package(body))
    assert found == {
        "outline": "Report\n  Part one\n  Chapter one",
        "text": "Report\nPart one\nChapter one\nPage 3 of\tfive\nlines\na\tb c\nd\n\te\nThe end.",
        "review": [],
        "pages": 7,
    }


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (
            paragraph("x")
            .replace("<w:r>", '<w:ins w:id="1" w:author="A"><w:r>', 1)
            .replace("</w:r>", "</w:r></w:ins>"),
            "ins",
        ),
        ('<w:p><w:r><w:footnoteReference w:id="1"/></w:r></w:p>', "footnoteReference"),
        ('<w:p><w:commentRangeStart w:id="0"/></w:p>', "commentRangeStart"),
        ("<w:sdt><w:sdtContent>" + paragraph("x") + "</w:sdtContent></w:sdt>", "sdt"),
        ('<w:p><w:r><w:sym w:char="F04A"/></w:r></w:p>', "sym"),
    ],
)
def test_what_only_the_odf_reading_reads_is_left_to_it(tmp_path: Path, body: str, why: str) -> None:
    found = read(tmp_path, package(body))
    assert set(found) == {"unread"}
    assert why in str(found["unread"])


def test_a_document_with_comments_or_tracked_changes_is_left_to_the_odf_reading(
    tmp_path: Path,
) -> None:
    assert read(tmp_path, package(paragraph("x"), comments=True)) == {"unread": "comments"}
    # A change anywhere the office holds it (a header's too), as the office says.
    assert read(tmp_path, package(paragraph("x")), changes=True) == {"unread": "tracked changes"}
    assert "unread" in read(tmp_path, b"not a zip")
