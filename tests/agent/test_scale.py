"""The agent's list of files and its read of a file cost what they show (issue 41).

``list_files`` gives 50 files a call with the total and the start of the next page, in words a
model can follow; ``read_native`` and ``list_files`` send the same number of statements with 10
files in the workspace and with 300, on SQLite and PostgreSQL.
"""

import re

import pytest

from artifactr.files.agent import operations
from artifactr.files.agent.operations import WrongArguments
from artifactr.files.agent.wording import LIST_FILES
from tests.agent.conftest import World, call, say
from tests.scale import LARGE, SMALL, more_files
from tests.statements import Statements, whole_lists

pytestmark = pytest.mark.timeout(180)


async def test_the_files_are_listed_a_page_at_a_time_with_the_total(world: World) -> None:
    doc = await world.upload()
    await more_files(await world.ws(), doc, LIST_FILES + 4)

    run = await world.run(
        [call("list_files"), call("list_files", start=LIST_FILES), say("Listed.")]
    )

    first, second = (str(r.returned().content) for r in run.requests[1:3])
    total = LIST_FILES + 5
    assert first.startswith(
        f"Files 1-{LIST_FILES} of {total}; ask for the next page with start={LIST_FILES}.\n"
        f"{doc} (word_document, v1) 'report.docx', "
    )
    assert len(first.splitlines()) == LIST_FILES + 1
    assert second.startswith(
        f"Files {LIST_FILES + 1}-{total} of {total}; that is the last of them.\n"
    )
    assert second.endswith(
        f"'copy-{LIST_FILES + 3:05}.docx', {re.findall(r'([0-9,]+) bytes', first)[0]} bytes"
    )
    assert run.tool_returns() == [("list_files", "ok")] * 2


async def test_an_empty_workspace_and_a_start_past_the_end_are_said(world: World) -> None:
    ws = await world.ws()
    assert await operations.list_files(ws, world.files, 0) == "There are no native files here."
    await world.upload()
    assert (
        await operations.list_files(ws, world.files, 1)
        == "No files past 1; that is the last of them."
    )
    with pytest.raises(WrongArguments, match="start: 2 is past the end, as there are 1 files"):
        await operations.list_files(ws, world.files, 2)


@pytest.mark.parametrize("tool", ["list_files", "read_native"])
async def test_a_tool_costs_the_same_beside_10_and_300_files(
    world: World, statements: Statements, tool: str
) -> None:
    ws = await world.ws()
    doc = await world.upload()
    args = {} if tool == "list_files" else {"artifact_id": doc}
    made = 1
    found: list[int] = []
    for size in (SMALL, LARGE):
        await more_files(ws, doc, size - made, prefix=f"g{size}")
        made = size
        await world.run([call(tool, **args), say("Done.")])  # warm
        with statements.counting() as seen:
            await world.run([call(tool, **args), say("Done.")])
        found.append(len(seen))
        assert whole_lists(seen) == []
    assert found[0] == found[1], found
