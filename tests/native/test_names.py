"""WebDAV's names: each file a name unique in its workspace, kept from the log (issue 41).

The SQL history keeps the names in a table of the package's own, brought up to the log on each
read: the first read gives the names the workspace's listing gave (so a name a client knows does
not change), a file created later gets the first of its numbered names no other file holds, a
rename moves it, and an archived file frees its own. A file keeps its name while others come and
go. A name is found by its one row, whatever the workspace holds.
"""

from datetime import timedelta

import pytest
from artifactr import UserActor
from artifactr.core import Actor, Artifact, EditArtifact, Forbidden, JsonPatch, Visibility
from artifactr.workspace import Access, Workspace
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.history import WorkspaceHistory, numbered, unique_name
from artifactr.files.core.manifests import NativeFile
from artifactr.files.sql import SqlHistory
from artifactr.files.sql.history import NAMES_AHEAD
from tests.scale import LARGE, SMALL, more_files
from tests.statements import Statements, whole_lists
from tests.world import World, world_on

pytestmark = pytest.mark.timeout(180)


class _Note(Artifact, name="names_note"):
    """An artifact that is not a native file: it has no WebDAV name."""

    text: str


async def renamed(ws: Workspace, artifact_id: str, name: str) -> None:
    """Rename a file through artifactr, as its REST or MCP would."""
    head = (await ws.get(NativeFile, artifact_id)).version
    patch = JsonPatch(ops=({"op": "replace", "path": "/name", "value": name},))
    await ws.commit(EditArtifact(artifact_id=artifact_id, base_version=head, patch=patch))


async def archived(ws: Workspace, artifact_id: str) -> None:
    await ws.commit((await ws.get(NativeFile, artifact_id)).archive())


def sql_of(world: World) -> SqlHistory:
    history = world.files.history
    assert isinstance(history, SqlHistory)
    return history


def test_a_name_is_numbered_before_its_extension_or_at_its_end() -> None:
    assert [numbered("a.docx", n) for n in (1, 2, 3)] == ["a.docx", "a (2).docx", "a (3).docx"]
    assert numbered("notes", 2) == "notes (2)"
    assert unique_name("A.docx", {"a.docx", "a (2).docx"}) == "A (3).docx"


async def test_the_first_names_are_the_listings_whatever_was_made_before(
    engine: AsyncEngine,
) -> None:
    world = await world_on(engine, kinds=[_Note])
    ws = await world.ws()
    first = await world.upload(name="Report.docx")
    names = ("report.docx", "report (2).docx", "notes", "Notes", "a/b.docx", "gone.docx")
    ids = [first, *[await world.upload(name=name) for name in names]]
    await ws.create(_Note(text="not a file"))
    await archived(ws, ids[-1])

    expected = await WorkspaceHistory().names(ws)
    assert await sql_of(world).names(ws) == expected
    assert sorted(expected.values()) == [
        "Notes (2)",
        "Report.docx",
        "a_b.docx",
        "notes",
        "report (2) (2).docx",
        "report (2).docx",
    ]
    assert expected[ids[1]] == "report (2).docx"
    for history in (sql_of(world), WorkspaceHistory()):
        assert await history.named(ws, "REPORT (2).DOCX") == (ids[1], "report (2).docx")
        assert await history.named(ws, "notes (2)") == (ids[4], "Notes (2)")
        assert await history.named(ws, "gone.docx") is None
        assert await history.named(ws, "missing.docx") is None


async def test_a_file_keeps_its_name_as_others_come_go_and_are_renamed(
    engine: AsyncEngine,
) -> None:
    world = await world_on(engine)
    ws = await world.ws()
    sql = sql_of(world)
    first = await world.upload(name="plan.docx")
    second = await world.upload(name="plan.docx")
    assert await sql.names(ws) == {first: "plan.docx", second: "plan (2).docx"}

    await archived(ws, first)  # the listing would now call the second plan.docx
    assert await sql.names(ws) == {second: "plan (2).docx"}
    third = await world.upload(name="PLAN.docx")  # the freed name is the new file's
    await renamed(ws, second, "budget.docx")
    await renamed(ws, third, "Plan.docx")  # only its case: it keeps the name, as renamed
    assert await sql.names(ws) == {second: "budget.docx", third: "Plan.docx"}
    assert await sql.named(ws, "plan (2).docx") is None
    assert await sql.named(ws, "Budget.DOCX") == (second, "budget.docx")


async def test_many_files_of_one_name_made_at_once_each_get_the_next_number(
    engine: AsyncEngine,
) -> None:
    world = await world_on(engine)
    ws = await world.ws()
    first = await world.upload(name="memo.docx")
    sql = sql_of(world)
    assert await sql.names(ws) == {first: "memo.docx"}
    count = NAMES_AHEAD + 3  # past the numbered names one statement asks about
    copies = await more_files(ws, first, count, prefix="memo")
    for artifact_id in copies:
        await renamed(ws, artifact_id, "Memo.docx")
    names = await sql.names(ws)
    assert [names[aid] for aid in copies] == [f"Memo ({n}).docx" for n in range(2, count + 2)]
    assert names == await WorkspaceHistory().names(ws)


async def test_two_readers_name_the_new_files_once(engine: AsyncEngine) -> None:
    world = await world_on(engine)
    ws = await world.ws()
    first = await world.upload(name="a.docx")
    second = await world.upload(name="a.docx")
    one, other = SqlHistory(engine), SqlHistory(engine)
    expected = {first: "a.docx", second: "a (2).docx"}
    assert await one.names(ws) == expected
    assert await other.names(ws) == expected
    assert await other.named(ws, "a (2).docx") == (second, "a (2).docx")


async def test_names_are_read_as_the_workspace_decides(engine: AsyncEngine) -> None:
    hide: set[str] = set()

    async def hidden(tenant: str, workspace: str, actor: Actor) -> Visibility:
        return Visibility(artifacts=frozenset(hide))

    async def authorize(tenant: str, workspace: str | None, actor: Actor, access: Access) -> bool:
        return actor.participant != "user:mallory" or access.action == "artifactr:open"

    world = await world_on(engine, hidden=hidden, hidden_refresh=timedelta(0), authorize=authorize)
    ws = await world.ws()
    artifact_id = await world.upload(name="secret.docx")
    hide.add(artifact_id)
    sql = sql_of(world)
    # The name is the file's whoever asks; whether the actor sees it is the workspace's read.
    assert await sql.named(ws, "secret.docx") == (artifact_id, "secret.docx")
    assert await WorkspaceHistory().named(ws, "secret.docx") is None
    mallory = await world.workspaces.open("t1", "w1", actor=UserActor(id="mallory"))
    for history in (sql, WorkspaceHistory()):
        with pytest.raises(Forbidden):
            await history.named(mallory, "secret.docx")
        with pytest.raises(Forbidden):
            await history.names(mallory)


async def test_a_name_is_one_row_at_10_and_300_files(
    engine: AsyncEngine, statements: Statements
) -> None:
    world = await world_on(engine)
    ws = await world.ws()
    first = await world.upload(name="contract.docx")
    sql = sql_of(world)
    counts: list[int] = []
    made = 1
    for size in (SMALL, LARGE):
        await more_files(ws, first, size - made, prefix=f"g{size}")
        made = size
        assert await sql.named(ws, "contract.docx") == (first, "contract.docx")  # up to date
        with statements.counting() as seen:
            assert await sql.named(ws, "CONTRACT.docx") == (first, "contract.docx")
        counts.append(len(seen))

        assert whole_lists(seen) == []
    assert counts[0] == counts[1] <= 3, counts  # the log past the mark, the name (a BEGIN)
