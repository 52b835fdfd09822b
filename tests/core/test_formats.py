"""A package's kind comes from its content: its main part, never its name."""

import pytest

from artifactr.files.core.errors import UnsafeFile
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.formats import Sniffer, kind_name, media_type_of
from artifactr.files.core.manifests import DOCX, PPTX, XLSX
from tests import hostile
from tests.documents import build_docx
from tests.sheets import PPTX_MAIN, XLSX_MAIN, build_pptx, build_xlsx, with_main_type, with_vba


def sniffed(data: bytes) -> str:
    sniffer = Sniffer()
    fingerprint(data, check=sniffer)
    return sniffer.media_type()


def refusal(data: bytes) -> UnsafeFile:
    with pytest.raises(UnsafeFile) as refused:
        sniffed(data)
    return refused.value


def test_each_native_format_is_read_from_its_main_part() -> None:
    assert sniffed(build_docx(("Hello",))) == DOCX
    assert sniffed(build_xlsx()) == XLSX
    assert sniffed(build_pptx()) == PPTX
    assert kind_name(XLSX) == "an Excel workbook (.xlsx)"
    assert kind_name("text/plain") == "text/plain"


@pytest.mark.parametrize(
    ("old", "new", "reason", "named"),
    [
        (
            XLSX_MAIN,
            "application/vnd.ms-excel.sheet.macroEnabled.main+xml",
            "macro_enabled",
            ".xlsm",
        ),
        (
            XLSX_MAIN,
            "application/vnd.ms-excel.sheet.binary.macroEnabled.main",
            "binary_format",
            ".xlsb",
        ),
        (
            PPTX_MAIN,
            "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
            "macro_enabled",
            ".pptm",
        ),
    ],
)
def test_a_macro_enabled_or_binary_package_is_refused_by_name(
    old: str, new: str, reason: str, named: str
) -> None:
    source = build_xlsx() if old == XLSX_MAIN else build_pptx()
    refused = refusal(with_main_type(source, old, new))
    assert refused.reason == reason
    assert named in str(refused)


def test_a_vba_project_is_refused_whatever_the_content_type_says() -> None:
    refused = refusal(with_vba(build_xlsx()))
    assert refused.reason == "macro_enabled"
    assert "xl/vbaProject.bin" in str(refused)


@pytest.mark.parametrize(
    ("streams", "named"),
    [(("Workbook",), ".xls"), (("Book",), ".xls"), (("PowerPoint Document",), ".ppt")],
)
def test_an_older_binary_office_file_is_refused_by_name(
    streams: tuple[str, ...], named: str
) -> None:
    with pytest.raises(UnsafeFile) as refused:
        fingerprint(hostile.compound(*streams, "\x05SummaryInformation"))
    assert refused.value.reason == "binary_format"
    assert named in str(refused.value)


def test_a_package_of_no_native_kind_is_refused() -> None:
    template = "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml"
    refused = refusal(with_main_type(build_xlsx(), XLSX_MAIN, template))
    assert refused.reason == "not_docx"
    assert template in str(refused)


def test_a_package_that_names_no_main_part_is_refused() -> None:
    types = b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'
    with pytest.raises(UnsafeFile, match="names no main part"):
        media_type_of(types, None)
    rels = (
        b'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        b"<Other/><Relationship Id='r1' Type='x/officeDocument' Target='http://a/b'"
        b" TargetMode='External'/></Relationships>"
    )
    with pytest.raises(UnsafeFile, match="names no main part"):
        media_type_of(types, rels)


def test_the_main_part_takes_its_type_from_a_default_by_extension() -> None:
    types = (
        b'<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        b'<Default Extension="rels" ContentType="x"/>'
        b'<Default Extension="xml" ContentType="' + XLSX_MAIN.encode() + b'"/></Types>'
    )
    rels = (
        b"<Relationships><Relationship Type='a/officeDocument' Target='xl/workbook.xml'/>"
        b"</Relationships>"
    )
    assert media_type_of(types, rels) == XLSX
    no_extension = rels.replace(b"xl/workbook.xml", b"xl/workbook")
    with pytest.raises(UnsafeFile, match=r"names no main part|its main part is"):
        media_type_of(types, no_extension)


@pytest.mark.parametrize(
    "types",
    [b"<!DOCTYPE x [<!ENTITY a 'b'>]><Types/>", b"<Types", b"x" * (1024 * 1024 + 1)],
)
def test_hostile_content_types_are_refused(types: bytes) -> None:
    rels = b"<Relationships><Relationship Type='a/officeDocument' Target='x.xml'/></Relationships>"
    source = hostile.build(
        [hostile.stored("[Content_Types].xml", types), hostile.deflated("_rels/.rels", rels)]
    )
    refused = refusal(source)
    assert refused.reason in {"not_docx", "part_too_large"}
