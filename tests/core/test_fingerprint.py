"""Fingerprint and zip screen: what changes a .docx's fingerprint, how hostile zips are refused.

Over the real corpus, the fingerprint agrees with one read through :mod:`zipfile`, survives a
re-zip in another entry order, compression level and time, ignores ``docProps/core.xml``, and
changes with the document's body. Every hostile file in :mod:`tests.hostile` is refused with
its reason after reading 256 KiB of it at most and inflating 2 MiB at most, whatever it declares
or holds, in 64 MiB. Limits can be tightened, and what the format allows
(zip64 fields, empty and tiny parts, folders, both name encodings, a file on disk) is read. A
check of each part runs in the screen's one pass, and a part's own lie is refused first.
"""

import hashlib
import io
import tempfile
import tracemalloc
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from random import Random
from typing import BinaryIO

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

import artifactr.files
from artifactr.files.core import fingerprint as fingerprint_module
from artifactr.files.core import screen as screen_module
from artifactr.files.core.errors import UnsafeFile, UnsafeReason
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.screen import (
    DEFAULT_LIMITS,
    MAX_DIRECTORY_SIZE,
    MAX_ENTRIES,
    MAX_PART_SIZE,
    MAX_RATIO,
    MAX_TOTAL_SIZE,
    RATIO_THRESHOLD,
    Part,
    ZipLimits,
    screen,
)
from tests import hostile
from tests.hostile import DOCUMENT, GIB, MIB, UTF8, build, deflated, package, stored

REFUSAL_READ = 256 * 1024
"""Bytes a refusal may read of a hostile file: its work, whatever the file's size (up to 12 MB)."""

REFUSAL_INFLATED = 2 * MIB
"""Bytes a refusal may inflate of a hostile file, whose parts inflate to gigabytes."""

REFUSAL_MEMORY = 64 * MIB
"""Bytes a refusal may allocate at its peak, as tracemalloc counts them."""

CORE = "docProps/core.xml"
BODY = "word/document.xml"
CP = "http://schemas.openxmlformats.org/package/2006/metadata/core-properties"
DCTERMS = "http://purl.org/dc/terms/"

Change = Callable[[str, bytes], bytes]


# ─── helpers ──────────────────────────────────────────────────────────────────


def reference(data: bytes) -> str:
    """The fingerprint as the first draft computed it, reading through zipfile."""
    digest = hashlib.sha256()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in sorted(archive.infolist(), key=lambda entry: entry.filename):
            if info.is_dir() or info.filename == CORE:
                continue
            name = info.filename.encode()
            content = archive.read(info)
            digest.update(len(name).to_bytes(8, "big") + name)
            digest.update(len(content).to_bytes(8, "big") + content)
    return digest.hexdigest()


def unchanged(name: str, content: bytes) -> bytes:
    return content


def rezip(
    data: bytes,
    change: Change = unchanged,
    *,
    method: int = zipfile.ZIP_DEFLATED,
    level: int = 1,
    when: tuple[int, int, int, int, int, int] = (2001, 2, 3, 4, 5, 6),
    added: dict[str, bytes] | None = None,
) -> bytes:
    """The same parts, changed by ``change``, written in reverse order with other settings."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in reversed(source.infolist()):
            copy = zipfile.ZipInfo(info.filename, date_time=when)
            copy.compress_type = method
            content = change(info.filename, source.read(info))
            target.writestr(copy, content, compresslevel=level)
        for name, content in (added or {}).items():
            target.writestr(zipfile.ZipInfo(name, date_time=when), content)
    return out.getvalue()


def restamp(name: str, content: bytes) -> bytes:
    """Core properties as a save leaves them: a new modified time and revision."""
    if name != CORE:
        return content
    root = etree.fromstring(content, etree.XMLParser(resolve_entities=False))
    for tag, value in (
        (f"{{{DCTERMS}}}modified", "2031-01-02T03:04:05Z"),
        (f"{{{CP}}}revision", "97"),
    ):
        element = root.find(tag)
        if element is None:
            element = etree.SubElement(root, tag)
        element.text = value
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def edit_body(name: str, content: bytes) -> bytes:
    return content + b"<!-- edited -->" if name == BODY else content


def restamped(data: bytes) -> bytes:
    """The file after a save that changed nothing but its core properties."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        has_core = CORE in archive.namelist()
    core = restamp(CORE, f'<cp:coreProperties xmlns:cp="{CP}"/>'.encode())
    return rezip(data, restamp, added=None if has_core else {CORE: core})


def refusal(source: bytes | BinaryIO, limits: ZipLimits = DEFAULT_LIMITS) -> UnsafeReason:
    with pytest.raises(UnsafeFile) as refused:
        fingerprint(source, limits=limits)
    return refused.value.reason


def traced_peak(run: Callable[[], object]) -> int:
    """Peak traced bytes of one refusal."""
    tracemalloc.start()
    try:
        with pytest.raises(UnsafeFile):
            run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


class CountingReader(io.BytesIO):
    """A file that counts the bytes read from it."""

    read_bytes = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.read_bytes += len(data)
        return data


class CountingFile(io.FileIO):
    """A file on disk that counts the bytes read from it."""

    read_bytes = 0

    def read(self, size: int = -1, /) -> bytes | None:
        data = super().read(size)
        self.read_bytes += len(data or b"")
        return data


class Inflated:
    """A check that reads every part to its end, counting the bytes the screen inflated."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, part: Part, chunks: Iterator[bytes]) -> None:
        for chunk in chunks:
            self.count += len(chunk)


@pytest.fixture(scope="session")
def hostile_file(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A hostile file by its sentence in REFUSED, made once a session and kept on disk."""
    folder = tmp_path_factory.mktemp("hostile")
    made: dict[str, Path] = {}

    def path_of(label: str) -> Path:
        if label not in made:
            path = folder / f"{len(made):02d}.zip"
            path.write_bytes(hostile.REFUSED[label][0]())
            made[label] = path
        return made[label]

    return path_of


# ─── the corpus ───────────────────────────────────────────────────────────────


def failing(corpus: list[Path], check: Callable[[bytes], bool]) -> list[str]:
    return [path.name for path in corpus if not check(path.read_bytes())]


def test_every_corpus_file_has_the_fingerprint_zipfile_reads(corpus: list[Path]) -> None:
    assert failing(corpus, lambda data: fingerprint(data) == reference(data)) == []


def test_a_rezip_in_another_order_level_and_time_keeps_the_fingerprint(
    corpus: list[Path],
) -> None:
    assert failing(corpus, lambda data: fingerprint(rezip(data)) == fingerprint(data)) == []


def test_a_rezip_with_every_part_stored_keeps_the_fingerprint(corpus: list[Path]) -> None:
    def same(data: bytes) -> bool:
        again = rezip(data, method=zipfile.ZIP_STORED, when=(1980, 1, 1, 0, 0, 0))
        return fingerprint(again) == fingerprint(data)

    assert failing(corpus, same) == []


def test_a_change_to_core_properties_alone_keeps_the_fingerprint(corpus: list[Path]) -> None:
    def same(data: bytes) -> bool:
        saved = restamped(data)
        with zipfile.ZipFile(io.BytesIO(saved)) as archive:
            assert b"2031-01-02T03:04:05Z" in archive.read(CORE)
        return fingerprint(saved) == fingerprint(data)

    assert failing(corpus, same) == []


def test_a_change_to_the_document_body_changes_the_fingerprint(corpus: list[Path]) -> None:
    def differs(data: bytes) -> bool:
        return fingerprint(rezip(data, edit_body)) != fingerprint(data)

    assert failing(corpus, differs) == []


def test_every_corpus_file_passes_the_screen(corpus: list[Path]) -> None:
    assert failing(corpus, lambda data: screen(data) is None) == []


def test_a_corpus_file_cut_short_is_not_a_zip(corpus: list[Path]) -> None:
    def refused(data: bytes) -> bool:
        cut = [hostile.truncated(data), hostile.one_byte_short(data)]
        return [refusal(each) for each in cut] == ["not_a_zip", "not_a_zip"]

    assert failing(corpus, refused) == []


@pytest.mark.parametrize(
    ("limits", "reason"),
    [
        (ZipLimits(max_entries=2), "too_many_entries"),
        (ZipLimits(max_directory_size=100), "too_many_entries"),
        (ZipLimits(max_part_size=1000), "part_too_large"),
        (ZipLimits(max_total_size=10_000), "total_too_large"),
        (ZipLimits(max_ratio=1.5, ratio_threshold=0), "inflate_ratio"),
    ],
    ids=["entries", "directory", "part", "total", "ratio"],
)
def test_tighter_limits_refuse_a_real_file(
    corpus: list[Path], limits: ZipLimits, reason: UnsafeReason
) -> None:
    largest = max(corpus, key=lambda path: path.stat().st_size)
    assert refusal(largest.read_bytes(), limits) == reason


# ─── hostile files ────────────────────────────────────────────────────────────


@pytest.mark.parametrize("label", list(hostile.REFUSED))
def test_a_hostile_file_is_refused_for_its_reason_after_little_work_in_bounded_memory(
    hostile_file: Callable[[str], Path], label: str
) -> None:
    inflated = Inflated()
    with CountingFile(hostile_file(label)) as file:
        with pytest.raises(UnsafeFile) as refused:
            fingerprint(file, check=inflated)
        assert refused.value.reason == hostile.REFUSED[label][1]
        assert file.read_bytes < REFUSAL_READ
        assert inflated.count < REFUSAL_INFLATED
        peak = traced_peak(lambda: fingerprint(file))
    assert peak < REFUSAL_MEMORY


@pytest.mark.parametrize("label", list(hostile.REFUSED))
def test_screen_refuses_a_hostile_file_for_the_same_reason(
    hostile_file: Callable[[str], Path], label: str
) -> None:
    with hostile_file(label).open("rb") as file, pytest.raises(UnsafeFile) as refused:
        screen(file)
    assert refused.value.reason == hostile.REFUSED[label][1]


def test_a_lying_bomb_is_refused_after_reading_a_sliver_of_it() -> None:
    bomb = CountingReader(hostile.lying_bomb(expands_to=4 * GIB, declares=MIB))
    assert refusal(bomb) == "part_too_large"
    assert bomb.read_bytes < 256 * 1024 < len(bomb.getvalue()) // 16


SEEDS = [
    hostile.sound(),
    build(
        [part._replace(zip64=True) for part in package(deflated(BODY, DOCUMENT))],
        zip64_end=True,
    ),
    build(package(stored(BODY, DOCUMENT), deflated("word/styles.xml", b"<w:styles/>"))),
]
"""Small sound packages to damage: plain, zip64 throughout, and stored beside deflated."""


@given(
    seed=st.sampled_from(SEEDS),
    damage=st.lists(st.tuples(st.integers(0, 2**16), st.integers(0, 255)), min_size=1, max_size=4),
)
def test_a_damaged_package_is_read_or_refused_and_nothing_else(
    seed: bytes, damage: list[tuple[int, int]]
) -> None:
    data = bytearray(seed)
    for position, value in damage:
        data[position % len(data)] = value
    try:
        printed = fingerprint(bytes(data))
    except UnsafeFile:
        return
    assert len(printed) == 64


def test_the_deflated_zeros_of_a_bomb_inflate_to_exactly_their_size() -> None:
    assert zlib.decompress(hostile.deflated_zeros(3), -zlib.MAX_WBITS) == bytes(3 * MIB)


def test_a_refusal_is_an_unsafe_file_with_its_reason_in_its_details() -> None:
    with pytest.raises(UnsafeFile) as refused:
        fingerprint(hostile.zip_bomb())
    assert refused.value.details() == {"reason": "part_too_large"}
    assert "word/document.xml" in str(refused.value)


# ─── what the format allows ───────────────────────────────────────────────────


def test_the_default_limits_are_the_documented_constants() -> None:
    documented = ZipLimits(
        max_entries=MAX_ENTRIES,
        max_directory_size=MAX_DIRECTORY_SIZE,
        max_part_size=MAX_PART_SIZE,
        max_total_size=MAX_TOTAL_SIZE,
        max_ratio=MAX_RATIO,
        ratio_threshold=RATIO_THRESHOLD,
    )
    assert documented == DEFAULT_LIMITS
    assert (MAX_ENTRIES, MAX_PART_SIZE, MAX_TOTAL_SIZE, MAX_RATIO) == (
        10_000,
        256 * MIB,
        512 * MIB,
        200,
    )


def test_empty_and_tiny_parts_are_never_refused_for_their_ratio() -> None:
    empty_deflated = deflated("word/empty.xml", b"")
    parts = package(
        deflated(BODY, DOCUMENT),
        deflated("word/media/zeros.bin", bytes(RATIO_THRESHOLD // 2)),
        empty_deflated,
        empty_deflated._replace(name="word/bare.xml", data=b""),
        stored("word/stored.xml", b""),
    )
    screen(build(parts))
    assert parts[2].size / len(parts[2].data) > MAX_RATIO


def test_zip64_fields_give_the_same_fingerprint_as_plain_ones() -> None:
    timestamp = b"UT\x05\x00\x01\x00\x00\x00\x00"
    parts = package(deflated(BODY, DOCUMENT), stored("word/media/a.bin", b"abc"))
    wide = [part._replace(zip64=True, extra=timestamp) for part in parts]
    assert fingerprint(build(wide, zip64_end=True)) == fingerprint(build(parts))


def test_an_archive_comment_is_left_out() -> None:
    parts = package(deflated(BODY, DOCUMENT))
    assert fingerprint(build(parts, comment=b"PK, a comment")) == fingerprint(build(parts))


def test_a_name_reads_the_same_in_utf8_and_cp437() -> None:
    name = "word/média.xml"
    ascii_only = build(package(deflated(name, DOCUMENT)))
    utf8 = build(package(deflated(name, DOCUMENT)._replace(flags=UTF8)))
    assert ascii_only != utf8
    assert fingerprint(ascii_only) == fingerprint(utf8)


def test_folders_and_core_properties_in_any_case_are_left_out() -> None:
    plain = build(package(deflated(BODY, DOCUMENT)))
    extra = build(
        package(
            stored("word/", b""),
            deflated(BODY, DOCUMENT),
            deflated("docProps/Core.xml", b"<cp:coreProperties/>"),
        )
    )
    assert fingerprint(extra) == fingerprint(plain)


def test_a_renamed_part_changes_the_fingerprint() -> None:
    first = build(package(deflated(BODY, DOCUMENT)))
    second = build(package(deflated("word/document2.xml", DOCUMENT)))
    assert fingerprint(first) != fingerprint(second)


def test_a_file_on_disk_is_read_from_its_start_and_put_back_where_it_was(tmp_path: Path) -> None:
    data = build(package(deflated(BODY, DOCUMENT)))
    path = tmp_path / "file.docx"
    path.write_bytes(data)
    with path.open("rb") as file:
        file.seek(7)
        assert fingerprint(file) == fingerprint(data)
        assert file.tell() == 7
        screen(file)
        assert file.tell() == 7


def test_a_large_file_spooled_to_disk_is_read_in_flat_memory() -> None:
    noise = Random(0).randbytes(48 * MIB)
    data = build(package(deflated(BODY, DOCUMENT), stored("word/media/noise.bin", noise)))
    del noise
    with tempfile.SpooledTemporaryFile(max_size=MIB) as spooled:
        spooled.write(data)
        tracemalloc.start()
        try:
            printed = fingerprint(spooled)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert printed == fingerprint(data)
    assert peak < 2 * MIB


def test_a_password_protected_document_is_refused_as_encrypted_and_told_to_drop_it() -> None:
    with pytest.raises(UnsafeFile) as refused:
        fingerprint(hostile.password_protected())
    assert refused.value.reason == "encrypted"
    assert "remove the password" in str(refused.value)
    assert "end record" not in str(refused.value)


@pytest.mark.parametrize(
    ("at", "value"),
    [(512 + 4, 1), (76, hostile.FREE)],
    ids=["a directory chain that loops", "no allocation table for the directory"],
)
def test_a_compound_files_directory_is_read_within_its_bounds(at: int, value: int) -> None:
    data = bytearray(hostile.compound("EncryptedPackage"))
    data[at : at + 4] = value.to_bytes(4, "little")
    assert refusal(bytes(data)) == "encrypted"


def test_an_older_word_document_is_told_to_be_saved_as_docx() -> None:
    with pytest.raises(UnsafeFile) as refused:
        fingerprint(hostile.legacy_doc())
    assert refused.value.reason == "not_docx"
    assert ".docx" in str(refused.value)


def test_the_screens_names_still_import_from_the_fingerprint_and_the_top_level() -> None:
    for name in ("DEFAULT_LIMITS", "MAX_ENTRIES", "MAX_RATIO", "ZipLimits", "screen"):
        assert getattr(fingerprint_module, name) is getattr(screen_module, name)
    assert (artifactr.files.ZipLimits, artifactr.files.DEFAULT_LIMITS) == (
        ZipLimits,
        DEFAULT_LIMITS,
    )


# ─── one reader, one pass ─────────────────────────────────────────────────────


def test_a_check_sees_each_part_once_in_name_order_and_what_it_leaves_is_still_read() -> None:
    parts = package(
        deflated(BODY, DOCUMENT),
        stored("word/media/a.bin", b"abc"),
        stored("word/media/", b""),
        deflated(CORE, b"<core/>"),
    )
    data = build(parts)
    seen: list[tuple[str, int, bytes]] = []

    def check(part: Part, chunks: Iterator[bytes]) -> None:
        seen.append((part.name, part.size, next(chunks, b"")[:3]))

    assert fingerprint(data, check=check) == fingerprint(data) == reference(data)
    assert [(name, size) for name, size, _ in seen] == sorted(
        (part.name, part.size) for part in parts
    )
    assert ("word/media/a.bin", 3, b"abc") in seen


def refuse_the_body(part: Part, chunks: Iterator[bytes]) -> None:
    next(chunks, b"")
    if part.name == BODY:
        raise UnsafeFile("not_docx", f"{part.name} is not well-formed XML")


def test_a_part_that_lies_about_its_size_is_refused_for_that_whatever_a_check_found() -> None:
    with pytest.raises(UnsafeFile) as refused:
        screen(hostile.lying_bomb(), check=refuse_the_body)
    assert refused.value.reason == "part_too_large"
    sound = build(package(deflated(BODY, DOCUMENT)))
    with pytest.raises(UnsafeFile, match="is not well-formed XML") as refused:
        fingerprint(sound, check=refuse_the_body)
    assert refused.value.reason == "not_docx"


def test_an_extra_field_that_runs_past_its_end_is_refused_as_other_readers_refuse_it() -> None:
    part = deflated(BODY, DOCUMENT)._replace(extra=b"\x99\x99\xff\x00")
    with pytest.raises(
        UnsafeFile, match=r"an extra field of word/document\.xml runs past"
    ) as refused:
        fingerprint(build(package(part)))
    assert refused.value.reason == "not_a_zip"


def test_an_archive_that_spans_several_disks_is_refused() -> None:
    data = bytearray(build(package(deflated(BODY, DOCUMENT)), zip64_end=True))
    locator = data.rindex(b"PK\x06\x07")
    data[locator + 16 : locator + 20] = (2).to_bytes(4, "little")
    with pytest.raises(UnsafeFile, match="spans several disks") as refused:
        screen(bytes(data))
    assert refused.value.reason == "not_a_zip"


def unicode_path(header: str, name: bytes, *, version: int = 1) -> bytes:
    """Return Info-ZIP's Unicode Path field (0x7075) that names a part ``header`` as ``name``."""
    body = bytes([version]) + zlib.crc32(header.encode()).to_bytes(4, "little") + name
    return (0x7075).to_bytes(2, "little") + len(body).to_bytes(2, "little") + body


def test_a_part_named_a_second_way_is_refused_as_zipfile_would_read_that_name() -> None:
    # zipfile renames the part to word/document.xml: a second body the screen never checked.
    twin = deflated("word/notes.xml", b"<w:document/>")
    renamed = twin._replace(extra=unicode_path("word/notes.xml", BODY.encode()))
    data = build(package(deflated(BODY, DOCUMENT), renamed))
    assert zipfile.ZipFile(io.BytesIO(data)).namelist()[-1] == BODY
    with pytest.raises(UnsafeFile, match=r"names the part word/notes\.xml a second way") as refused:
        fingerprint(data)
    assert refused.value.reason == "not_a_zip"


def test_a_unicode_path_field_zipfile_ignores_or_that_agrees_changes_nothing() -> None:
    body = deflated(BODY, DOCUMENT)
    plain = fingerprint(build(package(body)))
    for extra in (
        unicode_path(BODY, BODY.encode()),  # the same name
        unicode_path(BODY, b""),  # empty: zipfile keeps the header's name
        unicode_path(BODY, b"word/other.xml", version=2),  # a version zipfile doesn't read
        unicode_path("word/else.xml", b"word/other.xml"),  # another name's CRC-32
    ):
        assert fingerprint(build(package(body._replace(extra=extra)))) == plain


def test_a_corrupt_unicode_path_field_is_refused() -> None:
    part = deflated(BODY, DOCUMENT)._replace(extra=b"\x75\x70\x02\x00\x01\x00")
    with pytest.raises(UnsafeFile, match="corrupt Unicode Path field") as refused:
        fingerprint(build(package(part)))
    assert refused.value.reason == "not_a_zip"
