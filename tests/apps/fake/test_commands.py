"""FakeApp's catalog, and its refusal of unknown commands and bad parameters in WordCraft's
words.

Every edit is checked by reading the result independently, with python-docx or lxml, never
through FakeApp.
"""

import pytest

from artifactr.files import (
    AppCommand,
    AppRefused,
)
from artifactr.files.apps.fake import FakeApp
from tests.apps.fake.conftest import NS, cmd, edit, texts, xml
from tests.documents import build_docx

# ─── catalog ──────────────────────────────────────────────────────────────────


async def test_the_catalog_lists_commands_filtered_by_id_or_label(app: FakeApp) -> None:
    everything = await app.commands()
    assert len(everything) == 13
    review = await app.commands("REVIEW")
    assert [c.id for c in review] == [
        "review.newComment",
        "review.trackChanges",
        "review.accept",
        "review.reject",
        "review.acceptAll",
        "review.rejectAll",
    ]
    (replace,) = await app.commands("replace all")
    assert replace.params == '{"text": string, "with": string, "matchCase"?: bool}'
    assert replace.mutates
    (select,) = await app.commands("select.text")
    assert not select.mutates
    assert await app.commands("nothing like it") == []


# ─── refusals ─────────────────────────────────────────────────────────────────


async def test_an_unknown_command_is_refused_in_wordcrafts_words(app: FakeApp) -> None:
    with pytest.raises(AppRefused) as refused:
        await app.apply(build_docx(), [cmd("format.bold", value=True)])
    assert refused.value.reason == "unknown command `format.bold`"


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        (cmd("select.text"), "missing `text`"),
        (cmd("select.text", text=3), "`text` must be a string"),
        (cmd("select.text", text=""), "`text` must not be empty"),
        (cmd("select.text", text="a\x00"), "`text` holds a character a .docx cannot"),
        (cmd("select.text", text="a", occurrence=0), "`occurrence` must be a positive integer"),
        (cmd("select.text", text="a", occurrence=True), "`occurrence` must be a positive integer"),
        (cmd("select.text", text="a", occurrence="2"), "`occurrence` must be a positive integer"),
        (
            cmd("text.insert", text="a", regex=True),
            'unknown field `regex`; text.insert takes {"text": string, "raw"?: bool}',
        ),
        (cmd("caret.docEnd", x=1), "unknown field `x`; caret.docEnd takes {}"),
        (cmd("edit.replaceAll", text="a", with_="b\rc"), "`with` cannot break a paragraph"),
        (
            cmd("edit.replaceAll", text="a", with_="b", matchCase="yes"),
            "`matchCase` must be true or false",
        ),
        (cmd("review.accept", id=True), "`id` must be an id"),
        (cmd("review.accept", id=""), "`id` must be an id"),
        (cmd("review.accept", id=[1]), "`id` must be an id"),
    ],
)
async def test_bad_parameters_are_refused_in_wordcrafts_words(
    app: FakeApp, command: AppCommand, reason: str
) -> None:
    with pytest.raises(AppRefused) as refused:
        await app.apply(build_docx(), [command])
    assert refused.value.reason == f"bad parameters: {reason}"


async def test_a_failing_batch_changes_nothing(app: FakeApp) -> None:
    source = build_docx(["Hello"])
    await app.apply(source, [cmd("caret.docStart")])
    before = app.last_results
    with pytest.raises(AppRefused):
        await app.apply(
            source,
            [
                cmd("review.trackChanges"),
                cmd("text.insert", text="Oh, "),
                cmd("para.style", style="Nope"),
            ],
        )
    assert app.last_results == before
    content = await edit(app, source, cmd("text.insert", text="Oh, "))
    assert texts(content) == ["Oh, Hello"]
    assert xml(content).findall(".//w:ins", NS) == []
