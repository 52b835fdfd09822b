"""FakeApp's inspection of real .docx bytes, and its refusal of a package it can't read.

Every edit is checked by reading the result independently, with python-docx or lxml, never
through FakeApp.
"""

import io
import random
import tempfile
import zipfile
from pathlib import Path

import docx
import pytest

from artifactr.files import (
    AppRefused,
    AppTooLarge,
    ReviewItem,
)
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.fingerprint import fingerprint
from tests.apps.fake.conftest import NS, TEXT, cmd, parts, rezip
from tests.documents import AUTHOR, DATE, W, build_docx

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
