"""FakeApp's text commands: inserting, splitting, replacing, selecting, and styles.

Every edit is checked by reading the result independently, with python-docx or lxml, never
through FakeApp.
"""

import io
from typing import Any

import docx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from artifactr.files import (
    AppRefused,
)
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.fingerprint import fingerprint
from tests.apps.fake.conftest import NOW, NS, TEXT, cmd, edit, part, rezip, texts, xml
from tests.documents import W, build_docx, package, paragraph, run

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


async def test_a_misnamed_style_is_refused_naming_the_nearest_and_the_documents_styles(
    app: FakeApp,
) -> None:
    with pytest.raises(AppRefused) as refused:
        await app.apply(build_docx(), [cmd("para.style", style="Headng 2")])
    assert str(refused.value) == (
        "no style `Headng 2`; the nearest: Heading 2, Heading 3, Heading 1; the document's: "
        "Normal, Title, Heading 1, Heading 2, Heading 3"
    )


async def test_the_inspection_names_the_paragraph_and_character_styles(app: FakeApp) -> None:
    styles = (
        f'<w:styles xmlns:w="{W}"><w:style w:type="character" w:styleId="Strong">'
        '<w:name w:val="Strong"/></w:style><w:style w:type="paragraph"/>'
        '<w:style w:styleId="Quote"/><w:style w:type="paragraph" w:styleId="Heading1">'
        '<w:name w:val="heading 1"/></w:style></w:styles>'
    ).encode()
    source = rezip(build_docx(["Text"]), replace={"word/styles.xml": styles})
    found = (await app.inspect(source)).styles
    assert found is not None
    assert (found.paragraph, found.character) == (("Quote", "Heading 1"), ("Strong",))
    bare = (await app.inspect(build_docx(["Text"], styles=False))).styles
    assert bare is not None
    assert (bare.paragraph, bare.character) == ((), ())


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
