"""``find_commands``: a query's words, in any order, find the command, the best match first."""

import pytest

from artifactr.files.agent.operations import find_commands, rank_commands
from artifactr.files.apps.fake import FakeApp
from artifactr.files.apps.libreoffice._catalog import CATALOG
from artifactr.files.core.app_port import CommandSpec
from tests.world import world_in_memory

LIBREOFFICE = [command.spec() for command in CATALOG]


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
    assert answer.startswith("Commands matching 'add a paragraph': 4.\n- text.newParagraph ")
