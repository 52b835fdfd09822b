"""Decks on the real LibreOffice Impress: read, edited by commands, slides rendered."""

import asyncio
import io
import subprocess
from pathlib import Path

import pptx
import pytest

from artifactr.files import AppCommand
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.core.errors import AppRefused
from tests.apps.libreoffice.test_app import SLOW, Listener, size
from tests.sheets import build_pptx, linking_deck

pytestmark = pytest.mark.timeout(240)


def command(which: str, /, **params: object) -> AppCommand:
    return AppCommand.model_validate({"command": which, "params": params})


def titles(content: bytes) -> list[str]:
    deck = pptx.Presentation(io.BytesIO(content))
    return [slide.shapes.title.text if slide.shapes.title else "" for slide in deck.slides]


async def test_inspect_reads_titles_text_notes_and_slides(office: LibreOffice) -> None:
    found = await office.inspect(build_pptx(3))
    assert found.outline == "1. Quarterly review\n2. Topic 2\n3. Topic 3"
    assert found.text.splitlines() == [
        "# Slide 1: Quarterly review",
        "Draft for the board",
        "# Slide 2: Topic 2",
        "Point 2a",
        "Point 2b",
        "Notes: Say 2",
        "# Slide 3: Topic 3",
        "Point 3a",
        "Point 3b",
        "Notes: Say 3",
    ]
    assert found.review == []
    assert found.pages == 3


async def test_a_batch_inserts_moves_duplicates_deletes_and_writes_slides(
    office: LibreOffice,
) -> None:
    edited = await office.apply(
        build_pptx(3),
        [
            command("slide.insert", position=1, layout="title", title="Agenda"),
            command("slide.move", slide=4, to=2),
            command("slide.setNotes", slide=1, text="Open warmly"),
            command("slide.setText", slide=3, text="Only point"),
            command("slide.addComment", slide=2, text="Shorter?"),
            command("slides.replaceAll", find="topic", replace="Theme"),
            command("slide.duplicate", slide=4),
            command("slide.delete", slide=5),
            command("slide.insert", layout="title-only"),
            command("slide.setTitle", slide=5, text="Questions"),
        ],
        author="Ada Lovelace",
    )
    assert titles(edited.content) == [
        "Agenda",
        "Theme 3",
        "Quarterly review",
        "Theme 2",
        "Questions",
    ]
    assert edited.inspection.outline.splitlines() == [
        "1. Agenda",
        "2. Theme 3",
        "3. Quarterly review",
        "4. Theme 2",
        "5. Questions",
    ]
    assert "Only point" in edited.inspection.text
    assert "Notes: Open warmly" in edited.inspection.text
    [comment] = edited.inspection.review
    assert (comment.id, comment.author, comment.text, comment.anchor) == (
        "2.1",
        "Ada Lovelace",
        "Shorter?",
        "slide 2",
    )
    deck = pptx.Presentation(io.BytesIO(edited.content))
    notes = deck.slides[0].notes_slide.notes_text_frame
    assert notes is not None
    assert notes.text == "Open warmly"


@pytest.mark.parametrize(
    ("steps", "reason"),
    [
        ([command("slide.delete", slide=9)], "no slide 9: the deck has 3"),
        ([command("slide.move", slide=1, to=4)], "no position 4"),
        ([command("slide.insert", layout="poster")], "no layout `poster`"),
        ([command("slide.setText", slide=2, placeholder=2, text="x")], "has 1 text placeholders"),
        (
            [command("slide.insert", layout="blank"), command("slide.setTitle", slide=4, text="x")],
            "slide 4 has no title placeholder",
        ),
        ([command("slide.delete", slide=1)] * 3, "at least one slide"),
    ],
)
async def test_what_the_deck_cannot_do_is_refused_with_the_reason(
    office: LibreOffice, steps: list[AppCommand], reason: str
) -> None:
    with pytest.raises(AppRefused, match=f"command {len(steps) - 1} .*{reason}"):
        await office.apply(build_pptx(3), steps)


async def test_each_slide_renders_as_a_page(office: LibreOffice) -> None:
    source = build_pptx(3)
    first = await office.render(source, 1, deadline=SLOW)
    third = await office.render(source, 3)
    assert size(first) == size(third) == (960, 720)
    assert first != third
    with pytest.raises(AppRefused, match="no page 4: the document has 3"):
        await office.render(source, 4)


async def test_a_deck_that_names_urls_reaches_nothing_and_still_renders(
    office: LibreOffice, tmp_path: Path
) -> None:
    listener = Listener()
    try:
        source = linking_deck(f"http://127.0.0.1:{listener.port}")
        png = await office.render(source, 1, deadline=SLOW)
        edited = await office.apply(source, [command("slide.setNotes", slide=1, text="Play it")])
        assert size(png) == (960, 720)
        assert "Notes: Play it" in edited.inspection.text
        assert listener.received == []
        (tmp_path / "linking.pptx").write_bytes(source)
        await asyncio.to_thread(
            subprocess.run,
            [
                "soffice",
                "--headless",
                f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
                "--convert-to",
                "pdf",
                "--outdir",
                str(tmp_path),
                str(tmp_path / "linking.pptx"),
            ],
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert listener.received
    finally:
        listener.stop()
