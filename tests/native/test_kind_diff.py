"""A workbook's and a deck's diffs in their own terms, from the texts the inspection stored."""

import io
from collections.abc import AsyncGenerator, Callable

from PIL import Image

from artifactr.files import Presentation, Spreadsheet, WordDocument
from artifactr.files.native.diff import (
    ChangedPage,
    DiffLimits,
    kind_diff,
    paired_pages,
    slide_pairs,
)
from artifactr.files.native.regions import changed_region

BEFORE = "\n".join(
    [
        "# Sheet: Budget (A1:B4)",
        "1\tItem\tCost",
        "2\tRent\t1200",
        "4\tTotal\t1500 (=SUM(B2:B3))",
        "# Sheet: Old notes (A1:A1)",
        "1\tgone",
    ]
)
AFTER = "\n".join(
    [
        "# Sheet: Budget (A1:C4)",
        "1\tItem\tCost",
        "2\tRent\t1250",
        "3\t\t\tnew",
        "4\tTotal\t1550 (=SUM(B2:B3))",
        "not a row",
        "# Sheet: Plan (empty)",
    ]
)


def test_a_workbook_diff_names_cells_and_sheets() -> None:
    found = kind_diff(Spreadsheet, BEFORE, AFTER)
    assert found is not None
    assert [change.line for change in found.changes] == [
        "sheet removed: Old notes",
        "sheet added: Plan",
        "Budget!B2: 1200 → 1250",
        "Budget!B4: 1500 (=SUM(B2:B3)) → 1550 (=SUM(B2:B3))",
        "Budget!C3: (empty) → new",
    ]
    cell = found.changes[2]
    assert (cell.what, cell.where, cell.before, cell.after) == ("cell", "Budget!B2", "1200", "1250")
    assert not found.truncated
    quoted = kind_diff(Spreadsheet, "# Sheet: Q1 plan (A1:A1)\n1\tx", "# Sheet: Q1 plan (A1:A1)")
    assert quoted is not None
    assert [change.line for change in quoted.changes] == ["'Q1 plan'!A1: x → (empty)"]
    wide = kind_diff(
        Spreadsheet,
        "# Sheet: S (A1:AB1)",
        "# Sheet: S (A1:AB1)\n1" + "\tv" * 28,
        limits=DiffLimits(changes=27),
    )
    assert wide is not None
    assert wide.truncated
    assert [change.where for change in wide.changes][-2:] == ["S!Z1", "S!AA1"]


def test_a_deck_diff_names_slides_added_removed_moved_and_changed() -> None:
    before = "\n".join(
        [
            "# Slide 1: Intro",
            "Hello",
            "# Slide 2: Costs",
            "Rent",
            "# Slide 3: Plan",
            "Grow",
            "# Slide 4: Old",
            "# Slide 5",
            "untitled",
        ]
    )
    after = "\n".join(
        [
            "# Slide 1: Plan",
            "Grow",
            "# Slide 2: Intro",
            "Hello",
            "# Slide 3: Costs",
            "Rent and food",
            "# Slide 4: Agenda",
            "# Slide 5",
            "untitled",
        ]
    )
    found = kind_diff(Presentation, before, after)
    assert found is not None
    assert [change.line for change in found.changes] == [
        "slide 4 removed: Old",
        "slide moved: Plan, 3 → 1",
        "slide 3 changed: Costs",
        "slide 4 added: Agenda",
    ]
    changed = found.changes[2]
    assert (changed.before, changed.after) == ("Costs\nRent", "Costs\nRent and food")


def test_a_word_document_has_no_diff_in_other_terms() -> None:
    assert kind_diff(WordDocument, "a", "b") is None


def test_a_retitled_slide_is_changed_not_removed_and_added() -> None:
    before = "# Slide 1: Intro\nHello\n# Slide 2: Topic 2\nPoint a\nNotes: Say 2\n# Slide 3: End"
    after = "# Slide 1: Intro\nHello\n# Slide 2: Costs\nPoint a\nNotes: Say 2\n# Slide 3: Fin"
    found = kind_diff(Presentation, before, after)
    assert found is not None
    # The body matches slide 2; slide 3 is a title alone, with nothing else to match it by.
    assert [change.line for change in found.changes] == [
        "slide 3 removed: End",
        "slide 2 changed: Costs",
        "slide 3 added: Fin",
    ]
    assert (found.changes[1].before, found.changes[1].after) == (
        "Topic 2\nPoint a\nNotes: Say 2",
        "Costs\nPoint a\nNotes: Say 2",
    )


# ─── a deck's pages, paired by the slide they show ───────────────────────────


def deck(*slides: str) -> str:
    """Return a deck's text as the inspection writes it: its layouts, then a slide a title."""
    return "\n".join(
        ["Layouts: Title Slide", *(f"# Slide {n}: {t}\n{t} body" for n, t in enumerate(slides, 1))]
    )


def png(mark: int) -> bytes:
    """Return a page's render: white, with a black dot where ``mark`` says."""
    image = Image.new("RGB", (8, 8), "white")
    image.putpixel((mark % 8, mark // 8 % 8), (0, 0, 0))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def renders(*marks: int) -> Callable[[int], AsyncGenerator[bytes]]:
    """Return a side's renders: page n is ``png(marks[n - 1])``."""

    async def pages(last: int) -> AsyncGenerator[bytes]:
        for mark in marks[:last]:
            yield png(mark)

    return pages


async def marked(before: tuple[str, ...], after: tuple[str, ...]) -> list[ChangedPage]:
    every = sorted({*before, *after})
    old = renders(*(every.index(title) for title in before))
    new = renders(*(every.index(title) for title in after))
    found, compared = await paired_pages(
        (len(before), old), (len(after), new), slide_pairs(deck(*before), deck(*after))
    )
    assert compared == max(len(before), len(after))
    return found


async def test_a_slide_inserted_removed_or_moved_marks_that_slide_alone() -> None:
    slides = ("Intro", "Plan", "Costs", "Next")
    inserted = await marked(slides, ("Intro", "Agenda", "Plan", "Costs", "Next"))
    assert inserted == [ChangedPage(page=2, before=False, after=True)]
    removed = await marked(slides, ("Intro", "Costs", "Next"))
    assert removed == [ChangedPage(page=2, before=True, after=False)]
    moved = await marked(slides, ("Next", "Intro", "Plan", "Costs"))
    assert moved == []


async def test_a_changed_slide_is_compared_with_itself_where_an_insert_moved_it() -> None:
    before = ("Intro", "Plan", "Costs")
    after = ("Intro", "Agenda", "Plan", "Costs")
    old = renders(1, 2, 3)
    new = renders(1, 9, 2, 30)
    found, _ = await paired_pages((3, old), (4, new), slide_pairs(deck(*before), deck(*after)))
    region = changed_region(png(3), png(30))
    assert found == [
        ChangedPage(page=2, before=False, after=True),
        ChangedPage(page=4, before=True, after=True, before_page=3, region=region),
    ]
    same, _ = await paired_pages((1, renders(1)), (1, renders(5)), {1: 1})
    assert same == [
        ChangedPage(page=1, before=True, after=True, region=changed_region(png(1), png(5)))
    ]
