"""The demo: the whole story runs on the embedded default and tells it truthfully.

It runs on FakeApp here (``ARTIFACTR_FILES_APP=fake``), so it needs no office; the choice of
app is checked both ways with the office's availability passed in; and where LibreOffice can
run (always in CI), the story runs on it up to the agent's edit, with a real page.
"""

import io
import re
import runpy
import struct
import sys
import zipfile
import zlib
from pathlib import Path

import pytest
from pydantic_ai import BinaryContent
from pydantic_ai.messages import SystemPromptPart, ToolReturnPart, UserPromptPart

from artifactr.files.apps.fake import FakeApp
from artifactr.files.apps.libreoffice import Availability, LibreOffice, machine_size
from artifactr.files.native.regions import changed_region
from artifactr.files.programs.demo import (
    DOCUMENT,
    FORCE_FAKE,
    append_paragraph,
    choose_app,
    pictures,
    run,
    source_document,
)
from tests.conftest import CORPUS
from tests.office import need_office

PNG = b"\x89PNG\r\n\x1a\n"
HERE = Availability(
    "/usr/bin/soffice", "/usr/bin/python3", "/usr/bin/pdftoppm", (), ("docx", "xlsx", "pptx")
)
ABSENT = Availability(None, None, None, ("no `soffice` on the PATH (apt-get install ...)",))


def size(png: bytes) -> tuple[int, int]:
    """Return a PNG's width and height."""
    assert png.startswith(PNG)
    width, height = struct.unpack(">II", png[16:24])
    return width, height


async def test_the_story_runs_from_upload_to_the_final_docx(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FORCE_FAKE, "fake")
    told: list[str] = []
    final = await run(tmp_path, say=told.append)
    story = "\n".join(told)
    assert story.startswith("app: FakeApp (ARTIFACTR_FILES_APP=fake)")
    assert "The agent looks at page 1 through view_page, as fake renders it" in story
    assert size((tmp_path / "page-1.png").read_bytes()) > (0, 0)
    assert "and edits through edit_native: Proposed as prp_" in story
    assert "is checked out by Alice (user:alice) until" in story
    assert re.search(
        r"3\. Alice checks it out: \S+, base v2, until \d{4}-\d\d-\d\dT[\d:.]+Z", story
    )
    assert "Alice checks it in: applied, v3" in story
    assert "retries the upload, answered alike: applied, v3" in story
    assert "Bob checks in: proposed" in story
    assert "v2 by assistant, accepted by Bob: add a review note at the end" in story
    assert "v4 by Alice: sign" in story
    with zipfile.ZipFile(final) as package:
        body = package.read("word/document.xml").decode()
    assert "Signed." in body
    assert "Approved." in body
    assert "Reviewed by the assistant." in body
    assert "Bob's aside." not in body  # his stale check-in is a proposal, not a revision


class Stop(Exception):
    """Ends the story once the agent's edit is told."""


@pytest.mark.timeout(180)  # it starts offices: seconds each on a busy machine
async def test_on_libreoffice_the_agent_sees_a_real_page_and_edits_in_its_commands(
    tmp_path: Path,
) -> None:
    need_office()
    told: list[str] = []

    def say(line: str) -> None:
        told.append(line)
        if line.startswith("\n3."):
            raise Stop

    with pytest.raises(Stop):
        await run(tmp_path, say=say, chosen=(LibreOffice(), "LibreOffice"))
    story = "\n".join(told)
    assert "The agent looks at page 1 through view_page, as libreoffice renders it" in story
    assert "and edits through edit_native: Proposed as prp_" in story
    assert "Bob accepts proposal prp_" in story
    width, height = size((tmp_path / "page-1.png").read_bytes())
    assert (width, height) in {(816, 1056), (794, 1123)}  # Letter or A4 at 96 dpi


def test_the_demo_uses_wordcraft_when_told_libreoffice_when_here_and_fakeapp_otherwise() -> None:
    app, label = choose_app({"WORDCRAFT_CLI": "/opt/wordcraft/bin/wordcraft-cli"}, lambda: HERE)
    assert app.name == "wordcraft"
    assert label == "WordCraft (/opt/wordcraft/bin/wordcraft-cli)"
    app, label = choose_app({}, lambda: HERE)
    assert isinstance(app, LibreOffice)
    # Its pool is sized from the machine unless it is told (ADR-0033).
    assert app.pool_status().size == machine_size()
    here = "LibreOffice (real pages, run headless; opens docx, xlsx, pptx"
    ahead = "1 office" if machine_size() == 1 else f"{machine_size()} offices"
    assert label == f"{here}; {ahead} started ahead)"
    for pool, said in (
        (3, "3 offices started ahead"),
        (1, "1 office started ahead"),
        (0, "no pool"),
    ):
        app, label = choose_app({}, lambda: HERE, pool=pool)
        assert isinstance(app, LibreOffice)
        assert (app.pool_status().size, label) == (pool, f"{here}; {said})")
    app, label = choose_app({FORCE_FAKE: "fake"}, lambda: HERE)
    assert isinstance(app, FakeApp)
    assert label == "FakeApp (ARTIFACTR_FILES_APP=fake)"
    app, label = choose_app({}, lambda: ABSENT)
    assert isinstance(app, FakeApp)
    assert label.startswith("FakeApp (drawn pages; LibreOffice can't run here: no `soffice`")


def test_a_paragraph_is_appended_in_each_apps_own_commands() -> None:
    office = append_paragraph("libreoffice", "Signed.")
    assert [(c.command, dict(c.params)) for c in office] == [
        ("paragraph.append", {"text": "Signed."})
    ]
    wordcraft = append_paragraph("wordcraft", "Signed.")
    assert [c.command for c in wordcraft] == ["caret.docEnd", "text.newParagraph", "text.insert"]
    assert append_paragraph("fake", "Signed.") == wordcraft


def test_the_demo_uploads_a_corpus_document_or_builds_one(tmp_path: Path) -> None:
    name, data = source_document(tmp_path)
    assert name == "contract.docx"
    assert zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml")
    (tmp_path / DOCUMENT).write_bytes(data[::-1])
    assert source_document(tmp_path) == (DOCUMENT, data[::-1])


def test_the_demo_uploads_the_real_corpus_document_where_it_is() -> None:
    if not (CORPUS / DOCUMENT).is_file():
        pytest.skip(f"the corpus is not here: {CORPUS}")
    assert source_document(CORPUS) == (DOCUMENT, (CORPUS / DOCUMENT).read_bytes())


def test_the_module_runs_as_a_command_into_the_folder_it_is_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FORCE_FAKE, "fake")
    monkeypatch.setattr(sys, "argv", ["demo", str(tmp_path / "out")])
    monkeypatch.delitem(sys.modules, "artifactr.files.programs.demo")  # run it afresh, as -m does
    runpy.run_module("artifactr.files.programs.demo", run_name="__main__")
    assert "8. The final .docx" in capsys.readouterr().out
    assert list((tmp_path / "out").glob("final-*.docx"))
    assert (tmp_path / "out" / "page-1.png").read_bytes().startswith(PNG)


def test_the_scripted_agent_sees_only_the_pictures_a_request_shows_it() -> None:
    png = b"\x89PNG\r\n\x1a\n"
    parts = [
        SystemPromptPart("you edit contracts"),
        UserPromptPart(["look", BinaryContent(png, media_type="image/png")]),
        ToolReturnPart("view_page", BinaryContent(b"%PDF", media_type="application/pdf")),
    ]
    assert pictures(parts) == [png]


@pytest.mark.timeout(240)
@pytest.mark.parametrize("office", [True, False])
async def test_the_demo_shows_a_recalculated_workbook_and_a_decks_slides_on_libreoffice(
    tmp_path: Path, office: bool
) -> None:
    from artifactr import Workspaces
    from artifactr.workspace import InMemoryStorage

    from artifactr.files import InMemoryBlobs, InMemoryCheckouts, InMemoryLeases
    from artifactr.files.apps.fake import FakeApp
    from artifactr.files.native import NativeFiles
    from artifactr.files.programs.demo import ALICE, BOB, KINDS, workbook_and_deck

    if office:
        need_office()
    files = NativeFiles(
        blobs=InMemoryBlobs(),
        app=LibreOffice() if office else FakeApp(),
        leases=InMemoryLeases(),
        checkouts=InMemoryCheckouts(),
        types=KINDS,
        deadline=60,
        render_deadline=60,
    )
    alice = await Workspaces(InMemoryStorage(), types=KINDS).open("t", "w", actor=ALICE)
    told: list[str] = []
    await workbook_and_deck(files, alice, alice.as_actor(BOB), tmp_path, told.append)
    story = "\n".join(told)
    if not office:
        assert "fake reads Word documents (.docx) only, so the demo leaves" in story
        return
    assert "row 4 reads: '4\\tTotal\\t1650 (=SUM(B2:B3))'" in story
    assert "slides '1. Quarterly review\\n2. Costs'" in story
    first, second = ((tmp_path / f"slide-{n}.png").read_bytes() for n in (1, 2))
    assert size(first) == size(second) == (960, 720)
    # Each slide shows its title and body where the placeholders sit: not blank, and not alike.
    for page in (first, second):
        drawn = changed_region(white(960, 720), page)
        assert drawn is not None
        assert drawn.y < 100  # the title, at the top
        assert drawn.y + drawn.height > 180  # the body, below it
    assert changed_region(first, second) is not None


def white(width: int, height: int) -> bytes:
    """Return a white RGB PNG of a size, as a blank page renders."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff" * (3 * width) for _ in range(height))
    return PNG + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
