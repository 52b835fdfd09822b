"""Each editor's own request sequence, and races on PostgreSQL with two engines.

Collabora's, as its ``wsd/wopi/WopiStorage.cpp`` sends it: CheckFileInfo, GetFile, LOCK, LOCK
again 15 minutes later (it never sends RefreshLock), an autosave with its ``X-COOL-WOPI-*``
headers, a save after someone else's revision (409, ``COOLStatusCode`` 1010, kept as a
proposal), a reload, an exit save and UNLOCK. OnlyOffice's WOPI mode: CheckFileInfo, GetFile,
Lock, RefreshLock, PutFile with ``X-WOPI-Editors``, Unlock. Then two hosts over one PostgreSQL
database: two Locks at once, a PutFile racing an agent's edit as the lease lapses, and a
PutFile retried after a lost answer.
"""

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from artifactr.core import VersionConflict
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.leases import ArtifactBusy
from artifactr.files.fastapi.wopi import stamped_version
from tests.clock import Clock
from tests.databases import another_engine, postgres_schema
from tests.fastapi.test_wopi import edited, head_bytes
from tests.wopi import AGENT, ERIN, WORKSPACE, Host, build_host, document, in_process

COOL_LOCK = "cool-lock-0f9c2b"
REPLACE = AppCommand(command="edit.replaceAll", params={"text": "Draft", "with": "Final"})


@pytest.fixture
async def host(engine: AsyncEngine) -> AsyncIterator[Host]:
    async with in_process(await build_host(engine)) as made:
        yield made


async def test_collabora_s_sequence_from_load_to_close(host: Host) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    info = (await host.call(artifact_id)).json()
    assert (info["SupportsLocks"], info["UserCanWrite"]) == (True, True)
    loaded = info["LastModifiedTime"]
    assert (await host.call(artifact_id, contents=True)).content == data
    assert (await host.call(artifact_id, "LOCK", X_WOPI_Lock=COOL_LOCK)).status_code == 200
    host.clock.advance(timedelta(minutes=15))
    again = await host.call(artifact_id, "LOCK", X_WOPI_Lock=COOL_LOCK)
    assert again.status_code == 200
    lease = await host.http.get(
        f"/workspaces/{WORKSPACE}/files/{artifact_id}/lease", headers={"x-user": "erin"}
    )
    assert lease.json()["lease"]["expires_at"] == "2026-11-30T12:45:00Z"
    autosave = await host.call(
        artifact_id,
        "PUT",
        contents=True,
        body=edited(data, "Autosaved"),
        X_WOPI_Lock=COOL_LOCK,
        X_COOL_WOPI_IsModifiedByUser="true",
        X_COOL_WOPI_IsAutosave="true",
        X_COOL_WOPI_IsExitSave="false",
        X_COOL_WOPI_Timestamp=loaded,
    )
    assert autosave.status_code == 200, autosave.text
    loaded = autosave.json()["LastModifiedTime"]
    assert stamped_version(loaded) == 2
    # The tab sleeps past its lease; erin checks a revision in through the files router.
    host.clock.advance(timedelta(minutes=31))
    files = f"/workspaces/{WORKSPACE}/files/{artifact_id}"
    checkout = (await host.http.post(f"{files}/checkouts", headers={"x-user": "erin"})).json()
    theirs = edited(data, "Erin's")
    await host.http.post(
        f"{files}/checkouts/{checkout['id']}/check-in", content=theirs, headers={"x-user": "erin"}
    )
    assert (await host.call(artifact_id, "LOCK", X_WOPI_Lock=COOL_LOCK)).status_code == 200
    conflict = await host.call(
        artifact_id,
        "PUT",
        contents=True,
        body=edited(data, "Mine, late"),
        X_WOPI_Lock=COOL_LOCK,
        X_COOL_WOPI_IsAutosave="true",
        X_COOL_WOPI_Timestamp=loaded,
    )
    assert (conflict.status_code, conflict.json()["COOLStatusCode"]) == (409, 1010)
    proposal = await (await host.ws(ERIN)).proposal(conflict.json()["proposal_id"])
    assert proposal.status == "pending"
    assert await head_bytes(host, artifact_id) == theirs
    # The person reloads: CheckFileInfo and GetFile again, then closes with an exit save.
    reloaded = (await host.call(artifact_id)).json()["LastModifiedTime"]
    assert (await host.call(artifact_id, contents=True)).content == theirs
    closing = edited(data, "Final")
    exit_save = await host.call(
        artifact_id,
        "PUT",
        contents=True,
        body=closing,
        X_WOPI_Lock=COOL_LOCK,
        X_COOL_WOPI_IsExitSave="true",
        X_COOL_WOPI_Timestamp=reloaded,
    )
    assert exit_save.status_code == 200, exit_save.text
    assert exit_save.headers["X-WOPI-ItemVersion"] == "4"
    unlocked = await host.call(artifact_id, "UNLOCK", X_WOPI_Lock=COOL_LOCK)
    assert unlocked.status_code == 200
    assert await head_bytes(host, artifact_id) == closing
    assert (await host.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == ""


async def test_onlyoffice_s_wopi_sequence(host: Host) -> None:
    data = document("Draft")
    artifact_id = await host.upload(data)
    info = (await host.call(artifact_id)).json()
    assert (info["SupportsUpdate"], info["UserCanNotWriteRelative"]) == (True, True)
    assert (await host.call(artifact_id, contents=True)).status_code == 200
    lock = "onlyoffice-7c1e"
    assert (await host.call(artifact_id, "LOCK", X_WOPI_Lock=lock)).status_code == 200
    host.clock.advance(timedelta(minutes=20))
    assert (await host.call(artifact_id, "REFRESH_LOCK", X_WOPI_Lock=lock)).status_code == 200
    saved = await host.call(
        artifact_id,
        "PUT",
        contents=True,
        body=edited(data, "OnlyOffice"),
        X_WOPI_Lock=lock,
        X_WOPI_Editors="user:eddie",
    )
    assert (saved.status_code, saved.headers["X-WOPI-ItemVersion"]) == (200, "2")
    save_as = await host.call(artifact_id, "PUT_RELATIVE", X_WOPI_SuggestedTarget=".docx")
    assert save_as.status_code == 501
    assert (await host.call(artifact_id, "UNLOCK", X_WOPI_Lock=lock)).status_code == 200


# ─── races on PostgreSQL, two engines ────────────────────────────────────────


@pytest.fixture
async def two_hosts() -> AsyncIterator[tuple[Host, Host]]:
    async with postgres_schema() as engine:
        clock = Clock()
        first = await build_host(engine, clock=clock)
        other = await another_engine(engine)
        try:
            second = await build_host(other, clock=clock, migrated=True)
            async with in_process(first) as a, in_process(second) as b:
                yield a, b
        finally:
            await other.dispose()


@pytest.mark.postgres
async def test_two_locks_at_once_one_wins_and_the_other_gets_its_lock(
    two_hosts: tuple[Host, Host],
) -> None:
    a, b = two_hosts
    artifact_id = await a.upload()
    first, second = await asyncio.gather(
        a.call(artifact_id, "LOCK", X_WOPI_Lock="from-a"),
        b.call(artifact_id, "LOCK", person=ERIN, X_WOPI_Lock="from-b"),
    )
    statuses = sorted([first.status_code, second.status_code])
    assert statuses == [200, 409]
    winner = "from-a" if first.status_code == 200 else "from-b"
    loser = second if first.status_code == 200 else first
    assert loser.headers["X-WOPI-Lock"] == winner
    assert (await a.call(artifact_id, "GET_LOCK")).headers["X-WOPI-Lock"] == winner


@pytest.mark.postgres
async def test_a_save_racing_an_agent_s_edit_as_the_lease_lapses_loses_nothing(
    two_hosts: tuple[Host, Host],
) -> None:
    a, b = two_hosts
    data = document("Draft")
    artifact_id = await a.upload(data)
    await a.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
    a.clock.advance(timedelta(minutes=31))  # both hosts' clock: the lease lapses
    mine = edited(data, "Saved")
    agent = await b.ws(AGENT)

    async def agent_edits() -> object:
        try:
            return await b.files.edit(agent, artifact_id, base_version=1, commands=[REPLACE])
        except (ArtifactBusy, VersionConflict) as refused:
            return refused  # busy, or its base went stale: refused, nothing written

    put, edit = await asyncio.gather(
        a.call(artifact_id, "PUT", contents=True, body=mine, X_WOPI_Lock="L1"),
        agent_edits(),
    )
    ws = await a.ws(ERIN)
    if put.status_code == 200:
        assert await head_bytes(a, artifact_id) == mine
    else:
        assert put.status_code == 409  # the agent held the file: the save was refused, 409
        assert await head_bytes(a, artifact_id) == data
    if not isinstance(edit, ArtifactBusy | VersionConflict):
        assert edit.type == "proposed"  # an agent's edit, by its type's write policy
        assert (await ws.proposal(edit.proposal_id)).status == "pending"


@pytest.mark.postgres
async def test_a_save_retried_after_a_lost_answer_makes_one_revision(
    two_hosts: tuple[Host, Host],
) -> None:
    a, b = two_hosts
    data = document("Draft")
    artifact_id = await a.upload(data)
    await a.call(artifact_id, "LOCK", X_WOPI_Lock="L1")
    body = edited(data, "Once")
    first, retry = await asyncio.gather(
        a.call(artifact_id, "PUT", contents=True, body=body, X_WOPI_Lock="L1"),
        b.call(artifact_id, "PUT", contents=True, body=body, X_WOPI_Lock="L1"),
    )
    later = await b.call(artifact_id, "PUT", contents=True, body=body, X_WOPI_Lock="L1")
    answers = {first.status_code, retry.status_code, later.status_code}
    assert answers == {200}
    ws = await a.ws()
    revisions = await ws.revisions(artifact_id)
    proposals = await ws.proposals()
    assert (len(revisions), proposals) == (2, [])  # the upload, and one save
    assert await head_bytes(a, artifact_id) == body
