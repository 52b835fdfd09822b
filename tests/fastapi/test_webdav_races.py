"""WebDAV's races, two engines on one database as two processes (ADR-0018).

Two LOCKs at once: one wins, the other is 423 naming the winner. A PUT racing an agent's edit
while its lock's lease lapses: whoever wins, nothing is lost and nothing is overwritten. A PUT
retried after a lost answer, while the first is still at work and later: one revision, never
two. On PostgreSQL (always in CI) and on SQLite.
"""

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import httpx2
import pytest
from artifactr.core import AgentActor, UserActor
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.leases import ArtifactBusy
from tests.databases import another_engine
from tests.documents import build_docx
from tests.fastapi.conftest import ALICE, BOB, WORKSPACE, Dav, MakeDav
from tests.fastapi.test_webdav_locks import LOCKINFO, NAME, revisions, token_of

MINE = build_docx(["Alice's paragraph, saved in her editor."])


@pytest.fixture
async def two(make_dav: MakeDav, engine: AsyncEngine) -> AsyncIterator[tuple[Dav, Dav]]:
    first = await make_dav()
    second_engine = await another_engine(engine)
    try:
        second = await make_dav(on=second_engine, clock=first.api.clock)
        yield first, second
    finally:
        await second_engine.dispose()


def lock(
    dav: Dav, who: dict[str, str], lease: str = "Second-3600"
) -> "asyncio.Future[httpx2.Response]":
    return asyncio.ensure_future(
        dav.client.request(
            "LOCK", dav.url(NAME), content=LOCKINFO, headers={**who, "Timeout": lease}
        )
    )


def put(dav: Dav, token: str, data: bytes = MINE) -> "asyncio.Future[httpx2.Response]":
    headers = {**ALICE, "If": f"(<{token}>)"}
    return asyncio.ensure_future(dav.client.put(dav.url(NAME), content=data, headers=headers))


async def test_two_locks_at_once_one_wins_and_the_other_is_423(two: tuple[Dav, Dav]) -> None:
    first, second = two
    artifact_id = await first.api.upload()
    answers = await asyncio.gather(lock(first, ALICE), lock(second, BOB))
    assert sorted(answer.status_code for answer in answers) == [200, 423]
    (won,) = [answer for answer in answers if answer.status_code == 200]
    (lost,) = [answer for answer in answers if answer.status_code == 423]
    winner = "user:alice" if won is answers[0] else "user:bob"
    assert winner in lost.text
    ws = await first.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    lease = await first.api.files.lease(ws, artifact_id)
    assert lease is not None
    assert lease.holder.endswith(winner)


async def test_a_put_racing_an_agent_s_edit_as_its_lease_lapses_loses_nothing(
    two: tuple[Dav, Dav],
) -> None:
    first, second = two
    artifact_id = await first.api.upload()
    token = token_of(await lock(first, ALICE, lease="Second-60"))
    first.api.clock.advance(timedelta(minutes=2))
    agent = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id="bob"))
    as_agent = await second.api.workspaces.open("t1", WORKSPACE, actor=agent)
    commands = [
        AppCommand(command="caret.docEnd"),
        AppCommand(command="text.insert", params={"text": "Agent."}),
    ]
    saved, edited = await asyncio.gather(
        put(first, token),
        second.api.files.edit(as_agent, artifact_id, base_version=1, commands=commands),
        return_exceptions=True,
    )
    assert isinstance(saved, httpx2.Response)
    ws = await first.api.workspaces.open("t1", WORKSPACE, actor=UserActor(id="alice"))
    proposals = await ws.proposals()
    if saved.status_code == 204:
        # Alice's save won the file: it is a revision by her or a proposal, and the agent's
        # edit was refused as busy or kept as a proposal.
        assert saved.headers["X-Artifactr-Outcome"] in ("applied", "proposed")
        assert isinstance(edited, ArtifactBusy) or not isinstance(edited, BaseException)
    else:
        # The agent won: Alice is refused with the reason, nothing of hers was stored.
        assert saved.status_code in (412, 423), saved.text
        assert not isinstance(edited, BaseException)
        assert await revisions(first, artifact_id) == [(1, "user:alice")]
    assert all(p.status == "pending" for p in proposals)
    assert next(version for version, _ in await revisions(first, artifact_id)) == 1


async def test_a_put_retried_after_a_lost_answer_makes_one_revision(two: tuple[Dav, Dav]) -> None:
    first, second = two
    artifact_id = await first.api.upload()
    token = token_of(await lock(first, ALICE))
    answers = await asyncio.gather(put(first, token), put(second, token))
    assert [answer.status_code for answer in answers] == [204, 204]
    outcomes = sorted(answer.headers["X-Artifactr-Outcome"] for answer in answers)
    assert outcomes == ["applied", "unchanged"]
    later = await put(second, token)
    assert later.headers["X-Artifactr-Outcome"] == "unchanged"
    assert await revisions(first, artifact_id) == [(1, "user:alice"), (2, "user:alice")]
    got = await first.client.get(first.url(NAME), headers=ALICE)
    assert got.content == MINE
