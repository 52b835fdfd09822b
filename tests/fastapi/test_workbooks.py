"""A workbook and a deck through the router, on the real LibreOffice: the kind by content."""

import io

import openpyxl
import pytest
from artifactr import UserActor

from artifactr.files import DOCX, PPTX, XLSX, Presentation, Spreadsheet, WordDocument
from artifactr.files.apps.libreoffice import LibreOffice
from tests.fastapi.conftest import ALICE, MakeApi
from tests.office import need_office
from tests.sheets import build_pptx, build_xlsx

pytestmark = pytest.mark.timeout(240)


async def test_a_workbook_and_a_deck_are_uploaded_downloaded_and_rendered(
    make_api: MakeApi,
) -> None:
    need_office()
    api = await make_api(
        app=LibreOffice(),
        types=[WordDocument, Spreadsheet, Presentation],
        deadline=60,
        render_deadline=60,
    )
    for data, name, media, kind in [
        (build_xlsx(), "budget.xlsx", XLSX, "spreadsheet"),
        (build_pptx(2), "review.pptx", PPTX, "presentation"),
    ]:
        response = await api.client.post(
            api.url(), params={"name": name}, content=data, headers={**ALICE, "content-type": media}
        )
        assert response.status_code == 201, response.text
        artifact_id = response.json()["artifact_id"]
        ws = await api.workspaces.open("t1", "w1", actor=UserActor(id="alice"))
        head = await ws.get(Spreadsheet if kind == "spreadsheet" else Presentation, artifact_id)
        assert head.data.content.media_type == media
        download = await api.client.get(
            api.url(f"/{artifact_id}/versions/1/content"), headers=ALICE
        )
        assert download.status_code == 200
        assert download.headers["content-type"] == media
        page = await api.client.get(api.url(f"/{artifact_id}/versions/1/pages/1"), headers=ALICE)
        assert page.status_code == 200
        assert page.content.startswith(b"\x89PNG")
        if kind == "spreadsheet":
            book = openpyxl.load_workbook(io.BytesIO(download.content))
            assert book.sheetnames == ["Budget", "Notes"]
    # A workbook declared as a Word document is refused: the content decides.
    refused = await api.client.post(
        api.url(),
        params={"name": "budget.docx"},
        content=build_xlsx(),
        headers={**ALICE, "content-type": DOCX},
    )
    assert refused.status_code == 422
    assert "an Excel workbook (.xlsx)" in refused.text
