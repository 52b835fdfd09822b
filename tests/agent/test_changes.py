"""A Word edit's changes, told in the document's terms: paragraphs, table cells, headings,
comments, tracked changes and styles, each on a line, capped as a workbook's cells are."""

from artifactr.core import Proposed

from artifactr.files.agent.changes import Side, WordChanges, word_changes
from artifactr.files.agent.operations import Edited
from artifactr.files.core.app_port import AppCommand, ReviewItem

PROPOSED = Proposed(seq=1, proposal_id="prp_1")


def told(before: Side, after: Side, *commands: AppCommand, limit: int = 50) -> list[str]:
    return list(word_changes(before, after, commands, limit=limit).lines)


def test_a_paragraph_changed_added_and_removed_is_numbered_with_its_words_marked() -> None:
    before = Side("Title\nKeep this.\nThe fee is 100 euros a month.\nGone soon.\nEnd", (), "")
    after = Side("Title\nKeep this.\nThe fee is 120 euros a month.\nEnd\nA new line.", (), "")

    assert told(before, after) == [
        'paragraph 3: "The fee is 100 euros a month." → "The fee is 120 euros a month."; '
        "words: The fee is [-100-]{+120+} euros a month.",
        'paragraph 4 removed: "Gone soon."',
        'paragraph 5 added: "A new line."',
    ]


def test_a_long_paragraph_keeps_three_words_either_side_of_a_change() -> None:
    words = "and zero one two three four five six seven eight nine ten eleven twelve thirteen"
    after = words.replace("six", "SIX").replace("ten", "TEN")
    [line] = told(Side(words, (), ""), Side(after, (), ""))
    assert line.endswith(
        "; words: …three four five [-six-]{+SIX+} seven eight nine [-ten-]{+TEN+} eleven twelve "
        "thirteen"
    )
    longer = f"{words} fourteen fifteen"
    [line] = told(Side(longer, (), ""), Side(longer.replace("two", "2"), (), ""))
    assert line.endswith("; words: and zero one [-two-]{+2+} three four five…")
    _, gone = told(Side("a\nfee of 100 euros", (), ""), Side("a\nfee of euros", (), ""))[0].split(
        "words: "
    )
    _, new = told(Side("a\nfee of euros", (), ""), Side("a\nfee of 100 euros", (), ""))[0].split(
        "words: "
    )
    assert (gone, new) == ("fee of [-100 -]euros", "fee of {+100 +}euros")


def test_a_table_rows_changed_cells_are_told_by_their_column() -> None:
    before = Side("Item\tCost\nRent\t1200\tmonthly", (), "")
    after = Side("Item\tCost\nRent\t1250\tyearly", (), "")
    assert told(before, after) == [
        'table row (paragraph 2): cell 2: "1200" → "1250"; cell 3: "monthly" → "yearly"'
    ]


def test_headings_comments_tracked_changes_and_styles_set_are_told() -> None:
    note = ReviewItem(kind="comment", id="0", author="Ada", text="Check", anchor="fee")
    insert = ReviewItem(kind="change", id="1", author="Ada", text="new", change="insert")
    before = Side("Intro\nBody", (note, insert), "Intro")
    after = Side(
        "Intro\nBody",
        (note.model_copy(update={"text": "Checked"}),),
        "Intro\n  Body",
    )
    style = AppCommand(
        command="paragraph.setStyle", params={"paragraph": "Body", "style": "Heading 2"}
    )
    bold = AppCommand(command="text.setBold", params={"find": "Body"})

    assert told(before, after, style, bold) == [
        'heading added: "Body" (level 2)',
        'tracked insert 1 removed: "new" by Ada',
        'comment 0 changed: "Check" on "fee" by Ada → "Checked" on "fee" by Ada',
        'style set: "Heading 2" on the paragraph "Body"',
    ]


def test_long_texts_are_cut_and_a_long_diff_stops_past_its_limit() -> None:
    long = "x" * 300
    [line] = told(Side("a", (), ""), Side(f"a\n{long}", (), ""))
    assert line == f'paragraph 2 added: "{"x" * 119}…"'
    many = "\n".join(f"line {n}" for n in range(0, 400, 2))
    changed = "\n".join(f"line {n + 1}" for n in range(0, 400, 2))
    capped = word_changes(Side(many, (), ""), Side(changed, (), ""), (), limit=5)
    assert (len(capped.lines), capped.total) == (5, 200)
    cut = word_changes(Side("a", (), ""), Side("b\n" * 6_000, (), ""), (), limit=5)
    assert cut.truncated


def test_an_answer_lists_fifty_changes_and_says_how_many_more_or_that_none_show() -> None:
    lines = tuple(f'paragraph {n} added: "{n}"' for n in range(1, 61))
    answer = Edited(PROPOSED, WordChanges(lines[:50], 60, truncated=True)).answer("Proposed.")
    assert answer.splitlines()[:3] == [
        "Proposed.",
        "What it changes, as the app read the document (60; words [-removed-]{+added+}):",
        '- paragraph 1 added: "1"',
    ]
    assert answer.endswith(
        '- paragraph 50 added: "50"\n…and 10 more.\n'
        "There are more: the text's diff was cut at its bound."
    )
    assert Edited(PROPOSED, WordChanges((), 0)).answer("Proposed.") == (
        "Proposed.\nIt changes no paragraph's text, no heading, no comment and no tracked "
        "change: its change is formatting the text does not show (bold or italic, say)."
    )
