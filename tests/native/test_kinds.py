"""A file's kind comes from its content: an upload chooses it, a check-in keeps it."""

from pathlib import Path

import pytest
from artifactr.core import ValidationFailed

from artifactr.files import DOCX, XLSX, AppRefused, Spreadsheet, UnsafeFile, WordDocument
from tests.native.conftest import World, chunks, make_env, sample_docx
from tests.sheets import XLSX_MAIN, build_xlsx, with_main_type, with_vba


async def test_a_workbook_is_no_native_kind_where_the_service_holds_only_documents(
    memory_env: World,
) -> None:
    with pytest.raises(ValidationFailed, match=r"an Excel workbook \(.xlsx\), which is not"):
        await memory_env.files.upload(await memory_env.ws(), "budget.docx", chunks(build_xlsx()))


async def test_the_content_decides_the_kind_whatever_the_name_or_type_claims(
    tmp_path: Path,
) -> None:
    async for env in make_env("memory", tmp_path, types=(WordDocument, Spreadsheet)):
        ws = await env.ws()
        with pytest.raises(ValidationFailed, match=r"not a Word document \(.docx\) as declared"):
            await env.files.upload(ws, "budget.xlsx", chunks(build_xlsx()), media_type=DOCX)
        # FakeApp reads .docx only, and says so once the kind is known.
        with pytest.raises(AppRefused, match="FakeApp reads Word documents"):
            await env.files.upload(ws, "budget.docx", chunks(build_xlsx()), media_type=XLSX)


@pytest.mark.parametrize(
    "data",
    [
        with_vba(build_xlsx()),
        with_main_type(
            build_xlsx(), XLSX_MAIN, "application/vnd.ms-excel.sheet.macroEnabled.main+xml"
        ),
    ],
)
async def test_a_macro_enabled_workbook_is_refused_unstored(memory_env: World, data: bytes) -> None:
    with pytest.raises(UnsafeFile) as refused:
        await memory_env.files.upload(await memory_env.ws(), "budget.xlsx", chunks(data))
    assert refused.value.reason == "macro_enabled"


async def test_a_workbook_checked_in_over_a_document_is_refused(memory_env: World) -> None:
    artifact_id = await memory_env.upload(sample_docx())
    ws = await memory_env.ws()
    checkout = await memory_env.files.check_out(ws, artifact_id)
    with pytest.raises(ValidationFailed, match=r"the file is an Excel workbook .* Word document"):
        await memory_env.files.check_in(ws, checkout.id, chunks(build_xlsx()))
    assert (await ws.get(WordDocument, artifact_id)).version == 1
