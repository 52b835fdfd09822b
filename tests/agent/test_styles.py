"""A Word document's styles on the real LibreOffice: read before they are used, and a misnamed
one refused naming the nearest the document has."""

import pytest

from artifactr.files import AppCommand, WordDocument
from artifactr.files.agent.operations import edit_native, read_native
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.core.errors import AppRefused
from tests.agent.conftest import Note, World
from tests.documents import build_docx
from tests.office import need_office
from tests.world import chunks, world_in_memory

pytestmark = pytest.mark.timeout(300)


async def nothing(_artifact_id: str) -> None:
    return None


async def test_the_styles_are_read_first_and_a_misnamed_one_is_refused_with_the_nearest() -> None:
    need_office()
    usual = world_in_memory(
        app=LibreOffice(), types=(WordDocument,), kinds=(Note,), deadline=90, render_deadline=90
    )
    world = World(**usual.parts())
    ws = await world.ws()
    uploaded = await world.files.upload(ws, "report.docx", chunks(build_docx()))
    doc = uploaded.artifact_id

    read = await read_native(ws, world.files, doc, 0, follow=nothing)
    named = read.splitlines()[1]
    assert named.startswith("Paragraph styles: ")
    assert {"Title", "Heading 1", "Heading 2"} <= set(named.split(". ")[0][18:].split(", "))
    assert named.endswith("Character styles: Emphasis, Strong Emphasis.")

    misnamed = AppCommand(
        command="paragraph.setStyle", params={"heading": "Details", "style": "Headng 2"}
    )
    with pytest.raises(AppRefused) as refused:
        await edit_native(
            ws,
            world.files,
            doc,
            base_version=1,
            commands=[misnamed],
            summary="",
            thread_id=None,
            follow=nothing,
        )
    assert "no paragraph style `Headng 2`; the nearest the document has: Heading 2" in str(
        refused.value
    )
