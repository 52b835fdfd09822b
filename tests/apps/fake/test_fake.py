"""FakeApp: its edits of real .docx bytes, its inspections, renders, catalog and failures.

Every edit is checked by reading the result independently, with python-docx or lxml, never
through FakeApp. Documents come from ``tests/documents.py`` (built in memory) and, where present,
the real corpus. Odd structures (hyperlinks, tables, markup compatibility, strict namespaces)
are written as body XML, so each edge of the WordprocessingML code is exercised.
"""

import asyncio
import io
import itertools
import random
import re
import struct
import tempfile
import time
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree
from PIL import Image

from artifactr.files import (
    AppCommand,
    AppCrashed,
    AppFailure,
    AppRefused,
    AppTimeout,
    AppTooLarge,
    ReviewItem,
)
from artifactr.files.apps.fake import DEFAULT_MAX_ELEMENTS, FakeApp
from artifactr.files.apps.fake._xml import (
    STRICT,
    TRANSITIONAL,
    XmlPart,
    parse_xml,
    serialize_xml,
)
from artifactr.files.core.fingerprint import fingerprint
from tests.documents import AUTHOR, DATE, W, build_docx, package, paragraph, run

NOW = datetime(2025, 5, 6, 7, 8, 9, tzinfo=UTC)
STAMP = "2025-05-06T07:08:09Z"
NS = {
    "w": W,
    "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
    "dcterms": "http://purl.org/dc/terms/",
    "ct": "http://schemas.openxmlformats.org/package/2006/content-types",
    "rel": "http://schemas.openxmlformats.org/package/2006/relationships",
}
TEXT = [
    "Quarterly report",
    "Introduction",
    "The quick brown fox jumps over the lazy dog.",
    "Details",
    "Sales rose in the north and fell in the south.",
]


@pytest.fixture
def app() -> FakeApp:
    return FakeApp(clock=lambda: NOW)


def cmd(command: str, **params: Any) -> AppCommand:
    """A command; ``with_`` stands for ``with``, a Python keyword."""
    return AppCommand(command=command, params={k.rstrip("_"): v for k, v in params.items()})


def part(content: bytes, name: str) -> bytes:
    return zipfile.ZipFile(io.BytesIO(content)).read(name)


def xml(content: bytes, name: str = "word/document.xml") -> Any:
    return etree.fromstring(part(content, name))


def texts(content: bytes) -> list[str]:
    return [p.text for p in docx.Document(io.BytesIO(content)).paragraphs]


def parts(content: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(content))
    return {name: archive.read(name) for name in archive.namelist()}


def rezip(
    content: bytes, *, drop: Sequence[str] = (), replace: Mapping[str, bytes] | None = None
) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts(content).items():
            if name not in drop:
                archive.writestr(name, (replace or {}).get(name, data))
        for name, data in (replace or {}).items():
            if name not in archive.namelist():
                archive.writestr(name, data)
    return out.getvalue()


async def edit(app: FakeApp, source: bytes, *commands: AppCommand) -> bytes:
    return (await app.apply(source, commands, author="Grace Hopper")).content


# ─── text ─────────────────────────────────────────────────────────────────────


async def test_inserted_text_replaces_the_selection(app: FakeApp) -> None:
    content = await edit(
        app, build_docx(), cmd("select.text", text="quick"), cmd("text.insert", text="slow")
    )
    assert texts(content)[2] == "The slow brown fox jumps over the lazy dog."
    assert app.last_results == (
        {"paragraph": 2, "start": 4, "end": 9, "text": "quick"},
        {"paragraph": 2, "offset": 8},
    )


async def test_text_goes_to_the_start_of_the_document_when_nothing_is_selected(
    app: FakeApp,
) -> None:
    content = await edit(app, build_docx(), cmd("text.insert", text="Draft: ", raw=True))
    assert texts(content)[0] == "Draft: Quarterly report"


async def test_the_caret_moves_to_either_end_of_the_document(app: FakeApp) -> None:
    content = await edit(
        app,
        build_docx(),
        cmd("caret.docEnd"),
        cmd("text.insert", text=" The end."),
        cmd("caret.docStart"),
        cmd("text.insert", text="Start. "),
    )
    assert texts(content)[0] == "Start. Quarterly report"
    assert texts(content)[-1] == TEXT[-1] + " The end."


async def test_new_text_takes_the_formatting_of_the_text_it_replaces(app: FakeApp) -> None:
    bold = '<w:r><w:rPr><w:b/><w:rPrChange w:id="7" w:author="x"><w:rPr/></w:rPrChange></w:rPr>'
    source = package(paragraph(inner=f"{run('plain ')}{bold}<w:t>bold words</w:t></w:r>"))
    content = await edit(
        app, source, cmd("select.text", text="old wo"), cmd("text.insert", text="OLD")
    )
    runs = docx.Document(io.BytesIO(content)).paragraphs[0].runs
    assert [(r.text, r.bold) for r in runs] == [
        ("plain ", None),
        ("b", True),
        ("OLD", True),
        ("rds", True),
    ]
    assert len(xml(content).findall(".//w:rPrChange", NS)) == 2  # the copy drops its own


async def test_tabs_line_breaks_and_paragraph_breaks_are_inserted_as_word_has_them(
    app: FakeApp,
) -> None:
    content = await edit(
        app,
        build_docx(["Hello"]),
        cmd("caret.docEnd"),
        cmd("text.insert", text=" one\r\ntwo\tand\nmore\u2029three\rfour"),
    )
    assert texts(content) == ["Hello one", "two\tand\nmore", "three", "four"]
    assert app.last_results[-1] == {"paragraph": 3, "offset": 4}


async def test_a_new_paragraph_splits_the_paragraph_at_the_caret(app: FakeApp) -> None:
    content = await edit(
        app,
        build_docx(),
        cmd("select.text", text="jumps "),
        cmd("text.newParagraph"),
        cmd("text.insert", text="It jumps "),
    )
    assert texts(content)[2:4] == ["The quick brown fox ", "It jumps over the lazy dog."]


async def test_a_paragraph_appended_at_the_end_becomes_a_heading(app: FakeApp) -> None:
    content = await edit(
        app,
        build_docx(),
        cmd("caret.docEnd"),
        cmd("text.newParagraph"),
        cmd("text.insert", text="Conclusion"),
        cmd("para.style", style="Heading 1"),
    )
    document = docx.Document(io.BytesIO(content))
    last = document.paragraphs[-1]
    assert (last.text, last.style.name) == ("Conclusion", "Heading 1")
    assert document.paragraphs[-2].style.name == "Normal"
    body = xml(content).find("w:body", NS)
    assert etree.QName(body[-1]).localname == "sectPr"


async def test_a_split_paragraph_keeps_its_section_break_on_the_second_half(app: FakeApp) -> None:
    section = '<w:pPr><w:sectPr><w:type w:val="nextPage"/></w:sectPr></w:pPr>'
    source = package(paragraph(inner=f"{section}{run('first half')}") + paragraph("next"))
    content = await edit(app, source, cmd("select.text", text=" half"), cmd("text.newParagraph"))
    body = xml(content).find("w:body", NS)
    paragraphs = body.findall("w:p", NS)
    assert [p.find("w:pPr/w:sectPr", NS) is not None for p in paragraphs] == [False, True, False]
    assert texts(content) == ["first", "", "next"]


async def test_a_split_inside_a_hyperlink_splits_the_hyperlink(app: FakeApp) -> None:
    link = f'<w:hyperlink r:id="rId9">{run("click here")}</w:hyperlink>'
    source = package(paragraph(inner=f"{link}{run(' now')}"))
    content = await edit(
        app,
        source,
        cmd("select.text", text="ck"),
        cmd("text.newParagraph"),
        cmd("caret.docStart"),
        cmd("text.newParagraph"),
    )
    paragraphs = xml(content).findall("w:body/w:p", NS)
    hyperlinks = [len(p.findall("w:hyperlink", NS)) for p in paragraphs]
    assert hyperlinks == [0, 1, 1]
    assert [etree.QName(c).localname for c in paragraphs[2]] == ["hyperlink", "r"]
    assert [p.xpath("string(.)") for p in paragraphs] == ["", "cli", " here now"]


async def test_a_split_inside_a_tracked_insertion_gives_each_half_an_insertion_of_its_own(
    app: FakeApp,
) -> None:
    inserted = f'<w:ins w:id="7" w:author="Ada" w:date="2024-01-01T00:00:00Z">{run("new words")}'
    source = package(paragraph(inner=f"{run('Old ')}{inserted}</w:ins>"))
    content = await edit(app, source, cmd("select.text", text="w w"), cmd("text.newParagraph"))
    paragraphs = xml(content).findall("w:body/w:p", NS)
    assert [p.xpath("string(.)") for p in paragraphs] == ["Old ne", "ords"]
    halves = [p.findall("w:ins", NS) for p in paragraphs]
    assert [len(half) for half in halves] == [1, 1]
    ids = [half[0].get(f"{{{NS['w']}}}id") for half in halves]
    assert ids[0] == "7"
    assert ids[1] != "7"
    assert halves[1][0].get(f"{{{NS['w']}}}author") == "Ada"


async def test_an_empty_insertion_at_the_caret_changes_nothing(app: FakeApp) -> None:
    source = build_docx()
    edited = await app.apply(source, [cmd("text.insert", text="")])
    assert edited.inspection.fingerprint == fingerprint(source)


async def test_an_empty_body_gets_a_paragraph_to_type_in(app: FakeApp) -> None:
    content = await edit(app, build_docx([]), cmd("caret.docEnd"), cmd("text.insert", text="Hello"))
    assert texts(content) == ["Hello"]
    assert etree.QName(xml(content).find("w:body", NS)[-1]).localname == "sectPr"


# ─── replace and select ───────────────────────────────────────────────────────


async def test_replace_all_counts_its_replacements_and_ignores_case_by_default(
    app: FakeApp,
) -> None:
    content = await edit(app, build_docx(), cmd("edit.replaceAll", text="THE", with_="a"))
    assert app.last_results == ({"replaced": 4},)
    assert texts(content)[2] == "a quick brown fox jumps over a lazy dog."


async def test_match_case_stays_set_for_the_rest_of_the_batch(app: FakeApp) -> None:
    content = await edit(
        app,
        build_docx(),
        cmd("edit.replaceAll", text="the", with_="a", matchCase=True),
        cmd("edit.replaceAll", text="The", with_="One"),
    )
    assert [r["replaced"] for r in app.last_results] == [3, 1]
    assert texts(content)[2] == "One quick brown fox jumps over a lazy dog."


async def test_replacing_text_across_runs_and_with_line_breaks_keeps_the_rest(
    app: FakeApp,
) -> None:
    source = package(paragraph(inner=run("ab") + run("cd") + "<w:r><w:tab/><w:br/><w:cr/></w:r>"))
    content = await edit(app, source, cmd("edit.replaceAll", text="bc", with_="X\nY\tZ\n"))
    assert texts(content) == ["aX\nY\tZ\nd\t\n\n"]


async def test_text_typed_beside_a_page_break_marker_goes_beside_the_text(app: FakeApp) -> None:
    marker = "<w:lastRenderedPageBreak/>"
    inner = f"<w:r><w:rPr><w:i/></w:rPr>{marker}<w:t>Text</w:t>{marker}</w:r>"
    content = await edit(
        app,
        package(paragraph(inner=inner)),
        cmd("caret.docStart"),
        cmd("text.insert", text="<"),
        cmd("caret.docEnd"),
        cmd("text.insert", text=">"),
    )
    runs = docx.Document(io.BytesIO(content)).paragraphs[0].runs
    assert [(r.text, r.italic) for r in runs] == [
        ("", True),
        ("<", True),
        ("Text", True),
        (">", True),
        ("", True),
    ]
    assert len(xml(content).findall(".//w:lastRenderedPageBreak", NS)) == 2


async def test_select_text_finds_the_nth_occurrence_in_document_order(app: FakeApp) -> None:
    await app.apply(build_docx(), [cmd("select.text", text="the", occurrence=3)])
    assert app.last_results[0] == {"paragraph": 4, "start": 36, "end": 39, "text": "the"}


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"text": "zebra"}, "not found: `zebra`"),
        ({"text": "the", "occurrence": 9}, "not found: `the` (occurrence 9)"),
    ],
)
async def test_text_that_is_not_there_cannot_be_selected(
    app: FakeApp, params: dict[str, Any], reason: str
) -> None:
    with pytest.raises(AppRefused) as refused:
        await app.apply(build_docx(), [cmd("select.text", **params)])
    assert refused.value.reason == reason


@given(
    paragraphs=st.lists(st.text(alphabet="ab <&é\t", max_size=12), min_size=1, max_size=3),
    needle=st.text(alphabet="ab", min_size=1, max_size=2),
    replacement=st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs", "Cc", "Cn", "Zp"]), max_size=8
    ),
)
async def test_replace_all_round_trips_any_text_through_the_file(
    paragraphs: list[str], needle: str, replacement: str
) -> None:
    app = FakeApp(clock=lambda: NOW)
    source = package("".join(paragraph(text) for text in paragraphs))
    content = await edit(
        app, source, cmd("edit.replaceAll", text=needle, with_=replacement, matchCase=True)
    )
    assert texts(content) == [text.replace(needle, replacement) for text in paragraphs]
    assert app.last_results == ({"replaced": sum(text.count(needle) for text in paragraphs)},)


# ─── styles ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize("style", ["Heading1", "heading 1", "Heading 1"])
async def test_a_heading_style_is_set_by_id_or_name(app: FakeApp, style: str) -> None:
    content = await edit(
        app, build_docx(), cmd("select.text", text="Sales"), cmd("para.style", style=style)
    )
    assert docx.Document(io.BytesIO(content)).paragraphs[4].style.name == "Heading 1"
    assert app.last_results[-1] == {"style": "Heading1"}


async def test_a_missing_builtin_style_is_added_to_a_new_styles_part(app: FakeApp) -> None:
    source = build_docx(["Plain", "Text"], styles=False)
    content = await edit(
        app,
        source,
        cmd("para.style", style="Heading 2"),
        cmd("caret.docEnd"),
        cmd("para.style", style="title"),
    )
    document = docx.Document(io.BytesIO(content))
    assert [p.style.name for p in document.paragraphs] == ["Heading 2", "Title"]
    styles = xml(content, "word/styles.xml")
    assert (
        styles.find("w:style[@w:styleId='Heading2']/w:pPr/w:outlineLvl", NS).get(f"{{{W}}}val")
        == "1"
    )
    edited = await app.inspect(content)
    assert edited.outline == "  Plain\nText"


async def test_an_existing_style_is_not_added_again(app: FakeApp) -> None:
    source = build_docx()
    content = await edit(app, source, cmd("para.style", style="normal"))
    assert part(content, "word/styles.xml") == part(source, "word/styles.xml")
    assert docx.Document(io.BytesIO(content)).paragraphs[0].style.name == "Normal"


async def test_an_unknown_style_is_refused(app: FakeApp) -> None:
    with pytest.raises(AppRefused, match="no style `Fancy`"):
        await app.apply(build_docx(), [cmd("para.style", style="Fancy")])


async def test_character_and_nameless_styles_are_not_paragraph_styles(app: FakeApp) -> None:
    styles = (
        f'<w:styles xmlns:w="{W}"><w:style w:type="character" w:styleId="Strong">'
        '<w:name w:val="Strong"/></w:style><w:style w:type="paragraph"/>'
        '<w:style w:styleId="Quote"/></w:styles>'
    ).encode()
    source = rezip(build_docx(["Text"]), replace={"word/styles.xml": styles})
    with pytest.raises(AppRefused, match="no style `Strong`"):
        await app.apply(source, [cmd("para.style", style="Strong")])
    await app.apply(source, [cmd("para.style", style="quote")])
    assert app.last_results == ({"style": "Quote"},)


# ─── comments ─────────────────────────────────────────────────────────────────


async def test_a_comment_is_written_with_its_id_author_and_range(app: FakeApp) -> None:
    content = await edit(
        app,
        build_docx(),
        cmd("select.text", text="brown fox"),
        cmd("review.newComment", text="Which fox?"),
    )
    (result,) = app.last_results[1:]
    comment_id = str(result["id"])
    comments = xml(content, "word/comments.xml")
    (comment,) = comments.findall("w:comment", NS)
    assert comment.get(f"{{{W}}}id") == comment_id
    assert comment.get(f"{{{W}}}author") == "Grace Hopper"
    assert comment.get(f"{{{W}}}date") == STAMP
    assert comment.xpath("string(.)") == "Which fox?"
    body = xml(content)
    for marker in ("commentRangeStart", "commentRangeEnd", "commentReference"):
        assert body.find(f".//w:{marker}", NS).get(f"{{{W}}}id") == comment_id
    types = xml(content, "[Content_Types].xml")
    assert types.find("ct:Override[@PartName='/word/comments.xml']", NS) is not None
    inspection = await app.inspect(content)
    assert inspection.review == [
        ReviewItem(
            kind="comment",
            id=comment_id,
            author="Grace Hopper",
            date=STAMP,
            text="Which fox?",
            anchor="brown fox",
        )
    ]


async def test_a_comment_at_the_caret_covers_the_word_there(app: FakeApp) -> None:
    content = await edit(app, build_docx(), cmd("review.newComment", text="Too vague"))
    inspection = await app.inspect(content)
    assert [item.anchor for item in inspection.review] == ["Quarterly"]


async def test_a_comment_where_there_is_no_word_is_a_point(app: FakeApp) -> None:
    source = build_docx([""], comment="First")
    content = await edit(app, source, cmd("review.newComment", text="Empty here"))
    comments = xml(content, "word/comments.xml").findall("w:comment", NS)
    assert [c.get(f"{{{W}}}id") for c in comments] == ["0", "1"]
    inspection = await app.inspect(content)
    assert [(item.text, item.anchor) for item in inspection.review] == [
        ("First", ""),
        ("Empty here", ""),
    ]


async def test_a_comment_part_that_is_not_related_keeps_its_name(app: FakeApp) -> None:
    orphan = f'<w:comments xmlns:w="{W}"/>'.encode()
    source = rezip(build_docx(), replace={"word/comments.xml": orphan})
    content = await edit(app, source, cmd("review.newComment", text="New"))
    assert part(content, "word/comments.xml") == orphan
    assert xml(content, "word/comments1.xml").find("w:comment", NS).xpath("string(.)") == "New"


async def test_a_comment_whose_range_never_closes_has_no_anchor(app: FakeApp) -> None:
    comment = f'<w:comment w:id="5" w:author="{AUTHOR}"><w:p>{run("Hm")}</w:p></w:comment>'
    source = package(
        paragraph(inner='<w:commentRangeStart w:id="5"/>' + run("Text")), comments=comment
    )
    inspection = await app.inspect(source)
    assert inspection.review == [
        ReviewItem(kind="comment", id="5", author=AUTHOR, text="Hm", anchor=None)
    ]


# ─── tracked changes ──────────────────────────────────────────────────────────


async def test_a_tracked_replacement_is_a_deletion_and_an_insertion(app: FakeApp) -> None:
    content = await edit(
        app,
        build_docx(),
        cmd("review.trackChanges", value=True),
        cmd("select.text", text="quick"),
        cmd("text.insert", text="slow"),
    )
    body = xml(content)
    (deletion,) = body.findall(".//w:del", NS)
    (insertion,) = body.findall(".//w:ins", NS)
    assert deletion.xpath("string(.//w:delText)", namespaces=NS) == "quick"
    assert insertion.xpath("string(.//w:t)", namespaces=NS) == "slow"
    for change in (deletion, insertion):
        assert change.get(f"{{{W}}}author") == "Grace Hopper"
        assert change.get(f"{{{W}}}date") == STAMP
    assert deletion.get(f"{{{W}}}id") != insertion.get(f"{{{W}}}id")
    assert xml(content, "word/settings.xml").find("w:trackRevisions", NS) is not None
    assert app.last_results[0] == {"value": True}
    inspection = await app.inspect(content)
    assert inspection.text.splitlines()[2] == "The slow brown fox jumps over the lazy dog."
    assert [(i.change, i.text) for i in inspection.review] == [
        ("delete", "quick"),
        ("insert", "slow"),
    ]


async def test_accepting_all_keeps_the_new_text_and_rejecting_all_the_old(app: FakeApp) -> None:
    source = build_docx()
    tracked = await edit(
        app,
        source,
        cmd("review.trackChanges"),
        cmd("edit.replaceAll", text="the", with_="a"),
        cmd("caret.docEnd"),
        cmd("text.insert", text="\rA new paragraph"),
    )
    accepted = await edit(app, tracked, cmd("review.acceptAll"))
    rejected = await edit(app, tracked, cmd("review.rejectAll"))
    assert app.last_results == ({"rejected": 10},)
    assert texts(accepted)[2] == "a quick brown fox jumps over a lazy dog."
    assert texts(accepted)[-1] == "A new paragraph"
    assert texts(rejected) == TEXT
    for content in (accepted, rejected):
        assert xml(content).findall(".//w:ins", NS) == []
        assert xml(content).findall(".//w:del", NS) == []


async def test_a_change_is_accepted_or_rejected_by_its_id(app: FakeApp) -> None:
    source = build_docx(["Keep"], insertion=" added", deletion=" gone")
    accepted = await edit(app, source, cmd("review.accept", id=1))
    assert xml(accepted).findall(".//w:ins", NS) == []
    assert len(xml(accepted).findall(".//w:del", NS)) == 1
    assert texts(accepted) == ["Keep added"]
    rejected = await edit(app, source, cmd("review.reject", id="2"))
    assert xml(rejected).findall(".//w:del", NS) == []
    assert texts(rejected) == ["Keep gone"]
    assert app.last_results == ({"id": "2"},)


async def test_without_an_id_the_first_change_at_or_after_the_selection_is_resolved(
    app: FakeApp,
) -> None:
    source = build_docx(["One two", "Three four"], insertion=" added", deletion=" gone")
    await app.apply(source, [cmd("review.accept")])
    assert app.last_results == ({"id": "1"},)
    await app.apply(source, [cmd("select.text", text="added"), cmd("review.reject")])
    assert app.last_results[-1] == {"id": "1"}
    inserted = f'<w:ins w:id="5" w:author="{AUTHOR}">{run("B")}</w:ins>'
    deleted = f'<w:del w:id="6" w:author="{AUTHOR}">{run("D", deleted=True)}</w:del>'
    source = package(paragraph(inner=run("A") + inserted + run("C") + deleted + run("E")))
    await app.apply(source, [cmd("select.text", text="E"), cmd("review.reject")])
    assert app.last_results[-1] == {"id": "6"}


async def test_a_paragraph_mark_change_is_found_at_the_end_of_its_paragraph(
    app: FakeApp,
) -> None:
    mark = f'<w:pPr><w:rPr><w:del w:id="4" w:author="{AUTHOR}"/></w:rPr></w:pPr>'
    source = package(paragraph(inner=mark + run("Joined")) + paragraph(" up"))
    await app.apply(source, [cmd("select.text", text="ned"), cmd("review.accept")])
    content = (await app.apply(source, [cmd("review.accept")])).content
    assert texts(content) == ["Joined up"]
    rejected = await edit(app, source, cmd("review.reject", id="4"))
    assert texts(rejected) == ["Joined", " up"]
    assert xml(rejected).find(".//w:rPr", NS) is not None


async def test_a_paragraph_mark_before_a_table_is_only_unmarked(app: FakeApp) -> None:
    mark = f'<w:pPr><w:rPr><w:del w:id="4" w:author="{AUTHOR}"/></w:rPr></w:pPr>'
    table = f"<w:tbl><w:tr><w:tc>{paragraph('cell')}</w:tc></w:tr></w:tbl>"
    source = package(paragraph(inner=mark + run("Before")) + table)
    content = await edit(app, source, cmd("review.acceptAll"))
    assert xml(content).findall(".//w:del", NS) == []
    assert (await app.inspect(content)).text == "Before\ncell"


async def test_with_no_change_left_accepting_without_an_id_is_refused(app: FakeApp) -> None:
    inserted = f'<w:ins w:id="5" w:author="{AUTHOR}">{run("new")}</w:ins>'
    source = package(paragraph(inner=inserted + run(" old")))
    with pytest.raises(AppRefused, match="no tracked change at or after the selection"):
        await app.apply(source, [cmd("select.text", text="old"), cmd("review.accept")])


async def test_an_unknown_change_id_is_refused(app: FakeApp) -> None:
    with pytest.raises(AppRefused, match="no tracked change `9`"):
        await app.apply(build_docx(insertion="x"), [cmd("review.reject", id=9)])


async def test_resolving_no_changes_leaves_the_document_as_it_was(app: FakeApp) -> None:
    source = build_docx()
    edited = await app.apply(source, [cmd("review.acceptAll"), cmd("review.rejectAll")])
    assert app.last_results == ({"accepted": 0}, {"rejected": 0})
    assert edited.inspection.fingerprint == fingerprint(source)


async def test_tracking_starts_as_the_settings_say_and_toggles(app: FakeApp) -> None:
    source = build_docx(["Hello"], tracking=True)
    tracked = await edit(app, source, cmd("text.insert", text="Oh, "))
    assert xml(tracked).find(".//w:ins", NS).xpath("string(.)") == "Oh, "
    untracked = await edit(app, source, cmd("review.trackChanges"), cmd("text.insert", text="Oh, "))
    assert xml(untracked).findall(".//w:ins", NS) == []
    assert xml(untracked, "word/settings.xml").find("w:trackRevisions", NS) is None
    assert app.last_results[0] == {"value": False}


async def test_tracking_turned_on_is_saved_in_order_or_in_new_settings(app: FakeApp) -> None:
    content = await edit(app, build_docx(), cmd("review.trackChanges", value=True))
    settings = xml(content, "word/settings.xml")
    assert [etree.QName(c).localname for c in settings] == [
        "zoom",
        "trackRevisions",
        "defaultTabStop",
    ]
    off = f'<w:settings xmlns:w="{W}"><w:trackRevisions w:val="false"/></w:settings>'.encode()
    source = rezip(build_docx(), replace={"word/settings.xml": off})
    same = await app.apply(source, [cmd("review.trackChanges", value=False)])
    assert same.inspection.fingerprint == fingerprint(source)
    content = await edit(app, package(paragraph("x"), settings=False), cmd("review.trackChanges"))
    assert [etree.QName(c).localname for c in xml(content, "word/settings.xml")] == [
        "trackRevisions"
    ]


async def test_deleting_tracked_inserted_text_removes_it_outright(app: FakeApp) -> None:
    source = build_docx(["Keep"], insertion=" added text")
    content = await edit(
        app,
        source,
        cmd("review.trackChanges", value=True),
        cmd("select.text", text="added"),
        cmd("text.insert", text="new"),
    )
    (insertion,) = xml(content).findall(".//w:ins", NS)
    assert insertion.xpath("string(.)") == " new text"
    assert xml(content).findall(".//w:del", NS) == []


async def test_a_tracked_deletion_spanning_runs_and_a_hyperlink_wraps_each_run(
    app: FakeApp,
) -> None:
    link = f'<w:hyperlink r:id="rId9">{run("link")}{run("ed")}</w:hyperlink>'
    source = package(paragraph(inner=run("A ") + run("plain ") + link + run(" end")))
    content = await edit(
        app,
        source,
        cmd("review.trackChanges", value=True),
        cmd("select.text", text="plain linked e"),
        cmd("text.insert", text=""),
    )
    deletions = xml(content).findall(".//w:del", NS)
    assert [d.xpath("string(.)") for d in deletions] == ["plain ", "linked", " e"]
    assert [len(d) for d in deletions] == [1, 2, 1]
    assert (await app.inspect(content)).text == "A nd"


async def test_a_tracked_paragraph_break_is_joined_again_when_rejected(app: FakeApp) -> None:
    source = package(paragraph(inner='<w:pPr><w:pPrChange w:id="1"/></w:pPr>' + run("Onetwo")))
    tracked = await edit(
        app,
        source,
        cmd("review.trackChanges", value=True),
        cmd("select.text", text="two"),
        cmd("text.insert", text="\rtwo"),
    )
    paragraphs = xml(tracked).findall("w:body/w:p", NS)
    assert [etree.QName(c).localname for c in paragraphs[0].find("w:pPr", NS)] == [
        "rPr",
        "pPrChange",
    ]
    rejected = await edit(app, tracked, cmd("review.rejectAll"))
    assert texts(rejected) == ["Onetwo"]


async def test_a_tracked_paragraph_break_keeps_the_formatting_of_the_paragraph_mark(
    app: FakeApp,
) -> None:
    source = package(paragraph(inner="<w:pPr><w:rPr><w:b/></w:rPr></w:pPr>" + run("Onetwo")))
    tracked = await edit(
        app,
        source,
        cmd("review.trackChanges", value=True),
        cmd("select.text", text="two"),
        cmd("text.insert", text="\rtwo"),
    )
    first = xml(tracked).findall("w:body/w:p", NS)[0]
    assert [etree.QName(c).localname for c in first.find("w:pPr/w:rPr", NS)] == ["ins", "b"]
    rejected = await edit(app, tracked, cmd("review.rejectAll"))
    assert texts(rejected) == ["Onetwo"]


async def test_changes_in_table_rows_and_fallback_content_are_not_text_changes(
    app: FakeApp,
) -> None:
    row_insert = f'<w:trPr><w:ins w:id="8" w:author="{AUTHOR}"/></w:trPr>'
    table = f"<w:tbl><w:tr>{row_insert}<w:tc>{paragraph('cell')}</w:tc></w:tr></w:tbl>"
    mc = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
    tracked = f'<w:ins w:id="3" w:author="{AUTHOR}">{run("new")}</w:ins>'
    alternate = (
        f"<mc:AlternateContent {mc}><mc:Choice>{paragraph(inner=tracked)}</mc:Choice>"
        f"<mc:Fallback>{paragraph(inner=tracked.replace('3', '4'))}</mc:Fallback>"
        "</mc:AlternateContent>"
    )
    inline = (
        f"<mc:AlternateContent {mc}><mc:Choice>{run('shown')}</mc:Choice>"
        f"<mc:Fallback>{run('hidden')}</mc:Fallback></mc:AlternateContent>"
    )
    source = package(table + alternate + paragraph(inner=inline))
    inspection = await app.inspect(source)
    assert inspection.text == "cell\nnew\nshown"
    assert [item.id for item in inspection.review] == ["3"]


# ─── saving ───────────────────────────────────────────────────────────────────


async def test_a_no_op_batch_keeps_the_fingerprint_but_stamps_the_core_properties(
    app: FakeApp,
) -> None:
    source = build_docx()
    edited = await app.apply(source, [cmd("select.text", text="fox"), cmd("caret.docEnd")])
    assert edited.content != source
    assert edited.inspection.fingerprint == fingerprint(source)
    before, after = parts(source), parts(edited.content)
    assert {n for n in after if after[n] != before[n]} == {"docProps/core.xml"}
    core = xml(edited.content, "docProps/core.xml")
    assert core.findtext("cp:revision", namespaces=NS) == "4"
    assert core.findtext("cp:lastModifiedBy", namespaces=NS) == "FakeApp User"
    assert core.findtext("dcterms:modified", namespaces=NS) == STAMP
    assert core.findtext("dcterms:created", namespaces=NS) == DATE


async def test_the_author_is_who_apply_names(app: FakeApp) -> None:
    content = await edit(app, build_docx())
    core = xml(content, "docProps/core.xml")
    assert core.findtext("cp:lastModifiedBy", namespaces=NS) == "Grace Hopper"


async def test_a_file_without_core_properties_gains_them_once(app: FakeApp) -> None:
    source = rezip(build_docx(core=False), drop=["_rels/.rels"])
    first = await app.apply(source, [], author="Grace")
    core = xml(first.content, "docProps/core.xml")
    assert core.findtext("cp:revision", namespaces=NS) == "1"
    assert core.findtext("dcterms:created", namespaces=NS) == STAMP
    assert (
        core.find("dcterms:modified", NS).get("{http://www.w3.org/2001/XMLSchema-instance}type")
        == "dcterms:W3CDTF"
    )
    rels = xml(first.content, "_rels/.rels")
    assert [r.get("Target") for r in rels] == ["docProps/core.xml"]
    types = xml(first.content, "[Content_Types].xml")
    assert types.find("ct:Override[@PartName='/docProps/core.xml']", NS) is not None
    second = await app.apply(first.content, [])
    assert second.inspection.fingerprint == first.inspection.fingerprint
    assert xml(second.content, "docProps/core.xml").findtext("cp:revision", namespaces=NS) == "2"


async def test_a_revision_that_is_not_a_number_starts_again_at_one(app: FakeApp) -> None:
    core = (
        b'<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/'
        b'metadata/core-properties"><cp:revision>draft</cp:revision></cp:coreProperties>'
    )
    content = await edit(app, rezip(build_docx(), replace={"docProps/core.xml": core}))
    assert xml(content, "docProps/core.xml").findtext("cp:revision", namespaces=NS) == "1"


async def test_other_parts_keep_their_bytes_after_an_edit(app: FakeApp) -> None:
    source = build_docx(comment="Note")
    content = await edit(app, source, cmd("edit.replaceAll", text="fox", with_="cat"))
    before, after = parts(source), parts(content)
    assert list(after) == list(before)
    assert {n for n in after if after[n] != before[n]} == {"word/document.xml", "docProps/core.xml"}


async def test_namespace_declarations_word_needs_survive_a_rewrite(app: FakeApp) -> None:
    content = await edit(app, build_docx(), cmd("edit.replaceAll", text="fox", with_="cat"))
    root = xml(content)
    assert root.nsmap["w14"] == "http://schemas.microsoft.com/office/word/2010/wordml"
    assert root.get("{http://schemas.openxmlformats.org/markup-compatibility/2006}Ignorable") == (
        "w14"
    )
    assert part(content, "word/document.xml").startswith(b'<?xml version="1.0"')


async def test_the_same_batch_on_the_same_file_gives_the_same_bytes(app: FakeApp) -> None:
    batch = [cmd("review.trackChanges"), cmd("edit.replaceAll", text="e", with_="E")]
    first = await app.apply(build_docx(), batch, author="Grace")
    second = await app.apply(build_docx(), batch, author="Grace")
    assert first.content == second.content


async def test_a_strict_document_is_edited_in_its_own_namespace(app: FakeApp) -> None:
    strict = part(build_docx(["Strict text"]), "word/document.xml").replace(
        TRANSITIONAL.encode(), STRICT.encode()
    )
    source = rezip(build_docx(["Strict text"], styles=False), replace={"word/document.xml": strict})
    content = await edit(
        app,
        source,
        cmd("review.trackChanges", value=True),
        cmd("select.text", text="text"),
        cmd("review.newComment", text="Strictly"),
        cmd("para.style", style="Heading 1"),
    )
    root = xml(content)
    assert root.nsmap["w"] == STRICT
    assert root.find(f".//{{{STRICT}}}commentRangeStart") is not None
    rels = xml(content, "word/_rels/document.xml.rels")
    kinds = sorted(r.get("Type") for r in rels)
    assert "http://purl.oclc.org/ooxml/officeDocument/relationships/comments" in kinds
    inspection = await app.inspect(content)
    assert (inspection.outline, inspection.review[0].anchor) == ("Strict text", "text")


# ─── inspection ───────────────────────────────────────────────────────────────


async def test_inspection_reads_outline_text_review_pages_and_fingerprint(app: FakeApp) -> None:
    source = build_docx(comment="Nice", insertion=" added", deletion=" gone")
    inspection = await app.inspect(source)
    assert inspection.outline == "Quarterly report\nIntroduction\n  Details"
    assert inspection.text == "\n".join([*TEXT[:-1], TEXT[-1] + " added"])
    assert inspection.review == [
        ReviewItem(kind="comment", id="0", author=AUTHOR, date=DATE, text="Nice", anchor=TEXT[2]),
        ReviewItem(kind="change", id="1", author=AUTHOR, date=DATE, text=" added", change="insert"),
        ReviewItem(kind="change", id="2", author=AUTHOR, date=DATE, text=" gone", change="delete"),
    ]
    assert inspection.pages == 1
    assert inspection.fingerprint == fingerprint(source)
    assert inspection.about.model_dump() == {"app": "fake", "version": "1.0", "build": "stdlib"}


async def test_a_file_can_be_inspected_from_a_stream_at_any_position(app: FakeApp) -> None:
    source = build_docx(comment="Nice")
    with tempfile.SpooledTemporaryFile(max_size=100) as spooled:
        spooled.write(source)
        from_disk = await app.inspect(spooled)
    stream = io.BytesIO(source)
    stream.seek(17)
    assert await app.inspect(stream) == from_disk == await app.inspect(source)
    with pytest.raises(AppTooLarge, match=f"the file is {len(source)} bytes"):
        await FakeApp(max_size=100).inspect(io.BytesIO(source))


async def test_the_outline_indents_by_level_and_stops_at_4000_characters(app: FakeApp) -> None:
    blocks = [(f"Heading{n % 9 + 1}", f"Section {n:03}  title") for n in range(300)]
    source = build_docx([*blocks, ("Heading1", "   "), ("Unknown", "Not a heading")])
    inspection = await app.inspect(source)
    assert len(inspection.outline) == 4000
    assert inspection.outline.splitlines()[:3] == [
        "Section 000 title",
        "  Section 001 title",
        "    Section 002 title",
    ]


async def test_pages_are_counted_from_lines_of_text(app: FakeApp) -> None:
    source = build_docx(["x" * 100] * 30 + ["a\nb"])
    assert (await app.inspect(source)).pages == 2  # 30 x 2 lines + 2 = 62 lines
    assert (await app.inspect(build_docx([]))).pages == 1


async def test_every_corpus_file_inspects_and_survives_an_empty_batch(
    app: FakeApp, corpus: list[Path]
) -> None:
    for path in corpus:
        source = path.read_bytes()
        inspection = await app.inspect(source)
        assert inspection.pages is not None
        assert inspection.pages >= 1
        first = await app.apply(source, [])
        second = await app.apply(first.content, [])
        assert second.inspection.fingerprint == first.inspection.fingerprint, path.name
        if "docProps/core.xml" in parts(source):
            assert first.inspection.fingerprint == inspection.fingerprint, path.name
        assert first.inspection.text == inspection.text


async def test_every_corpus_file_takes_a_tracked_batch_and_rejects_back(
    app: FakeApp, corpus: list[Path]
) -> None:
    batch = [
        cmd("review.trackChanges", value=True),
        cmd("edit.replaceAll", text="e", with_="E&<"),
        cmd("caret.docEnd"),
        cmd("text.insert", text="\rAdded\nline"),
        cmd("para.style", style="Heading 2"),
        cmd("caret.docStart"),
        cmd("text.insert", text="Start "),
        cmd("review.newComment", text="Comment"),
    ]
    for path in corpus:
        source = path.read_bytes()
        original = await app.inspect(source)
        edited = await app.apply(source, batch)
        assert "Added\nline" in edited.inspection.text, path.name
        rejected = await app.apply(edited.content, [cmd("review.rejectAll")])
        assert rejected.inspection.text == original.text, path.name
        if path.name != "mammoth-strict-format.docx":  # python-docx reads no strict files
            docx.Document(io.BytesIO(edited.content))


# ─── render ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("scale", "size"), [(1.0, (595, 842)), (2.0, (1190, 1684)), (9, (2380, 3368)), (0.01, (60, 84))]
)
async def test_a_page_renders_as_a_png_whose_size_follows_the_scale(
    app: FakeApp, scale: float, size: tuple[int, int]
) -> None:
    png = await app.render(build_docx(), 1, scale=scale)
    image = Image.open(io.BytesIO(png))
    image.load()
    assert (image.format, image.mode, image.size) == ("PNG", "L", size)
    assert image.getextrema() == (0x40, 0xFF)
    assert png == await app.render(build_docx(), 1, scale=scale)


async def test_a_rendered_page_draws_a_bar_per_line(app: FakeApp) -> None:
    image = Image.open(io.BytesIO(await app.render(build_docx(["x" * 90, "", "x" * 45]), 1)))
    column = [image.getpixel((100, y)) for y in range(image.height)]
    assert sum(1 for a, b in itertools.pairwise(column) if a != b and b == 0x40) == 2
    assert image.getpixel((72 + 225 + 10, 72 + 2 * 15)) == 0xFF  # the third line is half as wide


async def test_each_page_of_a_long_document_renders(app: FakeApp) -> None:
    source = build_docx(["line"] * 50)
    assert len(await app.render(source, 2)) > 0
    with pytest.raises(AppRefused, match="no page 3"):
        await app.render(source, 3)
    with pytest.raises(AppRefused, match="no page 0"):
        await app.render(source, 0)


async def test_a_scale_that_is_not_a_number_is_refused(app: FakeApp) -> None:
    with pytest.raises(AppRefused, match="bad parameters: `scale` must be a number"):
        await app.render(build_docx(), 1, scale=float("nan"))


def test_a_render_is_a_valid_png_with_checksums() -> None:
    png = asyncio.run(FakeApp().render(build_docx(), 1))
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    position, kinds = 8, []
    while position < len(png):
        (length,) = struct.unpack(">I", png[position : position + 4])
        kind = png[position + 4 : position + 8]
        data = png[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", png[position + 8 + length : position + 12 + length])
        assert crc == zlib.crc32(kind + data)
        kinds.append(kind)
        position += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]


# ─── catalog ──────────────────────────────────────────────────────────────────


async def test_the_catalog_lists_commands_filtered_by_id_or_label(app: FakeApp) -> None:
    everything = await app.commands()
    assert len(everything) == 13
    review = await app.commands("REVIEW")
    assert [c.id for c in review] == [
        "review.newComment",
        "review.trackChanges",
        "review.accept",
        "review.reject",
        "review.acceptAll",
        "review.rejectAll",
    ]
    (replace,) = await app.commands("replace all")
    assert replace.params == '{"text": string, "with": string, "matchCase"?: bool}'
    assert replace.mutates
    (select,) = await app.commands("select.text")
    assert not select.mutates
    assert await app.commands("nothing like it") == []


# ─── refusals ─────────────────────────────────────────────────────────────────


async def test_an_unknown_command_is_refused_in_wordcrafts_words(app: FakeApp) -> None:
    with pytest.raises(AppRefused) as refused:
        await app.apply(build_docx(), [cmd("format.bold", value=True)])
    assert refused.value.reason == "unknown command `format.bold`"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (cmd("select.text"), "missing `text`"),
        (cmd("select.text", text=3), "`text` must be a string"),
        (cmd("select.text", text=""), "`text` must not be empty"),
        (cmd("select.text", text="a\x00"), "`text` holds a character a .docx cannot"),
        (cmd("select.text", text="a", occurrence=0), "`occurrence` must be a positive integer"),
        (cmd("select.text", text="a", occurrence=True), "`occurrence` must be a positive integer"),
        (cmd("select.text", text="a", occurrence="2"), "`occurrence` must be a positive integer"),
        (
            cmd("text.insert", text="a", regex=True),
            'unknown field `regex`; text.insert takes {"text": string, "raw"?: bool}',
        ),
        (cmd("caret.docEnd", x=1), "unknown field `x`; caret.docEnd takes {}"),
        (cmd("edit.replaceAll", text="a", with_="b\rc"), "`with` cannot break a paragraph"),
        (
            cmd("edit.replaceAll", text="a", with_="b", matchCase="yes"),
            "`matchCase` must be true or false",
        ),
        (cmd("review.accept", id=True), "`id` must be an id"),
        (cmd("review.accept", id=""), "`id` must be an id"),
        (cmd("review.accept", id=[1]), "`id` must be an id"),
    ],
)
async def test_bad_parameters_are_refused_in_wordcrafts_words(
    app: FakeApp, command: AppCommand, reason: str
) -> None:
    with pytest.raises(AppRefused) as refused:
        await app.apply(build_docx(), [command])
    assert refused.value.reason == f"bad parameters: {reason}"


async def test_a_failing_batch_changes_nothing(app: FakeApp) -> None:
    source = build_docx(["Hello"])
    await app.apply(source, [cmd("caret.docStart")])
    before = app.last_results
    with pytest.raises(AppRefused):
        await app.apply(
            source,
            [
                cmd("review.trackChanges"),
                cmd("text.insert", text="Oh, "),
                cmd("para.style", style="Nope"),
            ],
        )
    assert app.last_results == before
    content = await edit(app, source, cmd("text.insert", text="Oh, "))
    assert texts(content) == ["Oh, Hello"]
    assert xml(content).findall(".//w:ins", NS) == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"not a zip at all", "not a .docx: not a zip file"),
        (rezip(build_docx(), drop=["[Content_Types].xml"]), "not a .docx: no [Content_Types].xml"),
        (
            rezip(build_docx(), drop=["word/document.xml"]),
            "not a .docx: it has no main document part",
        ),
        (
            rezip(build_docx(), replace={"word/document.xml": b"<document/>"}),
            "not a .docx: word/document.xml is not a WordprocessingML body",
        ),
        (
            rezip(
                build_docx(), replace={"word/document.xml": f'<w:document xmlns:w="{W}"/>'.encode()}
            ),
            "not a .docx: word/document.xml is not a WordprocessingML body",
        ),
        (
            rezip(build_docx(), replace={"word/document.xml": b"<w:document"}),
            "not a .docx: word/document.xml is not XML a .docx can hold",
        ),
        (
            rezip(
                build_docx(),
                replace={"word/document.xml": b'<!DOCTYPE d [<!ENTITY e "x">]><d>&e;</d>'},
            ),
            "not a .docx: word/document.xml is not XML a .docx can hold (it declares",
        ),
        (
            rezip(build_docx(), replace={"word/document.xml": b"<a>" * 300 + b"</a>" * 300}),
            "not a .docx: word/document.xml nests deeper than 256 elements",
        ),
    ],
)
async def test_a_file_that_is_not_a_docx_is_refused_with_a_reason(
    app: FakeApp, content: bytes, reason: str
) -> None:
    for call in (app.inspect(content), app.apply(content, []), app.render(content, 1)):
        with pytest.raises(AppRefused) as refused:
            await call
        assert refused.value.reason.startswith(reason)


async def test_a_package_with_two_parts_of_one_name_is_refused(app: FakeApp) -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in parts(build_docx()).items():
            archive.writestr(name, data)
        with pytest.warns(UserWarning, match="Duplicate"):
            archive.writestr("word/document.xml", b"<again/>")
    with pytest.raises(AppRefused, match="two parts share a name"):
        await app.inspect(out.getvalue())


async def test_a_corrupt_part_is_refused(app: FakeApp) -> None:
    source = bytearray(build_docx())
    start = source.index(b"word/document.xml") + len(b"word/document.xml") + 10
    source[start : start + 40] = bytes(40)
    with pytest.raises(AppRefused, match=r"word/document.xml cannot be read"):
        await app.inspect(bytes(source))


async def test_a_corrupt_part_fakeapp_never_reads_is_refused_too(app: FakeApp) -> None:
    source = bytearray(
        rezip(build_docx(), replace={"word/media/image.png": random.Random(1).randbytes(4000)})
    )
    start = source.index(b"word/media/image.png") + len(b"word/media/image.png") + 8
    source[start : start + 20] = bytes(20)
    with pytest.raises(AppRefused, match=r"^not a .docx: word/media/image.png"):
        await app.inspect(bytes(source))
    with pytest.raises(AppRefused, match=r"^not a .docx: word/media/image.png cannot be read"):
        await app.apply(bytes(source), [])


async def test_a_part_that_inflates_like_a_bomb_is_too_large(app: FakeApp) -> None:
    source = rezip(build_docx(), replace={"word/media/zeros.bin": bytes(4 * 1024 * 1024)})
    for call in (app.inspect(source), app.apply(source, [])):
        with pytest.raises(AppTooLarge, match="zip bomb"):
            await call


async def test_a_package_without_relationships_falls_back_to_word_document_xml(
    app: FakeApp,
) -> None:
    rels = (
        f'<Relationships xmlns="{NS["rel"]}">'
        '<Relationship Id="a" Type="x/officeDocument" Target="https://example.com/x" '
        'TargetMode="External"/><Relationship Id="b" Type="x/officeDocument" Target="gone.xml"/>'
        "</Relationships>"
    ).encode()
    source = rezip(build_docx(["Found"], core=False), replace={"_rels/.rels": rels})
    assert (await app.inspect(source)).text == "Found"


# ─── failure modes ────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("kind", "error"),
    [("refused", AppRefused), ("crashed", AppCrashed), ("too_large", AppTooLarge)],
)
async def test_an_app_told_to_fail_raises_the_typed_failure(
    kind: Any, error: type[AppFailure]
) -> None:
    app = FakeApp(fail={"apply": kind, "inspect": kind, "render": kind})
    source = build_docx()
    for call in (app.apply(source, []), app.inspect(source), app.render(source, 1)):
        with pytest.raises(error, match=re.escape(f"the fake app was told to fail ({kind})")):
            await call


async def test_a_timeout_waits_until_the_deadline() -> None:
    app = FakeApp(fail={"render": "timeout"})
    started = time.monotonic()
    with pytest.raises(AppTimeout, match=r"did not answer within 0\.05 s"):
        await app.render(build_docx(), 1, deadline=0.05)
    assert time.monotonic() - started >= 0.05
    assert (await app.inspect(build_docx())).pages == 1


async def test_fail_next_fails_only_the_next_matching_call() -> None:
    app = FakeApp()
    source = build_docx()
    app.fail_next("crashed", "render")
    app.fail_next("refused")
    with pytest.raises(AppRefused):
        await app.inspect(source)
    await app.inspect(source)
    with pytest.raises(AppCrashed):
        await app.render(source, 1)
    await app.render(source, 1)


async def test_a_slow_app_answers_within_its_deadline_or_times_out_at_it() -> None:
    app = FakeApp(delay=0.05)
    started = time.monotonic()
    await app.inspect(build_docx(), deadline=1)
    assert time.monotonic() - started >= 0.05
    with pytest.raises(AppTimeout):
        await app.apply(build_docx(), [], deadline=0.01)


async def test_a_file_over_the_size_limit_is_too_large() -> None:
    source = build_docx()
    app = FakeApp(max_size=len(source) - 1)
    with pytest.raises(AppTooLarge, match=f"the file is {len(source)} bytes"):
        await app.inspect(source)


async def test_a_zip_whose_parts_inflate_too_far_is_too_large() -> None:
    source = rezip(build_docx(), replace={"word/media/zeros.bin": bytes(100_000)})
    app = FakeApp(max_size=len(source))
    with pytest.raises(AppTooLarge, match="inflate to"):
        await app.apply(source, [])


def test_the_app_has_its_name() -> None:
    assert FakeApp().name == "fake"
    assert FakeApp(name="wordcraft").name == "wordcraft"


# ─── the XML writer ───────────────────────────────────────────────────────────


def test_a_part_with_elements_in_no_namespace_gets_a_prefix_for_the_default_one() -> None:
    parsed = parse_xml("x.xml", b'<r xmlns="urn:a" xmlns:b="urn:b" b:k="1"><plain xmlns=""/></r>')
    written = serialize_xml(parsed)
    reread = etree.fromstring(written)
    assert reread.tag == "{urn:a}r"
    assert reread[0].tag == "plain"
    assert b'xmlns="urn:a"' not in written


def test_a_prefix_rebound_or_missing_is_given_a_fresh_one() -> None:
    root = etree.fromstring(b'<a:r xmlns:a="urn:a"><a:c xmlns:a="urn:c"/></a:r>')
    parsed = parse_xml("x.xml", etree.tostring(root))
    parsed.root.set(f"{{{W}}}val", 'q"<&\n\t\r')
    parsed.root.append(parse_xml("y.xml", b'<w:x xmlns:w="urn:w"/>').root)
    clash = XmlPart(parsed.root, [*parsed.namespaces, ("w", "urn:w")])
    reread = etree.fromstring(serialize_xml(clash))
    assert [child.tag for child in reread] == ["{urn:c}c", "{urn:w}x"]
    assert reread.get(f"{{{W}}}val") == 'q"<&\n\t\r'
    assert reread.nsmap[reread.prefix] == "urn:a"
    assert W in reread.nsmap.values()


def test_text_and_tails_are_escaped() -> None:
    parsed = parse_xml("x.xml", b"<r><a>1 &lt; 2 &amp; 3</a>tail &gt;<b/></r>")
    parsed.root[0].text = "x\ry"
    reread = etree.fromstring(serialize_xml(parsed))
    assert (reread[0].text, reread[0].tail) == ("x\ry", "tail >")


# ─── parsing off the loop, within bounds and the deadline ────────────────────


def many_paragraphs(count: int) -> bytes:
    """Return a .docx whose body holds ``count`` empty paragraphs, stored: no ratio refuses it."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(package("<w:p/>" * count))) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target,
    ):
        for info in source.infolist():
            target.writestr(info.filename, source.read(info))
    return out.getvalue()


async def ticks_while(work: "asyncio.Future[Any]") -> int:
    """Return how often another task ran on the loop while ``work`` was being done."""
    ticks = 0
    while not work.done():
        await asyncio.sleep(0.001)
        ticks += 1
    return ticks


async def test_a_large_document_is_parsed_off_the_event_loop() -> None:
    source = many_paragraphs(20_000)
    inspected = asyncio.ensure_future(FakeApp().inspect(source))
    ticks = await ticks_while(inspected)
    assert (await inspected).pages > 400
    # On the loop, the parse would run in one step and nothing else would (a tick or two).
    assert ticks > 20


async def test_a_document_over_the_element_limit_is_too_large_before_it_is_built() -> None:
    app = FakeApp(max_elements=10_000)
    await app.inspect(many_paragraphs(9_000))
    for call in (
        app.inspect(many_paragraphs(20_000)),
        app.apply(many_paragraphs(20_000), [AppCommand(command="caret.docEnd")]),
        app.render(many_paragraphs(20_000), 1),
    ):
        with pytest.raises(AppTooLarge, match="10,000 XML elements"):
            await call


def test_the_default_element_limit_holds_what_a_long_document_has() -> None:
    assert DEFAULT_MAX_ELEMENTS == 500_000


async def test_a_parse_past_its_deadline_times_out_at_the_deadline() -> None:
    source = many_paragraphs(400_000)
    started = time.monotonic()
    with pytest.raises(AppTimeout):
        await FakeApp().inspect(source, deadline=0.05)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize(
    ("build", "named"), [("xlsx", "an Excel workbook"), ("pptx", "a PowerPoint")]
)
async def test_a_workbook_or_a_deck_is_refused_with_a_reason_that_says_so(
    app: FakeApp, build: str, named: str
) -> None:
    from tests.sheets import build_pptx, build_xlsx

    source = build_xlsx() if build == "xlsx" else build_pptx()
    for call in (app.inspect(source), app.apply(source, []), app.render(source, 1)):
        with pytest.raises(
            AppRefused, match=f"FakeApp reads Word documents \\(.docx\\) only, and this is {named}"
        ):
            await call
