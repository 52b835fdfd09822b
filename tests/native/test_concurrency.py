"""Real concurrency on PostgreSQL: many tasks race to check out and edit one file.

Each race has exactly one winner; every loser is told who holds the file, and nothing a winner
committed is lost.
"""

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from artifactr import UserActor
from artifactr.core import VersionConflict

from artifactr.files import AppCommand, ArtifactBusy, Checkout, WordDocument
from tests.native.conftest import World, make_env, sample_docx

RACERS = 12


@pytest.fixture
async def postgres_env(tmp_path: Path) -> AsyncIterator[World]:
    async for made in make_env("postgres", tmp_path):
        yield made


@pytest.mark.postgres
async def test_exactly_one_of_many_people_racing_to_check_out_wins(postgres_env: World) -> None:
    env = postgres_env
    artifact_id = await env.upload()

    async def race(n: int) -> Checkout | ArtifactBusy:
        ws = await env.ws(UserActor(id=f"person{n}"))
        try:
            return await env.files.check_out(ws, artifact_id)
        except ArtifactBusy as busy:
            return busy

    results = await asyncio.gather(*(race(n) for n in range(RACERS)))
    winners = [r for r in results if isinstance(r, Checkout)]
    losers = [r for r in results if isinstance(r, ArtifactBusy)]
    assert len(winners) == 1
    assert len(losers) == RACERS - 1
    assert {busy.lease.holder for busy in losers if busy.lease is not None} <= {winners[0].holder}
    lease = await env.files.lease(await env.ws(), artifact_id)
    assert lease is not None
    assert lease.holder == winners[0].holder


@pytest.mark.postgres
async def test_racing_edits_commit_one_at_a_time_and_lose_nothing(postgres_env: World) -> None:
    env = postgres_env
    artifact_id = await env.upload(sample_docx())

    async def race(n: int) -> str:
        ws = await env.ws(UserActor(id=f"person{n}"))
        command = AppCommand(command="edit.replaceAll", params={"text": "Draft", "with": f"v{n}"})
        try:
            outcome = await env.files.edit(ws, artifact_id, base_version=1, commands=[command])
        except ArtifactBusy:
            return "busy"
        except VersionConflict:
            return "conflict"
        return outcome.type

    results = await asyncio.gather(*(race(n) for n in range(RACERS)))
    assert results.count("applied") == 1
    assert set(results) <= {"applied", "busy", "conflict"}
    ws = await env.ws()
    head = await ws.get(WordDocument, artifact_id)
    assert head.version == 2
    revisions = await ws.revisions(artifact_id)
    assert [r.version for r in revisions] == [1, 2]
    assert "Draft" not in await env.files.text(ws, artifact_id)
    assert await env.files.lease(ws, artifact_id) is None
