"""A workbook and a deck through the MCP tools, on the real LibreOffice (issue 27).

The official MCP client, over Streamable HTTP, reads a workbook's cells with their computed
values and its cell comments, finds its commands, proposes an edit whose new formula and
recalculated total the answer gives, proposes a deck's new speaker notes, and looks at the
workbook's printed page. One office job an upload, an edit or a page.
"""

import base64
import io
from collections.abc import AsyncIterator

import pytest
from artifactr.core import RespondToProposal
from mcp.types import CallToolResult, ImageContent, TextContent
from PIL import Image, ImageChops

from artifactr.files import Presentation, Spreadsheet, WordDocument
from artifactr.files.agent.wording import EDIT_NATIVE, FIND_COMMANDS, READ_NATIVE
from artifactr.files.apps.libreoffice import LibreOffice
from tests.agent.conftest import Note
from tests.mcp.conftest import CLAUDE, Server, call, quiet_runner, text
from tests.office import need_office
from tests.sheets import ACME_BLUE, ACME_RED, BRANDED, build_branded_pptx, build_pptx, build_xlsx
from tests.world import chunks, world_in_memory

pytestmark = pytest.mark.timeout(300)


@pytest.fixture
async def office() -> AsyncIterator[Server]:
    """The MCP server over a world in memory, its files on the real LibreOffice."""
    need_office()
    usual = world_in_memory(
        app=LibreOffice(),
        types=(WordDocument, Spreadsheet, Presentation),
        kinds=(Note,),
        deadline=90,
        render_deadline=90,
    )
    runner = quiet_runner()
    yield Server(**usual.parts(), runner=runner)
    await runner.aclose()


async def upload(server: Server, name: str, data: bytes) -> str:
    outcome = await server.files.upload(await server.ws(), name, chunks(data))
    assert outcome.type == "applied"
    return outcome.artifact_id


async def test_an_external_agent_reads_a_workbook_and_proposes_edits_to_it_and_a_deck(
    office: Server,
) -> None:
    book = await upload(office, "budget.xlsx", build_xlsx())
    deck = await upload(office, "review.pptx", build_pptx(2))
    formulas = [
        {"command": "cell.set", "params": {"cell": "Budget!B3", "value": 450}},
        {"command": "range.write", "params": {"cell": "A5", "rows": [["Twice", "=B4*2"]]}},
    ]
    notes = [{"command": "slide.setNotes", "params": {"slide": 2, "text": "Say it <slowly>"}}]

    async with office.client() as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        cells = text(await call(client, "read_native", artifact_id=book))
        review = text(await call(client, "read_review", artifact_id=book))
        found = text(await call(client, "find_commands", query="workbook set cell"))
        book_edit = await call(
            client,
            "edit_native",
            artifact_id=book,
            base_version=1,
            commands=formulas,
            summary="Food costs 450, and the total twice",
        )
        deck_edit = await call(
            client, "edit_native", artifact_id=deck, base_version=1, commands=notes, summary="N"
        )
        page = await call(client, "view_page", artifact_id=book, page=1)

    # The tools tell an external agent what a workbook's and a deck's text and commands are.
    assert "# Sheet: Budget (A1:B4)" in listed[READ_NATIVE.name].description
    assert "`Workbook:`" in listed[FIND_COMMANDS.name].description
    assert "`Deck:`" in listed[FIND_COMMANDS.name].description
    assert "recalculated" in listed[EDIT_NATIVE.name].description
    # The cells, with computed values and formulas, and the cell's comment with its cell.
    assert "3\tFood\t300\n4\tTotal\t1500 (=SUM(B2:B3))" in cells
    assert '"anchor": "Budget!A2"' in review
    assert '"text": "Due on the first"' in review
    assert found.splitlines()[1] == "- cell.set: Workbook: set a cell's value or formula"
    # Each edit is the external agent's proposal; the workbook's answer gives the new values.
    book_proposal, deck_proposal = await (await office.ws()).proposals()
    assert not book_edit.is_error
    assert text(book_edit) == (
        f"Proposed as {book_proposal.id}. A person will review it: someone who may change the "
        "file decides. You will not be told the decision, as an MCP client has no thread: read "
        f"{book} again later (read_native or read_artifact); its version moves past 1 when a "
        "proposal is accepted.\nWhat it changes, as the app computed it (4):\n"
        "- Budget!B3: 300 → 450\n"
        "- Budget!B4: 1500 (=SUM(B2:B3)) → 1650 (=SUM(B2:B3))\n"
        "- Budget!A5: (empty) → Twice\n"
        "- Budget!B5: (empty) → 3300 (=B4*2)"
    )
    assert text(deck_edit).endswith("(1):\n- slide 2 changed: Topic 2")
    assert [p.proposed_by for p in (book_proposal, deck_proposal)] == [CLAUDE, CLAUDE]
    ws = await office.ws()
    assert "Notes: Say it <slowly>" in await office.files.proposal_text(ws, deck, deck_proposal.id)
    assert (await ws.get(Spreadsheet, book)).version == 1
    # The workbook's printed page, as an image.
    caption, image = page.content
    assert isinstance(caption, TextContent)
    assert caption.text.startswith(f"{book} (spreadsheet, v1) 'budget.xlsx': page 1 of ")
    assert isinstance(image, ImageContent)
    assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")


Box = tuple[int, int, int, int]
"""A bounding box in a page's pixels: left, top, right, bottom."""

TITLE_BAND = (0, 480, 960, 620)
"""Where the branded content layout's title box lies on a 960x720 page (its top at 70%)."""


def ink(png: bytes, colour: tuple[int, int, int] | None = None, within: Box | None = None) -> Box:
    """Return the bounding box of a page's ink: its pixels far from white, or near a colour."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    if within is not None:
        image = image.crop(within)
    paper = Image.new("RGB", image.size, colour or (255, 255, 255))
    distance = ImageChops.difference(image, paper).convert("L")
    marked = distance.point(lambda value: 255 if (value < 40 if colour else value > 80) else 0)
    box = marked.getbbox()
    assert box is not None, "no ink there"
    left, top = within[:2] if within else (0, 0)
    return (box[0] + left, box[1] + top, box[2] + left, box[3] + top)


def near(found: Box, wanted: Box, pixels: int = 3) -> bool:
    """Return whether two boxes are the same to a few pixels on every side."""
    return all(abs(one - other) <= pixels for one, other in zip(found, wanted, strict=True))


async def test_an_inserted_slide_takes_the_deck_s_own_layout_as_its_page_shows(
    office: Server,
) -> None:
    deck = await upload(office, "acme.pptx", build_branded_pptx())
    wrong = [{"command": "slide.insert", "params": {"layout": "Acme Titel and Content"}}]
    inserts = [
        # After slide 2, in its layout (the default), with slide 2's words; then a cover.
        {"command": "slide.insert", "params": {"position": 3, "title": "Topic A"}},
        {"command": "slide.setText", "params": {"slide": 3, "text": "a1\na2"}},
        {"command": "slide.insert", "params": {"layout": "Acme Title", "title": "Acme plan"}},
    ]
    async with office.client() as client:
        read = text(await call(client, "read_native", artifact_id=deck))
        refused = await call(
            client, "edit_native", artifact_id=deck, base_version=1, commands=wrong, summary="W"
        )
        edit = await call(
            client, "edit_native", artifact_id=deck, base_version=1, commands=inserts, summary="I"
        )
        [proposal] = await (await office.ws()).proposals()
        await (await office.ws()).commit(
            RespondToProposal(proposal_id=proposal.id, decision="accept")
        )
        cover, topic, inserted, _, new_cover = [
            await call(client, "view_page", artifact_id=deck, page=page) for page in range(1, 6)
        ]

    # The agent reads the deck's own layouts, and a wrong name is refused with them, nearest first.
    assert f"Layouts: {', '.join(BRANDED)}" in read
    assert refused.is_error
    assert (
        "no layout `Acme Titel and Content`; the deck's layouts, nearest first: "
        "Acme Title and Content, Acme Title"
    ) in text(refused)
    assert not edit.is_error
    was, now, first, last = (png(page) for page in (topic, inserted, cover, new_cover))
    # The inserted slide's title is the layout's: low in its box, 54 pt, centred, blue, its ink
    # where the same words are on the slide of that layout; its points have the red bullets.
    title = ink(was, within=TITLE_BAND)
    assert title[3] - title[1] > 40  # 54 pt is 50 pixels high here; 18 pt would be 17
    assert near(ink(now, within=TITLE_BAND), title)
    assert near(ink(now, ACME_BLUE, TITLE_BAND), ink(was, ACME_BLUE, TITLE_BAND))
    assert near(ink(now, ACME_RED), ink(was, ACME_RED))
    assert near(ink(now), ink(was))
    # The one inserted in the cover's layout shows its title as the cover does.
    assert near(ink(last), ink(first))


def png(result: CallToolResult) -> bytes:
    """The image a page's answer holds."""
    _, image = result.content
    assert isinstance(image, ImageContent)
    return base64.b64decode(image.data)
