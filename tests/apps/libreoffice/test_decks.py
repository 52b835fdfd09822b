"""Decks on the real LibreOffice Impress: read, edited by commands, slides rendered."""

import asyncio
import io
import subprocess
from pathlib import Path

import pptx
import pytest
from pptx.dml.color import RGBColor
from pptx.enum.dml import MSO_COLOR_TYPE
from pptx.enum.text import PP_ALIGN
from pptx.shapes.autoshape import Shape
from pptx.shapes.base import BaseShape
from pptx.util import Pt

from artifactr.files import AppCommand
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.core.errors import AppRefused
from tests.apps.libreoffice.test_app import SLOW, Listener, size
from tests.sheets import (
    ACME_BLUE,
    ACME_RED,
    BRANDED,
    build_branded_pptx,
    build_pptx,
    linking_deck,
)

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
        "Layouts: Title Slide, Title and Content",
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
            command("slide.insert", position=1, layout="Title Slide", title="Agenda"),
            command("slide.move", slide=4, to=2),
            command("slide.setNotes", slide=1, text="Open warmly"),
            command("slide.setText", slide=3, text="Only point"),
            command("slide.addComment", slide=2, text="Shorter?"),
            command("slides.replaceAll", find="topic", replace="Theme"),
            command("slide.duplicate", slide=4),
            command("slide.delete", slide=5),
            command("slide.insert"),
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


def layout_and_title(content: bytes) -> list[tuple[str, int | None, int | None]]:
    """Return each slide's layout's name and its title's place (top, height), as saved."""
    deck = pptx.Presentation(io.BytesIO(content))
    found: list[tuple[str, int | None, int | None]] = []
    for slide in deck.slides:
        title = slide.shapes.title
        assert title is not None
        found.append((slide.slide_layout.name, title.top, title.height))
    return found


async def test_a_slide_is_inserted_in_the_deck_s_own_layouts_which_a_save_keeps(
    office: LibreOffice,
) -> None:
    source = build_branded_pptx()
    read = await office.inspect(source)
    assert read.text.splitlines()[0] == f"Layouts: {', '.join(BRANDED)}"
    edited = await office.apply(
        source,
        [
            command("slide.insert", position=3, title="Topic A2"),
            command("slide.insert", position=1, layout="acme title", title="Welcome"),
        ],
        author="Ada",
    )
    welcome, cover, topic, inserted, _ = layout_and_title(edited.content)
    assert welcome == cover
    assert inserted == topic
    assert topic[0] == "Acme Title and Content"
    assert topic[1:] == pytest.approx((4800000, 900000), abs=400)  # in 1/100 mm, as kept
    assert edited.inspection.text.splitlines()[0] == f"Layouts: {', '.join(BRANDED)}"
    again = await office.apply(edited.content, [command("slide.insert", title="End")])
    assert layout_and_title(again.content)[-1] == topic


Look = tuple[object, ...]
"""A placeholder as PowerPoint shows it: its place and size (in tenths of a millimetre: the office
rounds a shape it changed to hundredths), and its first paragraph with text's alignment, bullet,
bullet colour, and first run's size, colour and font."""

TENTH_MM = 3600
"""A tenth of a millimetre, in EMU."""

POI = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "poi-pptx"
"""Apache POI's test decks beside the project (../shared), present in CI."""


def look(shape: BaseShape) -> Look:
    """Return a text placeholder's look as saved: what PowerPoint draws."""
    assert isinstance(shape, Shape)
    first = next(n for n, found in enumerate(shape.text_frame.paragraphs) if found.runs)
    paragraph = shape.text_frame.paragraphs[first]
    run = paragraph.runs[0]
    colour = run.font.color.rgb if run.font.color.type == MSO_COLOR_TYPE.RGB else None
    settings = f"./p:txBody/a:p[{first + 1}]/a:pPr"
    bullet = shape.element.xpath(f"{settings}/a:buChar/@char")
    bullet_colour = shape.element.xpath(f"{settings}/a:buClr/a:srgbClr/@val")
    return (
        *(round(place / TENTH_MM) for place in (shape.left, shape.top, shape.width, shape.height)),
        paragraph.alignment,
        list(bullet),
        [str(value).upper() for value in bullet_colour],
        run.font.size,
        colour,
        run.font.name,
    )


def looks(content: bytes, number: int) -> list[Look]:
    """Return the looks of a slide's text placeholders (title first), as saved."""
    slide = pptx.Presentation(io.BytesIO(content)).slides[number - 1]
    return [look(shape) for shape in slide.placeholders if shape.has_text_frame and shape.text]


async def test_an_inserted_slide_looks_as_its_layout_s_slides_do_in_this_batch_and_the_next(
    office: LibreOffice,
) -> None:
    source = build_branded_pptx()
    same = [command("slide.setTitle", slide=3, text="Topic A")]
    same += [command("slide.setText", slide=3, text="a1\na2")]
    # Inserted with its text in one batch, and empty in one batch, filled in the next.
    at_once = await office.apply(source, [command("slide.insert", position=3), *same])
    empty = await office.apply(source, [command("slide.insert", position=3)])
    later = await office.apply(empty.content, same)

    topic = looks(at_once.content, 2)
    title, body = topic
    # The content layout's own look: its title 54 pt, centred and blue, its bullets red squares.
    assert title[4:] == (PP_ALIGN.CENTER, [], [], Pt(54), RGBColor(*ACME_BLUE), "Calibri")
    assert body[5:7] == (["\u25aa"], [str(RGBColor(*ACME_RED))])
    assert looks(at_once.content, 3) == topic
    assert looks(later.content, 3) == topic
    # The saved master keeps the deck's text styles, which a slide PowerPoint inserts takes.
    for content in (at_once.content, later.content):
        for master in pptx.Presentation(io.BytesIO(content)).slide_masters:
            sizes = master.element.xpath("./p:txStyles/p:titleStyle/a:lvl1pPr/a:defRPr/@sz")
            assert list(sizes) == ["4400"]


@pytest.mark.parametrize(
    ("name", "slide"), [("SampleShow.pptx", 2), ("testPPT.pptx", 2), ("45541_Footer.pptx", 2)]
)
async def test_a_slide_inserted_in_a_real_deck_has_its_title_as_the_layout_s_slides_do(
    office: LibreOffice, name: str, slide: int
) -> None:
    path = POI / name
    if not path.is_file():
        pytest.skip(f"{name} is not here: {POI} (Apache POI's test decks)")
    source = path.read_bytes()
    edited = await office.apply(
        source,
        [
            command("slide.insert", position=slide + 1),
            command("slide.setTitle", slide=slide, text="Same words"),
            command("slide.setTitle", slide=slide + 1, text="Same words"),
        ],
    )
    assert looks(edited.content, slide + 1)[0] == looks(edited.content, slide)[0]
    # And in the next batch, on the deck as this project saved it.
    again = await office.apply(
        edited.content, [command("slide.insert", position=slide + 1, title="Same words")]
    )
    assert looks(again.content, slide + 1)[0] == looks(again.content, slide)[0]


@pytest.mark.parametrize(
    ("steps", "reason"),
    [
        ([command("slide.delete", slide=9)], "no slide 9: the deck has 3"),
        ([command("slide.move", slide=1, to=4)], "no position 4"),
        (
            [command("slide.insert", layout="Title and Contnet")],
            "no layout `Title and Contnet`; the deck's layouts, nearest first: "
            "Title and Content, Title Slide",
        ),
        ([command("slide.setText", slide=2, placeholder=2, text="x")], "has 1 text placeholders"),
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
