"""``find_commands``: a query's words, in any order, find the command, the best match first."""

import json

import pytest
from artifactr.core import Proposed

from artifactr.files import Spreadsheet
from artifactr.files.agent.operations import Edited, compact_params, find_commands, rank_commands
from artifactr.files.apps.fake import FakeApp
from artifactr.files.apps.libreoffice._app import CATALOGS
from artifactr.files.apps.libreoffice._catalog import CATALOG
from artifactr.files.core.app_port import CommandSpec
from artifactr.files.native.diff import DiffLimits, KindDiff, kind_diff
from tests.world import world_in_memory

LIBREOFFICE = [command.spec() for command in CATALOG]
EVERY_FORMAT = [command.spec() for catalog in CATALOGS.values() for command in catalog.values()]
"""LibreOffice's three catalogs, as its ``commands()`` lists them: Writer's, Calc's, Impress's."""


async def fake() -> list[CommandSpec]:
    return list(await FakeApp().commands())


@pytest.mark.parametrize("query", ["append paragraph", "add a paragraph", "paragraph add"])
async def test_the_words_a_model_uses_find_the_command_that_adds_a_paragraph(query: str) -> None:
    assert rank_commands(await fake(), query)[0].id == "text.newParagraph"
    assert rank_commands(LIBREOFFICE, query)[0].id == "paragraph.append"


async def test_words_in_any_order_rank_the_command_that_matches_most_of_them_first() -> None:
    for query in ("replace all", "all replace", "REPLACE ALL", "edit.replaceAll"):
        assert [spec.id for spec in rank_commands(await fake(), query)] == [
            "edit.replaceAll",  # both words, both in its id
            "review.acceptAll",  # one word each, in catalog order
            "review.rejectAll",
        ]
    # Both words are in "Accept all tracked changes"; "change" is not "changes".
    assert rank_commands(await fake(), "accept changes")[0].id == "review.acceptAll"


async def test_a_word_matches_the_start_of_a_word_of_the_id_or_label() -> None:
    assert [spec.id for spec in rank_commands(await fake(), "COMMENT")] == ["review.newComment"]
    assert rank_commands(await fake(), "doc end")[0].id == "caret.docEnd"
    assert rank_commands(await fake(), "no such thing") == []
    assert rank_commands(await fake(), "ment") == []  # inside a word is no match


async def test_an_empty_query_or_one_of_stop_words_alone_lists_or_matches_as_it_can() -> None:
    catalog = await fake()
    assert rank_commands(catalog, "") == catalog
    assert rank_commands(catalog, "  ?! ") == catalog
    # Stop words count only in a query of nothing else: then they are matched as words.
    assert [spec.id for spec in rank_commands(catalog, "the caret")] == [
        "caret.docStart",
        "caret.docEnd",
        "text.newParagraph",
        "review.newComment",
    ]
    assert "caret.docStart" in [spec.id for spec in rank_commands(catalog, "the")]
    assert "caret.docStart" not in [spec.id for spec in rank_commands(catalog, "a")]


async def test_find_commands_answers_with_the_ranked_commands() -> None:
    files = world_in_memory().files
    answer = await find_commands(files, "add a paragraph")
    assert answer.startswith("Commands matching 'add a paragraph': 4.\n- text.newParagraph: ")
    # FakeApp gives hints, not schemas: asked by its id, a command shows its hint alone.
    hinted = await find_commands(files, "para.style")
    assert hinted.splitlines()[1:3] == [
        "- para.style: Paragraph style, by name or id (Heading 1 or Heading1)",
        "    style: string, required",
    ]
    assert "JSON schema" not in hinted


def test_each_parameter_is_a_compact_line_of_its_name_type_values_and_whether_required() -> None:
    by_id = {spec.id: spec for spec in EVERY_FORMAT}
    assert compact_params(by_id["slide.insert"].params) == [
        "position: integer from 1, optional",
        "layout: text (not empty), optional",
        "title: string, optional",
    ]
    assert compact_params(by_id["paragraph.delete"].params) == [
        "paragraph: text (not empty), required unless heading is given",
        "heading: text (not empty), required unless paragraph is given",
        "occurrence: integer from 1, optional",
    ]
    assert compact_params(by_id["table.insertRow"].params)[-1] == "cells: [string], optional"
    assert compact_params(by_id["range.write"].params)[-1] == (
        "rows: [[string|number|boolean|null]], required"
    )
    assert compact_params(by_id["comment.delete"].params) == ["id: string|integer, required"]
    assert compact_params(by_id["changes.acceptAll"].params) == []
    # A parameter with allowed values lists them, as an app's schema may give them.
    fixed = '{"properties": {"align": {"type": "string", "enum": ["left", "center"]}}}'
    assert compact_params(fixed) == ["align: string, one of left, center, optional"]
    # A hint string is read as such; one of another shape is kept; nothing is nothing.
    assert compact_params('{"text": string, "n"?: n}') == [
        "text: string, required",
        "n: n, optional",
    ]
    assert compact_params("text to find") == ["text to find"]
    assert compact_params('["a list"]') == ['["a list"]']
    assert compact_params("") == []
    assert compact_params('{"properties": {"x": {}}}') == ["x: any, optional"]


async def test_a_command_asked_by_its_id_alone_shows_its_full_json_schema() -> None:
    files = world_in_memory(app=Catalogued()).files
    listed = await find_commands(files, "deck slide")
    assert listed.endswith(
        "\nAsk for one command by its id alone to see its parameters' JSON schema."
    )
    assert "{" not in listed
    one = await find_commands(files, " Slide.Insert ")
    schema = one.splitlines()[-1]
    assert schema.startswith("slide.insert's parameters as a JSON schema: {")
    layout = json.loads(schema.split(": ", 1)[1])["properties"]["layout"]
    assert "`Layouts:`" in layout["description"]


class Catalogued(FakeApp):
    """FakeApp, its catalog LibreOffice's three: commands with JSON schemas."""

    async def commands(self, query: str = "") -> list[CommandSpec]:
        return EVERY_FORMAT


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("workbook set cell", "cell.set"),
        ("set a cell's formula", "cell.set"),
        ("workbook add a comment", "cell.addComment"),
        ("add a sheet", "sheet.add"),
        ("workbook insert rows", "rows.insert"),
        ("deck move slide", "slide.move"),
        ("deck slide title", "slide.setTitle"),
        ("deck add a comment", "slide.addComment"),
        ("speaker notes", "slide.setNotes"),
        ("replace text in the deck", "slides.replaceAll"),
    ],
)
def test_a_workbooks_and_a_decks_commands_are_found_by_the_words_the_tools_suggest(
    query: str, found: str
) -> None:
    assert rank_commands(EVERY_FORMAT, query)[0].id == found


PROPOSED = Proposed(seq=1, proposal_id="prp_1")


def test_an_edits_answer_lists_fifty_of_its_changes_and_says_how_many_more() -> None:
    before = "# Sheet: S (A1:A60)\n" + "\n".join(f"{row}\t{row}" for row in range(1, 61))
    after = "# Sheet: S (A1:A60)\n" + "\n".join(f"{row}\t{-row}" for row in range(1, 61))
    changes = kind_diff(Spreadsheet, before, after)
    answer = Edited(PROPOSED, changes).answer("Proposed.")
    lines = answer.splitlines()
    assert lines[:3] == [
        "Proposed.",
        "What it changes, as the app computed it (60):",
        "- S!A1: 1 → -1",
    ]
    assert lines[-2:] == ["- S!A50: 50 → -50", "…and 10 more."]
    cut = kind_diff(Spreadsheet, before, after, limits=DiffLimits(changes=3))
    assert (
        Edited(PROPOSED, cut)
        .answer("Proposed.")
        .endswith("- S!A3: 3 → -3\nThere are more: the list was cut at its bound.")
    )


def test_an_edit_that_changes_no_cell_or_slide_says_its_change_is_elsewhere() -> None:
    assert Edited(PROPOSED, KindDiff(changes=())).answer("Proposed.") == (
        "Proposed.\nIt changes no cell's value, no sheet and no slide's text: its change is "
        "elsewhere (formatting or a comment, say)."
    )
    assert Edited(PROPOSED, None).answer("Proposed.") == "Proposed."
