"""The portal's words: times as a person reads them, refusals for a person, changed words."""

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from artifactr.core import Forbidden, InvalidState, NotFound, PatchFailed, Rejection

from artifactr.files.core.errors import AppCrashed, FileTooLarge, NotEnabled, UnsafeFile
from artifactr.files.core.leases import ArtifactBusy
from artifactr.files.fastapi.portal_words import (
    MAX_WORDS,
    Piece,
    changed_words,
    exact,
    for_people,
    relative,
)

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("delta", "said"),
    [
        (timedelta(seconds=-59), "just now"),
        (timedelta(seconds=30), "just now"),
        (timedelta(minutes=1), "in 1 minute"),
        (timedelta(minutes=-5, seconds=-10), "5 minutes ago"),
        (timedelta(hours=8), "in 8 hours"),
        (timedelta(hours=5, minutes=30), "in 5 hours"),
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
