"""A workbook and a deck through the work the agent tools and MCP share, on the real LibreOffice."""

import pytest
from artifactr import AgentActor, UserActor, Workspaces
from artifactr.core import Proposed
from artifactr.workspace import InMemoryStorage

from artifactr.files import (
    AppCommand,
    InMemoryBlobs,
    InMemoryCheckouts,
    InMemoryLeases,
    Presentation,
    Spreadsheet,
    WordDocument,
)
from artifactr.files.agent.operations import edit_native, find_commands, read_native, view_page
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.native import NativeFiles
from tests.native.conftest import chunks
from tests.office import need_office
from tests.sheets import build_pptx, build_xlsx

pytestmark = pytest.mark.timeout(240)

ALICE = UserActor(id="alice", name="Alice")
KINDS = [WordDocument, Spreadsheet, Presentation]


async def nothing(_artifact_id: str) -> None:
    return None


async def test_an_agent_reads_edits_and_views_a_workbook_and_a_deck() -> None:
    need_office()
    files = NativeFiles(
        blobs=InMemoryBlobs(),
        app=LibreOffice(),
        leases=InMemoryLeases(),
        checkouts=InMemoryCheckouts(),
        types=KINDS,
        deadline=60,
        render_deadline=60,
    )
    ws = await Workspaces(InMemoryStorage(), types=KINDS).open("t", "w", actor=ALICE)
    book = await files.upload(ws, "budget.xlsx", chunks(build_xlsx()))
    deck = await files.upload(ws, "review.pptx", chunks(build_pptx(2)))
    assert book.type == deck.type == "applied"
    thread = await ws.create_thread()
    agent = ws.as_actor(AgentActor(thread_id=thread.id, on_behalf_of=ALICE))

    read = await read_native(agent, files, book.artifact_id, 0, follow=nothing)
    assert "4\tTotal\t1500 (=SUM(B2:B3))" in read
    found = await find_commands(files, "Workbook: set a cell")
    assert "cell.set" in found
    edited = await edit_native(
        agent,
        files,
        book.artifact_id,
        base_version=1,
        commands=[AppCommand(command="cell.set", params={"cell": "B3", "value": 450})],
        summary="Food costs 450",
        thread_id=thread.id,
        follow=nothing,
    )
    assert isinstance(edited, Proposed)
    slides = await read_native(agent, files, deck.artifact_id, 0, follow=nothing)
    assert "# Slide 2: Topic 2" in slides
    page = await view_page(agent, files, deck.artifact_id, 2, follow=nothing)
    assert page.png.startswith(b"\x89PNG")
