"""A workbook and a deck through the agent's toolset, on the real LibreOffice (issue 27).

A scripted model, run by artifactr's Runner with ``native_file_tools``, reads a workbook's
sheets, cells and computed formula values and a deck's slides, finds the Calc and Impress
commands, and edits both: each edit becomes a proposal, and its answer says what changed in the
kind's own terms, the recalculated total included. One office job an upload, an edit or a page.
"""

import pytest
from artifactr.core import Proposal
from pydantic_ai import BinaryContent

from artifactr.files import AppCommand, Presentation, Spreadsheet, WordDocument
from artifactr.files.agent.operations import edit_native
from artifactr.files.apps.libreoffice import LibreOffice
from tests.agent.conftest import Note, World, call, say
from tests.office import need_office
from tests.sheets import build_pptx, build_xlsx
from tests.world import chunks, world_in_memory

pytestmark = pytest.mark.timeout(300)

KINDS = (WordDocument, Spreadsheet, Presentation)


async def nothing(_artifact_id: str) -> None:
    return None


@pytest.fixture
def office() -> World:
    """The world in memory, its files on the real LibreOffice, holding workbooks and decks."""
    need_office()
    usual = world_in_memory(
        app=LibreOffice(), types=KINDS, kinds=(Note,), deadline=90, render_deadline=90
    )
    return World(**usual.parts())


async def upload(world: World, name: str, data: bytes) -> str:
    outcome = await world.files.upload(await world.ws(), name, chunks(data))
    assert outcome.type == "applied"
    return outcome.artifact_id


async def test_an_agent_reads_a_workbook_and_a_deck_and_proposes_edits_by_their_commands(
    office: World,
) -> None:
    book = await upload(office, "budget.xlsx", build_xlsx())
    deck = await upload(office, "review.pptx", build_pptx(3))
    cell = [{"command": "cell.set", "params": {"cell": "B3", "value": 450}}]
    title = [{"command": "slide.setTitle", "params": {"slide": 2, "text": "Costs & <risks>"}}]

    run = await office.run(
        [
            call("read_native", artifact_id=book),
            call("read_native", artifact_id=deck),
            call("find_commands", query="workbook set cell"),
            call("find_commands", query="deck slide title"),
            call("edit_native", artifact_id=book, base_version=1, commands=cell, summary="Food"),
            call("edit_native", artifact_id=deck, base_version=1, commands=title, summary="T"),
            call("view_page", artifact_id=deck, page=2),
            say("I proposed both."),
        ],
        view=True,
    )

    assert run.error is None
    answers = [str(request.returned().content) for request in run.requests[1:7]]
    workbook, slides, cells, titles, book_edit, deck_edit = answers
    # The workbook: each sheet, then its rows, each cell's computed value and its formula.
    assert workbook.startswith(f"{book} (spreadsheet, v1) 'budget.xlsx': characters 0 to ")
    assert "# Sheet: Budget (A1:B4)\n1\tItem\tCost\n2\tRent\t1200\n3\tFood\t300\n" in workbook
    assert "4\tTotal\t1500 (=SUM(B2:B3))" in workbook
    assert "# Sheet: Notes (A1:A1)\n1\tReviewed by the board" in workbook
    assert workbook.endswith("That is the end of the text.")
    # The deck: each slide's title, its body, and its speaker notes.
    assert "# Slide 1: Quarterly review\nDraft for the board" in slides
    assert "# Slide 2: Topic 2\nPoint 2a\nPoint 2b\nNotes: Say 2" in slides
    # The commands for each: a workbook's and a deck's, found first by their words.
    assert cells.splitlines()[1:4] == [
        "- cell.set: Workbook: set a cell's value or formula",
        "    cell: text (not empty), required",
        "    value: string|number|boolean|null, required",
    ]
    assert titles.splitlines()[1] == "- slide.setTitle: Deck: set a slide's title"
    # Each edit is a proposal; its answer says what changed, the total recalculated.
    book_proposal, deck_proposal = await office_proposals(office)
    assert book_edit == (
        f"Proposed as {book_proposal.id}. A person will review it; you will be told whether it "
        "was accepted.\nWhat it changes, as the app computed it (2):\n"
        "- Budget!B3: 300 → 450\n"
        "- Budget!B4: 1500 (=SUM(B2:B3)) → 1650 (=SUM(B2:B3))"
    )
    assert deck_edit.startswith(f"Proposed as {deck_proposal.id}.")
    assert deck_edit.endswith("(1):\n- slide 2 changed: Costs & <risks>")
    ws = await office.ws()
    assert "4\tTotal\t1650 (=SUM(B2:B3))" in await office.files.proposal_text(
        ws, book, book_proposal.id
    )
    assert (await ws.get(Spreadsheet, book)).version == 1
    assert (await ws.get(Presentation, deck)).version == 1
    # The deck's slide, rendered, shown to the model as an image.
    page = run.requests[7].returned()
    caption, image = page.content
    assert caption == f"{deck} (presentation, v1) 'review.pptx': page 2 of 3."
    assert isinstance(image, BinaryContent)
    assert image.data.startswith(b"\x89PNG\r\n\x1a\n")
    assert [status for _, status in run.tool_returns()] == ["ok"] * 7

    # A person's edit through the same work is applied, and told what changed too.
    edited = await edit_native(
        ws,  # alice's
        office.files,
        book,
        base_version=1,
        commands=[AppCommand(command="range.write", params={"cell": "B2", "rows": [[1000]]})],
        summary="Rent",
        thread_id=None,
        follow=nothing,
    )
    assert not isinstance(edited, str)
    assert edited.outcome.type == "applied"
    assert edited.answer("Done.") == (
        "Done.\nWhat it changes, as the app computed it (2):\n"
        "- Budget!B2: 1200 → 1000\n- Budget!B4: 1500 (=SUM(B2:B3)) → 1300 (=SUM(B2:B3))"
    )


async def office_proposals(world: World) -> list[Proposal]:
    """The pending proposals, the workbook's first."""
    return await (await world.ws()).proposals()
