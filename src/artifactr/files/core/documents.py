"""Documents: small real .docx files built in memory with the standard library (RFC-0003).

``build_docx`` writes a title, headings and paragraphs, optionally a comment and tracked changes;
``package`` wraps any body XML in a complete package. Both are deterministic, and python-docx
opens them: for tests and the demo.
"""

import io
import zipfile
from collections.abc import Mapping, Sequence
from xml.sax.saxutils import escape, quoteattr

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
"""The WordprocessingML namespace (transitional)."""

R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
"""The relationships namespace and the base of document relationship types."""

W14 = "http://schemas.microsoft.com/office/word/2010/wordml"
"""Word 2010's namespace: declared and named only in ``mc:Ignorable``, as Word writes it."""

Block = str | tuple[str, str]
"""A paragraph: its text (Normal), or ``(style id, text)`` such as ``("Heading1", "Intro")``."""

DEFAULT_PARAGRAPHS: tuple[Block, ...] = (
    ("Title", "Quarterly report"),
    ("Heading1", "Introduction"),
    "The quick brown fox jumps over the lazy dog.",
    ("Heading2", "Details"),
    "Sales rose in the north and fell in the south.",
)
"""What ``build_docx`` writes by default: a title, two headings and two paragraphs."""

AUTHOR = "Ada Lovelace"
"""Who wrote the comment and tracked changes of a built document."""

DATE = "2024-01-02T03:04:05Z"
"""When."""

_XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_STYLES = (
    ("Normal", "Normal", ""),
    ("Title", "Title", '<w:rPr><w:sz w:val="56"/></w:rPr>'),
    ("Heading1", "heading 1", '<w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:rPr><w:b/></w:rPr>'),
    ("Heading2", "heading 2", '<w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:rPr><w:b/></w:rPr>'),
    ("Heading3", "heading 3", '<w:pPr><w:outlineLvl w:val="2"/></w:pPr><w:rPr><w:b/></w:rPr>'),
)


def run(text: str, *, deleted: bool = False) -> str:
    """Return a ``w:r`` holding text (as ``w:delText`` if deleted), spaces preserved."""
    tag = "w:delText" if deleted else "w:t"
    return f'<w:r><{tag} xml:space="preserve">{escape(text)}</{tag}></w:r>'


def paragraph(text: str = "", style: str | None = None, *, inner: str | None = None) -> str:
    """Return a ``w:p`` with an optional style, holding one run of text or ``inner`` XML."""
    properties = f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else ""
    content = run(text) if inner is None else inner
    return f"<w:p>{properties}{content}</w:p>"


def build_docx(
    paragraphs: Sequence[Block] = DEFAULT_PARAGRAPHS,
    *,
    comment: str | None = None,
    insertion: str | None = None,
    deletion: str | None = None,
    tracking: bool = False,
    core: bool = True,
    styles: bool = True,
) -> bytes:
    """Return a .docx of these paragraphs.

    ``comment`` is a comment (id 0) on the whole first Normal paragraph. ``insertion`` and
    ``deletion`` are tracked changes (ids 1 and 2) at the end of the last paragraph, by
    :data:`AUTHOR` at :data:`DATE`. ``tracking`` turns tracking changes on in the settings;
    ``core`` and ``styles`` leave out the core properties or the styles part when false.
    """
    blocks = [(None, block) if isinstance(block, str) else block for block in paragraphs]
    commented = next((n for n, (style, _) in enumerate(blocks) if style is None), None)
    body: list[str] = []
    for number, (style, text) in enumerate(blocks):
        inner = run(text)
        if comment is not None and number == commented:
            inner = (
                f'<w:commentRangeStart w:id="0"/>{inner}<w:commentRangeEnd w:id="0"/>'
                '<w:r><w:commentReference w:id="0"/></w:r>'
            )
        if number == len(blocks) - 1:
            attributes = f'w:author="{AUTHOR}" w:date="{DATE}"'
            if insertion is not None:
                inner += f'<w:ins w:id="1" {attributes}>{run(insertion)}</w:ins>'
            if deletion is not None:
                inner += f'<w:del w:id="2" {attributes}>{run(deletion, deleted=True)}</w:del>'
        body.append(paragraph(style=style, inner=inner))
    comments = None
    if comment is not None:
        comments = (
            f'<w:comment w:id="0" w:author="{AUTHOR}" w:date="{DATE}" w:initials="AL">'
            f"{paragraph(comment)}</w:comment>"
        )
    return package("".join(body), comments=comments, tracking=tracking, core=core, styles=styles)


def package(
    body: str,
    *,
    comments: str | None = None,
    tracking: bool = False,
    core: bool = True,
    styles: bool = True,
    settings: bool = True,
    extra: Mapping[str, bytes] | None = None,
) -> bytes:
    """Return a .docx whose body is ``body`` (XML, ``w:`` prefixed), then a section.

    ``comments`` is the XML of ``w:comment`` elements for a comments part. ``extra`` adds parts
    as they are, with no relationship (``{"word/media/x.bin": b"..."}``).
    """
    document = (
        f'{_XML}<w:document xmlns:w="{W}" xmlns:r="{R}" xmlns:w14="{W14}" '
        'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
        f'mc:Ignorable="w14"><w:body>{body}'
        '<w:sectPr><w:pgSz w:w="11906" w:h="16838"/>'
        '<w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" '
        'w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>'
    )
    parts: dict[str, str | bytes] = {"word/document.xml": document}
    related: list[tuple[str, str, str]] = []  # (target, type, content type)
    if styles:
        parts["word/styles.xml"] = _styles()
        related.append(("styles.xml", "styles", "styles"))
    if settings:
        track = "<w:trackRevisions/>" if tracking else ""
        parts["word/settings.xml"] = (
            f'{_XML}<w:settings xmlns:w="{W}"><w:zoom w:percent="100"/>{track}'
            '<w:defaultTabStop w:val="720"/></w:settings>'
        )
        related.append(("settings.xml", "settings", "settings"))
    if comments is not None:
        parts["word/comments.xml"] = f'{_XML}<w:comments xmlns:w="{W}">{comments}</w:comments>'
        related.append(("comments.xml", "comments", "comments"))
    overrides = [
        ("/word/document.xml", "wordprocessingml.document.main"),
        *((f"/word/{target}", f"wordprocessingml.{kind}") for target, _, kind in related),
        ("/docProps/app.xml", "extended-properties"),
    ]
    package_rels = [
        ("word/document.xml", f"{R}/officeDocument"),
        ("docProps/app.xml", f"{R}/extended-properties"),
    ]
    if core:
        parts["docProps/core.xml"] = (
            f"{_XML}<cp:coreProperties "
            'xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" '
            'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
            f"<dc:title>Test</dc:title><dc:creator>{AUTHOR}</dc:creator>"
            f"<cp:lastModifiedBy>{AUTHOR}</cp:lastModifiedBy><cp:revision>3</cp:revision>"
            f'<dcterms:created xsi:type="dcterms:W3CDTF">{DATE}</dcterms:created>'
            f'<dcterms:modified xsi:type="dcterms:W3CDTF">{DATE}</dcterms:modified>'
            "</cp:coreProperties>"
        )
        package_rels.append(
            (
                "docProps/core.xml",
                "http://schemas.openxmlformats.org/package/2006/relationships/metadata/"
                "core-properties",
            )
        )
    parts["docProps/app.xml"] = (
        f"{_XML}<Properties "
        'xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties">'
        "<Application>tests/documents.py</Application></Properties>"
    )
    types = "".join(
        f'<Override PartName="{name}" ContentType='
        f'"application/vnd.openxmlformats-officedocument.{kind}+xml"/>'
        for name, kind in overrides
    )
    if core:
        types += (
            '<Override PartName="/docProps/core.xml" '
            'ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>'
        )
    parts["[Content_Types].xml"] = (
        f'{_XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" '
        'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f"{types}</Types>"
    )
    parts["_rels/.rels"] = _relationships(package_rels)
    parts["word/_rels/document.xml.rels"] = _relationships(
        [(target, f"{R}/{kind}") for target, kind, _ in related]
    )
    parts.update(extra or {})
    return _zip(parts)


def _styles() -> str:
    styles = "".join(
        f'<w:style w:type="paragraph"{' w:default="1"' if sid == "Normal" else ""} '
        f'w:styleId="{sid}"><w:name w:val="{name}"/>{props}</w:style>'
        for sid, name, props in _STYLES
    )
    return f'{_XML}<w:styles xmlns:w="{W}">{styles}</w:styles>'


def _relationships(targets: Sequence[tuple[str, str]]) -> str:
    items = "".join(
        f'<Relationship Id="rId{n}" Type={quoteattr(kind)} Target={quoteattr(target)}/>'
        for n, (target, kind) in enumerate(targets, 1)
    )
    return (
        f'{_XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        f"{items}</Relationships>"
    )


def _zip(parts: Mapping[str, str | bytes]) -> bytes:
    out = io.BytesIO()
    order = [
        "[Content_Types].xml",
        "_rels/.rels",
        *sorted(set(parts) - {"[Content_Types].xml", "_rels/.rels"}),
    ]
    with zipfile.ZipFile(out, "w") as archive:
        for name in order:
            info = zipfile.ZipInfo(name, (2024, 1, 2, 3, 4, 6))
            info.compress_type = zipfile.ZIP_DEFLATED
            data = parts[name]
            archive.writestr(info, data.encode() if isinstance(data, str) else data)
    return out.getvalue()


# ─── workbooks and decks ──────────────────────────────────────────────────────

_SML = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_PML = "http://schemas.openxmlformats.org/presentationml/2006/main"
_DML = "http://schemas.openxmlformats.org/drawingml/2006/main"
_OFFICE = "application/vnd.openxmlformats-officedocument."
_TYPES = "http://schemas.openxmlformats.org/package/2006/content-types"

Cell = str | int | float | None
"""A cell a built workbook holds: a text, a number, a formula (a string from ``=``) or none."""


def _types(overrides: Sequence[tuple[str, str]]) -> str:
    items = "".join(
        f'<Override PartName="/{name}" ContentType="{_OFFICE}{kind}"/>' for name, kind in overrides
    )
    return (
        f'{_XML}<Types xmlns="{_TYPES}"><Default Extension="rels" ContentType="application/'
        'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
        f'ContentType="application/xml"/>{items}</Types>'
    )


def _column_name(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def _cell(reference: str, value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith("="):
        return f'<c r="{reference}"><f>{escape(value[1:])}</f></c>'
    if isinstance(value, str):
        return f'<c r="{reference}" t="inlineStr"><is><t>{escape(value)}</t></is></c>'
    return f'<c r="{reference}"><v>{value}</v></c>'


def build_xlsx(sheets: Mapping[str, Sequence[Sequence[Cell]]]) -> bytes:
    """Return an .xlsx whose sheets hold these rows from A1: texts, numbers and formulas.

    A formula is a string from ``=`` in Excel's syntax; it has no stored value, so an office
    computes it on load. Deterministic, like :func:`build_docx`.
    """
    parts: dict[str, str | bytes] = {}
    names = list(sheets)
    parts["_rels/.rels"] = _relationships([("xl/workbook.xml", f"{R}/officeDocument")])
    listed = "".join(
        f'<sheet name={quoteattr(name)} sheetId="{n}" r:id="rId{n}"/>'
        for n, name in enumerate(names, 1)
    )
    parts["xl/workbook.xml"] = (
        f'{_XML}<workbook xmlns="{_SML}" xmlns:r="{R}"><sheets>{listed}</sheets></workbook>'
    )
    parts["xl/_rels/workbook.xml.rels"] = _relationships(
        [(f"worksheets/sheet{n}.xml", f"{R}/worksheet") for n in range(1, len(names) + 1)]
    )
    for n, name in enumerate(names, 1):
        rows = "".join(
            f'<row r="{row}">'
            + "".join(_cell(f"{_column_name(col)}{row}", value) for col, value in enumerate(cells))
            + "</row>"
            for row, cells in enumerate(sheets[name], 1)
        )
        parts[f"xl/worksheets/sheet{n}.xml"] = (
            f'{_XML}<worksheet xmlns="{_SML}"><sheetData>{rows}</sheetData></worksheet>'
        )
    parts["[Content_Types].xml"] = _types(
        [("xl/workbook.xml", "spreadsheetml.sheet.main+xml")]
        + [
            (f"xl/worksheets/sheet{n}.xml", "spreadsheetml.worksheet+xml")
            for n in range(1, len(names) + 1)
        ]
    )
    return _zip(parts)


_PLACES = {
    "title": (457200, 274638, 8229600, 1143000),
    "body": (457200, 1600200, 8229600, 4525963),
}
"""Where each placeholder sits on a 4:3 slide, in EMU (x, y, width, height): PowerPoint's
defaults. A placeholder without a position or size is drawn nowhere."""


def _shape(number: int, placeholder: str, text: str) -> str:
    paragraphs = "".join(
        f"<a:p><a:r><a:t>{escape(line)}</a:t></a:r></a:p>" for line in text.split("\n")
    )
    x, y, width, height = _PLACES[placeholder]
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{number}" name="{placeholder} {number}"/><p:cNvSpPr/>'
        f'<p:nvPr><p:ph type="{placeholder}"/></p:nvPr></p:nvSpPr>'
        f'<p:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{width}" cy="{height}"/></a:xfrm>'
        f"</p:spPr><p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp>"
    )


def _tree(shapes: str) -> str:
    return (
        '<p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/>'
        f"</p:nvGrpSpPr><p:grpSpPr/>{shapes}</p:spTree></p:cSld>"
    )


_COLOURS = (
    ("dk1", "000000"),
    ("lt1", "FFFFFF"),
    ("dk2", "1F497D"),
    ("lt2", "EEECE1"),
    ("accent1", "4F81BD"),
    ("accent2", "C0504D"),
    ("accent3", "9BBB59"),
    ("accent4", "8064A2"),
    ("accent5", "4BACC6"),
    ("accent6", "F79646"),
    ("hlink", "0000FF"),
    ("folHlink", "800080"),
)


def _theme() -> str:
    colours = "".join(f'<a:{key}><a:srgbClr val="{value}"/></a:{key}>' for key, value in _COLOURS)
    font = '<a:latin typeface="Liberation Sans"/><a:ea typeface=""/><a:cs typeface=""/>'
    fill = '<a:solidFill><a:schemeClr val="phClr"/></a:solidFill>'
    line = f"<a:ln>{fill}</a:ln>"
    effect = "<a:effectStyle><a:effectLst/></a:effectStyle>"
    return (
        f'{_XML}<a:theme xmlns:a="{_DML}" name="Plain"><a:themeElements>'
        f'<a:clrScheme name="Plain">{colours}</a:clrScheme><a:fontScheme name="Plain">'
        f"<a:majorFont>{font}</a:majorFont><a:minorFont>{font}</a:minorFont></a:fontScheme>"
        f'<a:fmtScheme name="Plain"><a:fillStyleLst>{fill * 3}</a:fillStyleLst>'
        f"<a:lnStyleLst>{line * 3}</a:lnStyleLst><a:effectStyleLst>{effect * 3}"
        f"</a:effectStyleLst><a:bgFillStyleLst>{fill * 3}</a:bgFillStyleLst></a:fmtScheme>"
        "</a:themeElements></a:theme>"
    )


def build_pptx(slides: Sequence[tuple[str, str]]) -> bytes:
    """Return a .pptx of these slides, each a title and a body (a newline a paragraph).

    One master, one layout and a plain theme, no more. Deterministic, like :func:`build_docx`.
    """
    count = len(slides)
    names = f'xmlns:a="{_DML}" xmlns:r="{R}" xmlns:p="{_PML}"'
    placeholders = _tree(_shape(2, "title", "") + _shape(3, "body", ""))
    parts: dict[str, str | bytes] = {
        "_rels/.rels": _relationships([("ppt/presentation.xml", f"{R}/officeDocument")]),
        "ppt/presentation.xml": (
            f'{_XML}<p:presentation {names}><p:sldMasterIdLst><p:sldMasterId id="2147483648" '
            'r:id="rId1"/></p:sldMasterIdLst><p:sldIdLst>'
            + "".join(f'<p:sldId id="{255 + n}" r:id="rId{n + 2}"/>' for n in range(1, count + 1))
            + '</p:sldIdLst><p:sldSz cx="9144000" cy="6858000"/>'
            '<p:notesSz cx="6858000" cy="9144000"/></p:presentation>'
        ),
        "ppt/_rels/presentation.xml.rels": _relationships(
            [
                ("slideMasters/slideMaster1.xml", f"{R}/slideMaster"),
                ("theme/theme1.xml", f"{R}/theme"),
                *((f"slides/slide{n}.xml", f"{R}/slide") for n in range(1, count + 1)),
            ]
        ),
        "ppt/slideMasters/slideMaster1.xml": (
            f"{_XML}<p:sldMaster {names}>{placeholders}"
            '<p:clrMap bg1="lt1" tx1="dk1" bg2="lt2" tx2="dk2" accent1="accent1" '
            'accent2="accent2" accent3="accent3" accent4="accent4" accent5="accent5" '
            'accent6="accent6" hlink="hlink" folHlink="folHlink"/><p:sldLayoutIdLst>'
            '<p:sldLayoutId id="2147483649" r:id="rId1"/></p:sldLayoutIdLst></p:sldMaster>'
        ),
        "ppt/slideMasters/_rels/slideMaster1.xml.rels": _relationships(
            [
                ("../slideLayouts/slideLayout1.xml", f"{R}/slideLayout"),
                ("../theme/theme1.xml", f"{R}/theme"),
            ]
        ),
        "ppt/slideLayouts/slideLayout1.xml": (
            f'{_XML}<p:sldLayout {names} type="obj">{placeholders}</p:sldLayout>'
        ),
        "ppt/slideLayouts/_rels/slideLayout1.xml.rels": _relationships(
            [("../slideMasters/slideMaster1.xml", f"{R}/slideMaster")]
        ),
        "ppt/theme/theme1.xml": _theme(),
    }
    for n, (title, body) in enumerate(slides, 1):
        shapes = _tree(_shape(2, "title", title) + _shape(3, "body", body))
        parts[f"ppt/slides/slide{n}.xml"] = f"{_XML}<p:sld {names}>{shapes}</p:sld>"
        parts[f"ppt/slides/_rels/slide{n}.xml.rels"] = _relationships(
            [("../slideLayouts/slideLayout1.xml", f"{R}/slideLayout")]
        )
    kinds = "presentationml."
    parts["[Content_Types].xml"] = _types(
        [
            ("ppt/presentation.xml", f"{kinds}presentation.main+xml"),
            ("ppt/slideMasters/slideMaster1.xml", f"{kinds}slideMaster+xml"),
            ("ppt/slideLayouts/slideLayout1.xml", f"{kinds}slideLayout+xml"),
            ("ppt/theme/theme1.xml", "theme+xml"),
            *((f"ppt/slides/slide{n}.xml", f"{kinds}slide+xml") for n in range(1, count + 1)),
        ]
    )
    return _zip(parts)
