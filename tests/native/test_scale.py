"""Reads of one old version cost what they show (issue 41, ADR-0026).

On SQLite and PostgreSQL, each read of an old version (its manifest, text, review, bytes, and
a diff of two of them) is counted in statements with a file of 10 revisions and again with 300:
the count is the same, and no statement reads the whole history. The history a page shows
comes a page at a time, newest first.
"""

from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import pytest
from artifactr.core import Actor, Artifact, NotFound, Visibility
from artifactr.workspace import Workspace
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.history import Dates, FilePage, WorkspaceHistory
from artifactr.files.core.leases import scope_of
from artifactr.files.core.manifests import NativeFile
from artifactr.files.native import NativeFiles
from artifactr.files.native.diff import revision_diff
from artifactr.files.sql import SqlHistory
from tests.databases import BACKENDS
from tests.scale import LARGE, SMALL, longer_history, more_files, proposals
from tests.statements import Statements, whole_reads
from tests.world import ALICE, World, open_world, world_on

Read = Callable[[NativeFiles, Workspace, str], Awaitable[object]]


async def _content(files: NativeFiles, ws: Workspace, artifact_id: str) -> object:
    return b"".join([chunk async for chunk in files.content(ws, artifact_id, 2)])


READS: dict[str, Read] = {
    "manifest": lambda files, ws, aid: files.manifest(ws, aid, 2),
    "text": lambda files, ws, aid: files.text(ws, aid, 2),
    "review": lambda files, ws, aid: files.review(ws, aid, 2),
    "content": _content,
    "diff": lambda files, ws, aid: revision_diff(files, ws, aid, 2, 3),
}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("read", list(READS))
async def test_a_read_of_an_old_version_costs_the_same_whatever_the_history(
    engine: AsyncEngine, statements: Statements, read: str
) -> None:
    world = await world_on(engine)
    ws = await world.ws()
    artifact_id = await world.upload()
    counts: list[int] = []
    for size in (SMALL, LARGE):
        await longer_history(ws, artifact_id, size)
        await READS[read](world.files, ws, artifact_id)  # warm: the first read loads types
        with statements.counting() as seen:
            await READS[read](world.files, ws, artifact_id)
        counts.append(len(seen))
        assert whole_reads(seen, "artifactr_revisions") == []
    assert counts[0] == counts[1], counts


@pytest.mark.parametrize("backend", BACKENDS)
async def test_history_comes_a_page_at_a_time_newest_first(backend: str, tmp_path: Path) -> None:
    async with open_world(backend, tmp_path) as world:
        ws = await world.ws()
        artifact_id = await world.upload()
        await longer_history(ws, artifact_id, 7)
        first = await world.files.history.page(ws, artifact_id, limit=3)
        older = await world.files.history.page(ws, artifact_id, before=first[-1].version, limit=3)
        last = await world.files.history.page(ws, artifact_id, before=2, limit=3)
        assert [r.version for r in first] == [7, 6, 5]
        assert [r.version for r in older] == [4, 3, 2]
        assert [r.version for r in last] == [1]
        fourth = await world.files.history.revision(ws, artifact_id, 4)
        assert fourth is not None
        assert fourth.data["outline"] == "v4"
        assert await world.files.history.revision(ws, artifact_id, 8) is None


async def test_a_version_the_file_never_had_is_not_found(env: World) -> None:
    world = env
    ws = await world.ws()
    artifact_id = await world.upload()
    for history in (world.files.history, WorkspaceHistory()):
        assert await history.revision(ws, artifact_id, 9) is None
    with pytest.raises(NotFound):
        await world.files.manifest(ws, artifact_id, 9)


@pytest.mark.parametrize("backend", BACKENDS)
async def test_history_answers_as_the_workspace_does(backend: str, tmp_path: Path) -> None:
    # The SQL adapter reads artifactr's table itself: it must agree with artifactr's own read.
    async with open_world(backend, tmp_path) as world:
        ws = await world.ws()
        artifact_id = await world.upload()
        await longer_history(ws, artifact_id, 5)
        every = await ws.revisions(artifact_id)
        for revision in every:
            assert await world.files.history.revision(ws, artifact_id, revision.version) == revision
        assert await world.files.history.page(ws, artifact_id) == list(reversed(every))


async def test_the_sql_history_dates_and_proposals_agree_with_the_workspaces(
    engine: AsyncEngine,
) -> None:
    world = await world_on(engine)
    ws = await world.ws()
    doc = await world.upload()
    other = await world.upload(name="other.docx")
    await longer_history(ws, doc, 4)
    mine = await proposals(ws, doc, 2)
    await proposals(ws, other, 1)
    sql, through = world.files.history, WorkspaceHistory()
    assert isinstance(sql, SqlHistory)

    for history in (sql, through):
        dates = await history.dates(ws, doc, [1, 3, 9], mine)
        assert sorted(dates.versions) == [1, 3]
        assert dates.versions[1][1] == "uploaded"
        assert sorted(dates.proposals) == sorted(mine)
        assert await history.dates(ws, doc, []) == Dates()
        assert [p.id for p in await history.pending(ws, doc)] == mine
        made = await history.made(ws, {doc: 4, other: 1, "nothing": 1})
        assert made[doc][0] == dates.versions[1][0]
        assert made[doc][1] > made[doc][0]
        assert made[other][0] == made[other][1]
        assert "nothing" not in made
        assert list(await history.made(ws, {other: 1})) == [other]
    assert await sql.dates(ws, doc, [1, 2, 3, 4], mine) == await through.dates(
        ws, doc, [1, 2, 3, 4], mine
    )
    assert await sql.made(ws, {doc: 4, other: 1}) == await through.made(ws, {doc: 4, other: 1})


class _Memo(Artifact, name="scale_memo"):
    """An artifact that is not a native file: no page of files shows it."""

    text: str


async def test_a_page_of_files_is_what_the_workspace_lists_of_them(engine: AsyncEngine) -> None:
    # The SQL adapter reads artifactr's artifacts table itself (ADR-0032): a page and its total
    # must be the workspace's own list, in its order, without archived, hidden or other kinds.
    hide: set[str] = set()

    async def hidden(tenant: str, workspace: str, actor: Actor) -> Visibility:
        return Visibility(artifacts=frozenset(hide))

    world = await world_on(engine, kinds=[_Memo], hidden=hidden, hidden_refresh=timedelta(0))
    ws = await world.ws()
    first = await world.upload()
    ids = [first, *await more_files(ws, first, 6)]
    await ws.create(_Memo(text="not a file"))
    archived = await ws.get(NativeFile, ids[2])
    await ws.commit(archived.archive())
    hide.add(ids[4])
    sql, through = world.files.history, WorkspaceHistory()
    assert isinstance(sql, SqlHistory)

    shown = await ws.artifacts(NativeFile)
    assert [a.id for a in shown] == [ids[0], ids[1], ids[3], ids[5], ids[6]]
    for start, limit in [(0, 50), (0, 2), (2, 2), (4, 2), (5, 2), (9, 2)]:
        page = await sql.files(ws, start=start, limit=limit)
        assert page == await through.files(ws, start=start, limit=limit)
        assert page.files == shown[start : start + limit]
        assert page.total == len(shown)
    empty = await world.workspaces.open("t1", "elsewhere", actor=ALICE)
    assert await sql.files(empty) == FilePage([], 0)


async def test_many_files_revisions_are_read_at_once_as_the_workspace_reads_each(
    engine: AsyncEngine, statements: Statements
) -> None:
    world = await world_on(engine)
    ws = await world.ws()
    doc = await world.upload()
    others = await more_files(ws, doc, 3)
    await longer_history(ws, doc, 4)
    sql = world.files.history
    assert isinstance(sql, SqlHistory)

    wanted = [doc, *others]
    with statements.counting() as seen:
        found = await sql.revisions(ws, wanted)
    assert len([sql for sql in seen if "FROM artifactr_revisions" in sql]) == 1
    assert found == {aid: await ws.revisions(aid) for aid in wanted}
    assert found == await WorkspaceHistory().revisions(ws, wanted)
    assert await sql.revisions(ws, ["nothing"]) == {}


async def test_collection_costs_the_same_at_10_and_300_files_and_orphans(
    engine: AsyncEngine, statements: Statements
) -> None:
    world = await world_on(engine)
    ws = await world.ws()
    doc = await world.upload()
    scope = scope_of(ws)
    made = 1
    counts: list[int] = []
    for size in (SMALL, LARGE):
        await more_files(ws, doc, size - made, prefix=f"g{size}", blobs=world.blobs)
        for n in range(made, size):  # a put whose commit never came, for every file
            await world.blobs.put_many(scope, f"orphan-{n}", [(f"lost {n}".encode(), "text/plain")])
        with statements.counting() as seen:
            removed = await world.files.collect(ws, grace=timedelta(0))
        assert removed == size - made
        counts.append(len(seen))
        made = size
    assert counts[0] == counts[1], counts
    copy = (await ws.artifacts(NativeFile))[-1]
    assert await world.files.text(ws, copy.id) == await world.files.text(ws, doc)
