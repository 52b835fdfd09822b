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
