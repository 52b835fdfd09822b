"""FakeApp's review: comments written with their ranges, and tracked changes made, resolved and
toggled.

Every edit is checked by reading the result independently, with python-docx or lxml, never
through FakeApp.
"""

import pytest
from lxml import etree

from artifactr.files import (
    AppRefused,
    ReviewItem,
)
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.fingerprint import fingerprint
from tests.apps.fake.conftest import NS, STAMP, TEXT, cmd, edit, part, rezip, texts, xml
from tests.documents import AUTHOR, W, build_docx, package, paragraph, run

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
