"""The portal's words: times as a person reads them, refusals for a person, changed words."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from artifactr.core import Forbidden, InvalidState, NotFound, PatchFailed, Rejection

from artifactr.files import Presentation, Spreadsheet
from artifactr.files.core.errors import AppCrashed, FileTooLarge, NotEnabled, UnsafeFile
from artifactr.files.core.leases import ArtifactBusy
from artifactr.files.fastapi.portal_words import (
    MAX_WORDS,
    CellRow,
    Piece,
    SlideRow,
    changed_words,
    exact,
    for_people,
    kind_rows,
    relative,
)
from artifactr.files.native.diff import DiffLimits, kind_diff

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("delta", "said"),
    [
        (timedelta(seconds=-59), "just now"),
        (timedelta(seconds=30), "just now"),
        (timedelta(minutes=1), "in 1 minute"),
        (timedelta(minutes=-5, seconds=-10), "5 minutes ago"),
        (timedelta(hours=8), "in 8 hours"),
        (timedelta(hours=5, minutes=29), "in 5 hours"),
        (timedelta(hours=5, minutes=30), "in 6 hours"),
        (timedelta(hours=8, seconds=-1), "in 8 hours"),
        (timedelta(minutes=59, seconds=40), "in 1 hour"),
        (timedelta(hours=47, minutes=40), "in 2 days"),
        (timedelta(hours=-1), "1 hour ago"),
        (timedelta(hours=47), "in 47 hours"),
        (timedelta(days=-3), "3 days ago"),
        (timedelta(days=2), "in 2 days"),
    ],
)
def test_a_time_is_said_as_how_far_it_is_from_now(delta: timedelta, said: str) -> None:
    assert relative(NOW + delta, NOW) == said


def test_an_exact_time_is_said_in_the_time_zone_to_the_minute() -> None:
    moment = datetime(2026, 11, 30, 20, 0, 59, 179000, tzinfo=UTC)
    assert exact(moment, UTC) == "Mon 30 Nov 2026, 20:00 UTC"
    assert exact(moment, UTC, long=True) == "Monday 30 November 2026, 20:00 UTC"
    assert exact(moment, ZoneInfo("Europe/Paris")) == "Mon 30 Nov 2026, 21:00 CET"


@pytest.mark.parametrize(
    ("problem", "words", "technical"),
    [
        (
            UnsafeFile("not_a_zip", "the file is not a zip archive: it has no end record"),
            "That file isn't a Word document this can read",
            "unsafe_file: the file is not a zip archive: it has no end record",
        ),
        (
            FileTooLarge(50 * 1024 * 1024),
            "That file is too large: this takes files up to 50 MiB",
            "unsafe_file: the file is larger than",
        ),
        (
            AppCrashed("it fell over"),
            "The office app could not read or show the file",
            "app_failed (crashed): it fell over",
        ),
        (NotEnabled("off"), "Editing these files is switched off", "forbidden: "),
        (Forbidden("no"), "You may not do that to this file", "forbidden: no"),
        (NotFound("checkout", "co_1"), "That is gone or was never here", "not_found: "),
        (ArtifactBusy("art_1", None), "Someone else has this file checked out", "artifact_busy: "),
        (
            PatchFailed("does not apply"),
            "This proposal was made on an older version",
            "patch_failed: ",
        ),
        (
            InvalidState("ended"),
            "That didn't work, and nothing was changed.",
            "invalid_state: ended",
        ),
        (Rejection("odd"), "That didn't work, and nothing was changed.", "rejected: odd"),
    ],
)
def test_a_refusal_says_what_to_do_and_keeps_the_api_s_reason(
    problem: Rejection | AppCrashed, words: str, technical: str
) -> None:
    said = for_people(problem)
    assert said.words.startswith(words)
    assert said.technical.startswith(technical)


def test_the_words_that_differ_are_marked_in_both_paragraphs() -> None:
    before, after = changed_words("Draft terms for review.", "Final terms, agreed by both parties.")
    assert before == [
        Piece("Draft", True),
        Piece(" terms ", False),
        Piece("for review", True),
        Piece(".", False),
    ]
    assert [piece.text for piece in after if piece.changed] == ["Final", ", agreed by both parties"]
    assert "".join(piece.text for piece in after) == "Final terms, agreed by both parties."
    added, removed = changed_words("", " New. ")
    assert (added, removed) == ([], [Piece(" ", False), Piece("New.", True), Piece(" ", False)])


def test_a_paragraph_too_long_to_compare_word_by_word_is_left_whole() -> None:
    long = " ".join(["word"] * (MAX_WORDS + 1))
    assert changed_words(long, "short") == ([Piece(long, False)], [Piece("short", False)])


def test_a_workbooks_changes_are_rows_of_sheet_cell_before_and_after() -> None:
    before = "\n".join(
        (
            "# Sheet: Plain (A1:A1)",
            "1\t1",
            "# Sheet: Q1 plan (A1:B1)",
            "1\tRent\t10",
            "# Sheet: It's (A1:B1)",
            "1\tx\t1",
        )
    )
    before += "\n# Sheet: Old (empty)"
    after = "\n".join(
        (
            "# Sheet: Plain (A1:A1)",
            "1\t2",
            "# Sheet: Q1 plan (A1:B2)",
            "1\tRent\t12",
            "2\tFood",
            "# Sheet: It's (A1:B1)",
            "1\t\t2",
        )
    )
    after += "\n# Sheet: New (empty)"
    changes = kind_diff(Spreadsheet, before, after, limits=DiffLimits(changes=6))
    assert changes is not None
    rows = kind_rows(changes)
    assert rows.sheets == ["sheet removed: Old", "sheet added: New"]
    # A quoted sheet's name is shown as the person named it; an empty side is None.
    assert rows.cells == [
        CellRow("Plain", "A1", "1", "2"),
        CellRow("Q1 plan", "B1", "10", "12"),
        CellRow("Q1 plan", "A2", None, "Food"),
        CellRow("It's", "A1", "x", None),
    ]
    assert rows.slides == []
    assert rows.truncated  # It's!B1 was past the bound


def test_a_decks_changes_are_rows_of_slide_change_and_text_its_changed_words_marked() -> None:
    before = "# Slide 1: Intro\nHi\n# Slide 2: Plan\nGrow\n# Slide 3: Costs\nRent\n# Slide 4\nBody"
    after = "# Slide 1: Costs\nRent and food\n# Slide 2: Intro\nHi\n# Slide 3: Plan\nGrow\n"
    after += "# Slide 4: Next"
    changes = kind_diff(Presentation, before, after)
    assert changes is not None
    rows = kind_rows(changes)
    assert rows.cells == rows.sheets == []
    assert rows.slides == [
        SlideRow(4, "removed", "", [Piece("Body", False)], []),
        SlideRow(1, "moved from 3", "Costs", [], []),
        SlideRow(
            1,
            "changed",
            "Costs",
            [Piece("Costs\nRent", False)],
            [Piece("Costs\nRent ", False), Piece("and food", True)],
        ),
        SlideRow(4, "added", "Next", [], [Piece("Next", False)]),
    ]
    assert not rows.truncated
