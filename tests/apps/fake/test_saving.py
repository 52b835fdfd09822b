"""FakeApp's saves: fingerprints, core properties, untouched parts and namespaces, and its XML
writer.

Every edit is checked by reading the result independently, with python-docx or lxml, never
through FakeApp.
"""

from lxml import etree

from artifactr.files.apps.fake import FakeApp
from artifactr.files.apps.fake._xml import (
    STRICT,
    TRANSITIONAL,
    XmlPart,
    parse_xml,
    serialize_xml,
)
from artifactr.files.core.fingerprint import fingerprint
from tests.apps.fake.conftest import NS, STAMP, cmd, edit, part, parts, rezip, xml
from tests.documents import DATE, W, build_docx

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
