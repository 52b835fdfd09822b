"""Leases at the port: one behaviour suite over memory, SQLite and PostgreSQL, then SQL's own.

A free lease is taken; a live one is refused to another holder and renewed (longer or shorter)
by its own; an expired one is taken over and no longer current; only its holder releases it.
The SQL adapter also keeps the database's clock when given none, returns UTC, and lets exactly
one of many processes take a free lease. The checked entry points (``lease_artifact`` and the
rest) are tested in ``test_lease_access.py``.
"""

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from artifactr.workspace import Scope
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files import ArtifactLease, InMemoryLeases
from artifactr.files.core.leases import Leases
from artifactr.files.sql import SqlLeases, migrate
from tests.clock import Clock
from tests.databases import BACKENDS, another_engine, sql_engine

SCOPE = Scope(tenant_id="t1", workspace_id="w1")
TTL = timedelta(seconds=45)


@dataclass
class Held:
    backend: str
    leases: Leases
    clock: Clock


@pytest.fixture(params=BACKENDS)
async def held(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Held]:
    clock = Clock()
    if request.param == "memory":
        yield Held("memory", InMemoryLeases(clock=clock), clock)
        return
    async with sql_engine(request.param, tmp_path) as engine:
        await migrate(engine)
        yield Held(request.param, SqlLeases(engine, clock=clock), clock)


@pytest.fixture
async def migrated(engine: AsyncEngine) -> AsyncEngine:
    await migrate(engine)
    return engine


# ─── every adapter ────────────────────────────────────────────────────────────


async def test_a_free_lease_is_taken_until_now_plus_the_ttl(held: Held) -> None:
    lease = await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    expected = ArtifactLease(artifact_id="a1", holder="edit:1", expires_at=held.clock.now + TTL)
    assert lease == expected
    assert await held.leases.current(SCOPE, "a1") == expected


async def test_a_live_lease_is_refused_to_another_holder(held: Held) -> None:
    first = await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    held.clock.now += TTL - timedelta(seconds=1)
    assert await held.leases.acquire(SCOPE, "a1", "edit:2", TTL) is None
    assert await held.leases.current(SCOPE, "a1") == first


async def test_an_expired_lease_is_not_current_and_another_holder_takes_it(held: Held) -> None:
    await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    held.clock.now += TTL
    assert await held.leases.current(SCOPE, "a1") is None
    taken = await held.leases.acquire(SCOPE, "a1", "edit:2", TTL)
    assert taken == ArtifactLease(
        artifact_id="a1", holder="edit:2", expires_at=held.clock.now + TTL
    )
    assert await held.leases.current(SCOPE, "a1") == taken


@pytest.mark.parametrize(
    "ttl", [timedelta(hours=8), timedelta(seconds=5)], ids=["longer", "shorter"]
)
async def test_the_same_holder_renews_to_now_plus_the_new_ttl(held: Held, ttl: timedelta) -> None:
    await held.leases.acquire(SCOPE, "a1", "checkout:co_1:user:alice", timedelta(minutes=10))
    held.clock.now += timedelta(minutes=1)
    renewed = await held.leases.acquire(SCOPE, "a1", "checkout:co_1:user:alice", ttl)
    assert renewed is not None
    assert renewed.expires_at == held.clock.now + ttl
    assert await held.leases.current(SCOPE, "a1") == renewed


async def test_the_holder_may_renew_an_expired_lease(held: Held) -> None:
    await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    held.clock.now += 2 * TTL
    renewed = await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    assert renewed is not None
    assert renewed.expires_at == held.clock.now + TTL


async def test_only_the_holder_releases_a_lease(held: Held) -> None:
    lease = await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    assert await held.leases.release(SCOPE, "a1", "edit:2") is False
    assert await held.leases.current(SCOPE, "a1") == lease
    assert await held.leases.release(SCOPE, "a1", "edit:1") is True
    assert await held.leases.current(SCOPE, "a1") is None
    taken = await held.leases.acquire(SCOPE, "a1", "edit:2", TTL)
    assert taken is not None
    assert (taken.holder, taken.expires_at) == ("edit:2", held.clock.now + TTL)
    assert await held.leases.current(SCOPE, "a1") == taken


async def test_releasing_a_missing_lease_is_a_no_op(held: Held) -> None:
    assert await held.leases.release(SCOPE, "a1", "edit:1") is False


async def test_the_holder_releases_its_lease_after_it_expired(held: Held) -> None:
    await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    held.clock.now += 2 * TTL
    assert await held.leases.release(SCOPE, "a1", "edit:1") is True
    assert await held.leases.release(SCOPE, "a1", "edit:1") is False


async def test_a_lease_on_an_unknown_artifact_is_not_current(held: Held) -> None:
    assert await held.leases.current(SCOPE, "a1") is None


@pytest.mark.parametrize(
    "other",
    [
        Scope(tenant_id="t2", workspace_id="w1"),
        Scope(tenant_id="t1", workspace_id="w2"),
    ],
    ids=["tenant", "workspace"],
)
async def test_each_scope_has_its_own_leases(held: Held, other: Scope) -> None:
    await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    assert await held.leases.current(other, "a1") is None
    assert await held.leases.release(other, "a1", "edit:1") is False
    taken = await held.leases.acquire(other, "a1", "edit:2", TTL)
    assert taken is not None
    assert await held.leases.current(other, "a1") == taken
    assert taken.holder == "edit:2"
    lease = await held.leases.current(SCOPE, "a1")
    assert lease is not None
    assert lease.holder == "edit:1"


async def test_each_artifact_has_its_own_lease(held: Held) -> None:
    await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    taken = await held.leases.acquire(SCOPE, "a2", "edit:2", TTL)
    assert taken is not None
    assert await held.leases.current(SCOPE, "a2") == taken
    first = await held.leases.current(SCOPE, "a1")
    assert first is not None
    assert (first.holder, taken.holder) == ("edit:1", "edit:2")


async def test_a_clock_in_another_zone_gives_the_same_instants(held: Held) -> None:
    held.clock.now = held.clock.now.astimezone(timezone(timedelta(hours=2)))
    lease = await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    assert lease is not None
    assert lease.expires_at == datetime(2026, 11, 30, 12, tzinfo=UTC) + TTL
    assert lease.expires_at.tzinfo == UTC
    assert await held.leases.current(SCOPE, "a1") == lease


# ─── SQL only ─────────────────────────────────────────────────────────────────


async def test_without_a_clock_leases_run_on_the_databases_clock_in_utc(
    migrated: AsyncEngine,
) -> None:
    leases = SqlLeases(migrated)
    before = datetime.now(UTC)
    lease = await leases.acquire(SCOPE, "a1", "edit:1", timedelta(hours=1))
    after = datetime.now(UTC)
    assert lease is not None
    assert lease.expires_at.utcoffset() == timedelta(0)
    slack = timedelta(seconds=2)
    assert before + timedelta(hours=1) - slack <= lease.expires_at <= after + timedelta(hours=1)
    assert await leases.current(SCOPE, "a1") == lease
    assert await leases.acquire(SCOPE, "a1", "edit:2", TTL) is None


async def test_on_the_databases_clock_a_lapsed_lease_is_free(migrated: AsyncEngine) -> None:
    leases = SqlLeases(migrated)
    await leases.acquire(SCOPE, "a1", "edit:1", -TTL)
    assert await leases.current(SCOPE, "a1") is None
    taken = await leases.acquire(SCOPE, "a1", "edit:2", TTL)
    assert taken is not None
    assert taken.holder == "edit:2"


async def test_a_clock_in_another_zone_is_returned_in_utc(migrated: AsyncEngine) -> None:
    zone = timezone(timedelta(hours=-5))
    leases = SqlLeases(migrated, clock=lambda: datetime(2026, 11, 30, 7, tzinfo=zone))
    lease = await leases.acquire(SCOPE, "a1", "edit:1", TTL)
    assert lease is not None
    assert lease.expires_at.tzinfo == UTC
    current = await leases.current(SCOPE, "a1")
    assert current is not None
    assert current.expires_at.tzinfo == UTC
    assert current.expires_at == datetime(2026, 11, 30, 12, tzinfo=UTC) + TTL


async def test_of_many_processes_racing_for_a_free_lease_exactly_one_takes_it(
    migrated: AsyncEngine,
) -> None:
    # Each "process" has an engine of its own on the same database.
    engines = [await another_engine(migrated) for _ in range(4)]
    try:
        everyone = [SqlLeases(engine) for engine in engines for _ in range(3)]
        won = await asyncio.gather(
            *(leases.acquire(SCOPE, "a1", f"edit:{n}", TTL) for n, leases in enumerate(everyone))
        )
    finally:
        for engine in engines:
            await engine.dispose()
    winners = [lease for lease in won if lease is not None]
    assert len(winners) == 1
    assert await SqlLeases(migrated).current(SCOPE, "a1") == winners[0]


async def test_the_live_leases_of_a_scope_are_read_at_once(held: Held) -> None:
    first = await held.leases.acquire(SCOPE, "a1", "edit:1", TTL)
    await held.leases.acquire(SCOPE, "a2", "edit:2", timedelta(seconds=5))
    third = await held.leases.acquire(SCOPE, "a3", "checkout:c1:user:bob", timedelta(hours=8))
    await held.leases.acquire(Scope("t1", "w2"), "a1", "edit:other", TTL)
    await held.leases.acquire(Scope("t2", "w1"), "a9", "edit:other", TTL)
    held.clock.advance(timedelta(seconds=5))  # a2's lease has just ended

    assert await held.leases.live(SCOPE) == {"a1": first, "a3": third}
    assert await held.leases.live(Scope("w", "none")) == {}
