"""The worker's screen: XML declarations, nesting and tokens, image sizes, and packages inside.

Every real document passes; each hostile construction is refused with its reason and names the
part; what can't be measured (a truncated image, an HTML part) passes to the app's own limits.
"""

import io
import struct
import zipfile
import zlib
from pathlib import Path
from xml.etree import ElementTree

import pytest
from PIL import Image
from worker.artifactr_files_worker import Screening, screen_file
from worker.artifactr_files_worker.screen import MAX_JPEG_STEPS

from artifactr.files.core.errors import UnsafeFile
from tests import hostile
from tests.apps.wordcraft.conftest import report_document, saved

MIB = 1024 * 1024
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def with_parts(parts: dict[str, bytes], *, stored: bool = False) -> bytes:
    """Return the report with parts added or replaced."""
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(saved(report_document()))) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target,
    ):
        for info in source.infolist():
            if info.filename not in parts:
                target.writestr(info, source.read(info))
        for name, data in parts.items():
            target.writestr(name, data, compress_type=method)
    return out.getvalue()


def refusal(data: bytes, screening: Screening | None = None) -> UnsafeFile:
    with pytest.raises(UnsafeFile) as refused:
        screen_file(io.BytesIO(data), *((screening,) if screening else ()))
    return refused.value


def passes(data: bytes, screening: Screening | None = None) -> None:
    screen_file(io.BytesIO(data), *((screening,) if screening else ()))


def png(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    return (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def segment(marker: int, payload: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def jpeg(width: int, height: int, before: bytes = b"") -> bytes:
    frame = segment(0xC0, struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00")
    return b"\xff\xd8" + segment(0xE0, b"JFIF\x00\x01\x01") + before + frame + b"\xff\xd9"


# ─── what passes ──────────────────────────────────────────────────────────────


def test_every_real_document_passes(corpus: list[Path]) -> None:
    for path in corpus:
        passes(path.read_bytes())


def test_a_document_with_real_pictures_passes_and_the_file_is_put_back_where_it_was() -> None:
    pictures: dict[str, bytes] = {}
    for kind in ("PNG", "GIF", "JPEG"):
        buffer = io.BytesIO()
        Image.new("RGB", (640, 480), "white").save(buffer, kind)
        pictures[f"word/media/picture.{kind.lower()}"] = buffer.getvalue()
    source = io.BytesIO(with_parts(pictures))
    source.seek(3)
    screen_file(source)
    assert source.tell() == 3


# ─── the zip screen runs first ────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (hostile.zip_bomb, "part_too_large"),
        (hostile.not_a_zip, "not_docx"),
        (hostile.password_protected, "encrypted"),
        (hostile.empty, "not_a_zip"),
        (lambda: hostile.truncated(hostile.sound()), "not_a_zip"),
    ],
    ids=["a zip bomb", "not a zip", "a password", "an empty file", "a truncated package"],
)
def test_the_packages_own_zip_screen_runs_first(make: object, reason: str) -> None:
    assert refusal(make()).reason == reason


def test_a_directory_another_zip_reader_would_refuse_is_refused() -> None:
    # An extra field that runs past its end: Python's zipfile refuses it, and so does the screen.
    part = hostile.deflated("word/document.xml", hostile.DOCUMENT)
    data = hostile.build(hostile.package(part._replace(extra=b"\x99\x99\xff\x00")))
    refused = refusal(data)
    assert refused.reason == "not_a_zip"
    assert "can't be read" in str(refused)


# ─── XML ──────────────────────────────────────────────────────────────────────

LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    + b"".join(
        f' <!ENTITY lol{n} "{f"&lol{n - 1 if n > 1 else ''};" * 10}">\n'.encode()
        for n in range(1, 10)
    )
    + b"]>\n<w:document "
    + W.encode()
    + b"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>"
)


def test_a_billion_laughs_is_refused_before_any_entity_expands() -> None:
    refused = refusal(with_parts({"word/document.xml": LAUGHS}))
    assert refused.reason == "not_docx"
    assert str(refused).startswith("word/document.xml declares a document type")


def test_an_external_entity_is_refused_in_any_encoding() -> None:
    declared = '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE a SYSTEM "file:///etc/passwd"><a/>'
    refused = refusal(with_parts({"customXml/item1.xml": declared.encode("utf-16")}))
    assert refused.reason == "not_docx"


def test_a_part_not_named_as_xml_is_screened_if_it_starts_like_xml() -> None:
    refused = refusal(with_parts({"word/document.bin": LAUGHS}))
    assert refused.reason == "not_docx"
    assert "word/document.bin" in str(refused)


def test_an_html_part_with_a_plain_doctype_and_loose_tags_passes() -> None:
    passes(with_parts({"word/afchunk.htm": b"<!DOCTYPE html>\n<html><p>loose<br></html>"}))


def test_a_part_named_as_xml_must_be_well_formed() -> None:
    refused = refusal(with_parts({"word/footer1.xml": b"<w:ftr><w:p></w:ftr>"}))
    assert refused.reason == "not_docx"
    assert "word/footer1.xml is not well-formed XML" in str(refused)


def nested(depth: int) -> bytes:
    return b"<a>" * depth + b"</a>" * depth


def test_elements_nested_past_the_limit_are_refused_and_at_it_pass() -> None:
    passes(with_parts({"word/document.xml": nested(256)}))
    refused = refusal(with_parts({"word/document.xml": nested(257)}))
    assert refused.reason == "too_deep"
    assert str(refused) == "word/document.xml nests elements more than 256 deep"


def test_a_million_deep_nesting_stored_flat_is_refused_by_depth() -> None:
    refused = refusal(with_parts({"word/document.xml": nested(1_000_000)}, stored=True))
    assert refused.reason == "too_deep"
    assert "deep" in str(refused)


def elements(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sum(
            sum(1 for _ in ElementTree.fromstring(archive.read(name)).iter())
            for name in archive.namelist()
            if name.endswith((".xml", ".rels"))
        )


def test_the_elements_of_every_part_count_against_one_limit() -> None:
    part = b"<a>" + b"<b/>" * 29 + b"</a>"
    screening = Screening(max_elements=elements(saved(report_document())) + 50)
    passes(with_parts({"word/extra1.xml": part}), screening)
    refused = refusal(with_parts({"word/extra1.xml": part, "word/extra2.xml": part}), screening)
    assert refused.reason == "too_many_elements"
    assert str(refused) == f"the package holds more than {screening.max_elements:,} XML elements"


def test_a_token_that_runs_on_past_its_limit_is_refused() -> None:
    giant = b'<a x="' + b"y" * (3 * MIB) + b'"/>'
    refused = refusal(
        with_parts({"word/document.xml": giant}, stored=True), Screening(max_token=MIB)
    )
    assert refused.reason == "token_too_large"
    assert "token over 1,048,576 bytes" in str(refused)


def test_long_text_is_not_a_long_token() -> None:
    text = b"<a>" + b"words " * (MIB // 2) + b"</a>"
    passes(with_parts({"word/document.xml": text}, stored=True), Screening(max_token=MIB))


# ─── images ───────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("picture", "pixels"),
    [
        (png(100_000, 100_000), "10,000,000,000"),
        (gif(65_535, 65_535), "4,294,836,225"),
        (jpeg(60_000, 60_000), "3,600,000,000"),
        (jpeg(2_000, 0), "131,070,000"),
        (
            jpeg(20_000, 20_000, before=b"\xff\xff\xff\xd0" + segment(0xE1, bytes(60_000))),
            "400,000,000",
        ),
    ],
    ids=["png", "gif", "jpeg", "jpeg of unknown height", "jpeg after fill, restart and exif"],
)
def test_an_image_that_declares_too_many_pixels_is_refused(picture: bytes, pixels: str) -> None:
    refused = refusal(with_parts({"word/media/image1.bin": picture}))
    assert refused.reason == "image_too_large"
    assert str(refused) == (
        f"word/media/image1.bin is an image of {pixels} pixels; the limit is 100,000,000"
    )


@pytest.mark.parametrize(
    "picture",
    [
        png(10_000, 10_000),
        png(100_000, 100_000)[:20],
        png(100_000, 100_000).replace(b"IHDR", b"IDAT"),
        gif(9_000, 9_000),
        b"GIF89a\x01",
        jpeg(10_000, 10_000),
        b"\xff\xd8" + segment(0xDA, b"\x00" * 10) + jpeg(60_000, 60_000),
        b"\xff\xd8\x00\x00" + jpeg(60_000, 60_000),
        b"\xff\xd8\xff\xe0\x00\x01" + jpeg(60_000, 60_000),
        b"\xff\xd8\xff\xe0\x00",
        b"\xff\xd8" + segment(0xE0, bytes(100))[:50],
        b"\xff\xd8\xff\xc0\x00\x0b\x08",
        b"\xff\xd8\xff",
    ],
    ids=[
        "png at the limit",
        "png cut short",
        "png without its header first",
        "gif under the limit",
        "gif cut short",
        "jpeg at the limit",
        "jpeg whose scan starts first",
        "jpeg with junk between segments",
        "jpeg with a length under two",
        "jpeg cut in a length",
        "jpeg cut in a segment",
        "jpeg cut in its frame header",
        "jpeg cut at a marker",
    ],
)
def test_an_image_within_the_limit_or_without_a_readable_size_passes(picture: bytes) -> None:
    passes(with_parts({"word/media/image1.bin": picture}))


def test_a_jpeg_whose_size_comes_after_a_mebibyte_of_metadata_is_still_measured() -> None:
    metadata = segment(0xE1, bytes(60_000)) * 20
    picture = jpeg(20_000, 20_000, metadata)
    refused = refusal(with_parts({"word/media/image1.jpeg": picture}, stored=True))
    assert refused.reason == "image_too_large"
    assert str(refused).endswith("an image of 400,000,000 pixels; the limit is 100,000,000")


def test_a_jpeg_that_hides_its_size_past_the_steps_is_refused() -> None:
    filler = segment(0xE1, b"") * (MAX_JPEG_STEPS // 2)
    refused = refusal(with_parts({"word/media/image1.jpeg": jpeg(10, 10, before=filler)}))
    assert refused.reason == "image_too_large"
    assert "isn't declared within 65,536 steps" in str(refused)


# ─── packages inside ──────────────────────────────────────────────────────────


def test_a_document_embedded_in_a_document_passes() -> None:
    passes(with_parts({"word/embeddings/inner.docx": saved(report_document())}))


def test_a_zip_bomb_inside_a_document_is_refused_and_named() -> None:
    refused = refusal(with_parts({"word/embeddings/bomb.zip": hostile.zip_bomb()}, stored=True))
    assert refused.reason == "part_too_large"
    assert str(refused).startswith("word/embeddings/bomb.zip, a package inside: ")


def test_a_hostile_part_deep_inside_is_refused_by_its_own_reason() -> None:
    inner = with_parts({"word/document.xml": LAUGHS})
    refused = refusal(with_parts({"word/embeddings/inner.docx": inner}))
    assert refused.reason == "not_docx"
    assert "word/embeddings/inner.docx, a package inside: word/document.xml declares" in str(
        refused
    )


def test_packages_nested_past_the_limit_are_refused() -> None:
    data = saved(report_document())
    for level in range(3):
        data = with_parts({f"word/embeddings/level{level}.docx": data})
    refused = refusal(data)
    assert refused.reason == "nested_too_deep"
    assert "a package nested 3 deep; the limit is 2" in str(refused)


def test_a_zip_inside_that_is_not_a_package_is_refused() -> None:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as plain:
        plain.writestr("notes.txt", "hello")
    refused = refusal(with_parts({"word/embeddings/notes.zip": out.getvalue()}))
    assert refused.reason == "not_docx"
