"""A workbook's and a deck's diffs in their own terms, from the texts the inspection stored."""

from artifactr.files import Presentation, Spreadsheet, WordDocument
from artifactr.files.native.diff import DiffLimits, kind_diff

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
