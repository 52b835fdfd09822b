"""Workbooks and decks through NativeFiles on LibreOffice: the kind from the content, an agent's
edit as a proposal, check-out and check-in, diffs in the kind's terms, pages."""

import io

import openpyxl
import pytest
from artifactr import AgentActor, UserActor, Workspaces
from artifactr.core import RespondToProposal
from artifactr.workspace import InMemoryStorage

from artifactr.files import (
    XLSX,
    AppCommand,
    InMemoryBlobs,
    InMemoryCheckouts,
    InMemoryLeases,
    Presentation,
    Spreadsheet,
    WordDocument,
)
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.native import NativeFiles
from artifactr.files.native.diff import proposal_diff, revision_diff
from tests.native.conftest import chunks
from tests.sheets import build_pptx, build_xlsx

pytestmark = pytest.mark.timeout(240)

ALICE = UserActor(id="alice", name="Alice")
KINDS = [WordDocument, Spreadsheet, Presentation]


def service(office: LibreOffice) -> NativeFiles:
    return NativeFiles(
        blobs=InMemoryBlobs(),
        app=office,
        leases=InMemoryLeases(),
        checkouts=InMemoryCheckouts(),
        types=KINDS,
        deadline=60,
        render_deadline=60,
    )


async def test_a_workbook_is_uploaded_edited_by_an_agent_diffed_and_checked_in(
    office: LibreOffice,
) -> None:
    files = service(office)
    ws = await Workspaces(InMemoryStorage(), types=KINDS).open("t", "w", actor=ALICE)
    # Named as a document: the content says it is a workbook.
    uploaded = await files.upload(ws, "budget.docx", chunks(build_xlsx()))
    assert uploaded.type == "applied"
    artifact_id = uploaded.artifact_id
    head = await ws.get(Spreadsheet, artifact_id)
    assert head.data.content.media_type == XLSX
    assert head.data.outline == "Budget: A1:B4\nNotes: A1:A1"
    assert head.data.pages == 2

    thread = await ws.create_thread()
    agent = ws.as_actor(AgentActor(thread_id=thread.id, on_behalf_of=ALICE))
    batch = [AppCommand(command="cell.set", params={"cell": "B3", "value": 450})]
    proposed = await files.edit(agent, artifact_id, base_version=1, commands=batch)
    assert proposed.type == "proposed"
    pending = await proposal_diff(files, ws, artifact_id, proposed.proposal_id)
    assert pending.changes is not None
    assert [change.line for change in pending.changes.changes] == [
        "Budget!B3: 300 → 450",
        "Budget!B4: 1500 (=SUM(B2:B3)) → 1650 (=SUM(B2:B3))",
    ]
    await ws.commit(RespondToProposal(proposal_id=proposed.proposal_id, decision="accept"))

    checkout = await files.check_out(ws, artifact_id)
    content = b"".join([chunk async for chunk in files.content(ws, artifact_id)])
    book = openpyxl.load_workbook(io.BytesIO(content))
    book["Budget"]["B2"] = 1000
    out = io.BytesIO()
    book.save(out)
    checked = await files.check_in(ws, checkout.id, chunks(out.getvalue()))
    assert checked.status == "applied"
    diff = await revision_diff(files, ws, artifact_id, 2, 3)
    assert diff.changes is not None
    assert "Budget!B2: 1200 → 1000" in [change.line for change in diff.changes.changes]
    assert diff.pages  # the first page's render changed


async def test_a_deck_is_uploaded_edited_and_its_slides_are_pages(office: LibreOffice) -> None:
    files = service(office)
    ws = await Workspaces(InMemoryStorage(), types=KINDS).open("t", "w", actor=ALICE)
    uploaded = await files.upload(ws, "review.pptx", chunks(build_pptx(3)))
    assert uploaded.type == "applied"
    artifact_id = uploaded.artifact_id
    head = await ws.get(Presentation, artifact_id)
    assert head.data.outline == "1. Quarterly review\n2. Topic 2\n3. Topic 3"
    assert head.data.pages == 3
    edited = await files.edit(
        ws,
        artifact_id,
        base_version=1,
        commands=[AppCommand(command="slide.move", params={"slide": 3, "to": 1})],
    )
    assert edited.type == "applied"
    diff = await revision_diff(files, ws, artifact_id, 1, 2)
    assert diff.changes is not None
    lines = [change.line for change in diff.changes.changes]
    assert lines[0] == "slide moved: Topic 3, 3 → 1"
    assert not [line for line in lines if "added" in line or "removed" in line]
    png = await files.render(ws, artifact_id, 2, 1)
    assert png.startswith(b"\x89PNG")
    inserted = await files.edit(
        ws,
        artifact_id,
        base_version=2,
        commands=[AppCommand(command="slide.insert", params={"position": 2, "title": "Agenda"})],
    )
    assert inserted.type == "applied"
    diff = await revision_diff(files, ws, artifact_id, 2, 3)
    assert [(page.page, page.before, page.after) for page in diff.pages] == [(2, False, True)]
