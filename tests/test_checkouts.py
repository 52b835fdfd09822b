"""Check-out records: one behaviour suite over memory, SQLite and PostgreSQL.

A record round-trips whole, whoever the actor is; it can be extended, replaced and removed;
``active`` lists only the scope's open, unexpired ones; and each scope sees only its own.
"""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from artifactr import AgentActor, UserActor
from artifactr.core import Actor, EvaluatorActor, ExternalAgentActor, SystemActor
from artifactr.workspace import Scope

from artifactr.files import Checkout, InMemoryCheckouts
from artifactr.files.checkouts import Checkouts, holder_of
from artifactr.files.sql import SqlCheckouts, migrate
from tests.databases import BACKENDS, sql_engine

SCOPE = Scope(tenant_id="t1", workspace_id="w1")
NOON = datetime(2026, 11, 30, 12, tzinfo=UTC)
ALICE = UserActor(id="alice", name="Alice")


@pytest.fixture(params=BACKENDS)
async def checkouts(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Checkouts]:
    if request.param == "memory":
        yield InMemoryCheckouts()
        return
    async with sql_engine(request.param, tmp_path) as engine:
        await migrate(engine)
        yield SqlCheckouts(engine)


def record(checkout_id: str = "co_1", **changes: object) -> Checkout:
    fields: dict[str, object] = {
        "id": checkout_id,
        "artifact_id": "a1",
        "base_version": 3,
        "base_sha256": "a" * 64,
        "actor": ALICE,
        "expires_at": NOON + timedelta(hours=8),
    }
    return Checkout.model_validate(fields | changes)


ACTORS: list[Actor] = [
    ALICE,
    UserActor(id="bob"),
    AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=ALICE),
    AgentActor(
        thread_id="thr_2",
        on_behalf_of=ExternalAgentActor(client_id="cli", on_behalf_of=ALICE),
    ),
    ExternalAgentActor(client_id="cli", name="Claude"),
    SystemActor(name="importer"),
    EvaluatorActor(name="judge", version="v2"),
]


async def test_a_check_out_round_trips_whole_whoever_the_actor_is(checkouts: Checkouts) -> None:
    added = [record(f"co_{n}", actor=actor) for n, actor in enumerate(ACTORS)]
    for checkout in added:
        await checkouts.add(SCOPE, checkout)
    found = [await checkouts.get(SCOPE, checkout.id) for checkout in added]
    assert found == added
    assert [type(checkout.actor) for checkout in found if checkout] == [
        type(actor) for actor in ACTORS
    ]
    assert [checkout.holder for checkout in found if checkout] == [
        holder_of(f"co_{n}", actor) for n, actor in enumerate(ACTORS)
    ]


async def test_a_missing_check_out_is_none(checkouts: Checkouts) -> None:
    assert await checkouts.get(SCOPE, "co_1") is None


async def test_an_expiry_in_another_zone_is_the_same_instant(checkouts: Checkouts) -> None:
    later = datetime(2026, 11, 30, 22, tzinfo=timezone(timedelta(hours=2)))
    await checkouts.add(SCOPE, record(expires_at=later))
    found = await checkouts.get(SCOPE, "co_1")
    assert found is not None
    assert found.expires_at == NOON + timedelta(hours=8)


async def test_extending_a_check_out_sets_its_expiry(checkouts: Checkouts) -> None:
    await checkouts.add(SCOPE, record())
    await checkouts.extend(SCOPE, "co_1", NOON + timedelta(hours=20))
    assert await checkouts.get(SCOPE, "co_1") == record(expires_at=NOON + timedelta(hours=20))


async def test_extending_or_removing_a_missing_check_out_is_a_no_op(
    checkouts: Checkouts,
) -> None:
    await checkouts.add(SCOPE, record())
    await checkouts.extend(SCOPE, "co_gone", NOON + timedelta(hours=20))
    await checkouts.remove(SCOPE, "co_gone")
    assert await checkouts.get(SCOPE, "co_gone") is None
    assert await checkouts.active(SCOPE, now=NOON) == [record()]


async def test_adding_a_record_with_the_same_id_replaces_it(checkouts: Checkouts) -> None:
    await checkouts.add(SCOPE, record())
    checked_in = record(checked_in=True, expires_at=NOON)
    await checkouts.add(SCOPE, checked_in)
    assert await checkouts.get(SCOPE, "co_1") == checked_in


async def test_a_removed_check_out_is_gone_and_removing_again_is_a_no_op(
    checkouts: Checkouts,
) -> None:
    await checkouts.add(SCOPE, record())
    await checkouts.remove(SCOPE, "co_1")
    assert await checkouts.get(SCOPE, "co_1") is None
    await checkouts.remove(SCOPE, "co_1")


async def test_active_lists_only_open_check_outs_that_expire_after_now(
    checkouts: Checkouts,
) -> None:
    await checkouts.add(SCOPE, record("co_open"))
    await checkouts.add(SCOPE, record("co_lapsed", expires_at=NOON - timedelta(seconds=1)))
    await checkouts.add(SCOPE, record("co_now", expires_at=NOON))
    await checkouts.add(SCOPE, record("co_done", checked_in=True))
    await checkouts.add(SCOPE, record("co_too", artifact_id="a2"))
    active = await checkouts.active(SCOPE, now=NOON)
    assert sorted(checkout.id for checkout in active) == ["co_open", "co_too"]
    assert await checkouts.active(SCOPE, now=NOON + timedelta(hours=9)) == []


@pytest.mark.parametrize(
    "other",
    [
        Scope(tenant_id="t2", workspace_id="w1"),
        Scope(tenant_id="t1", workspace_id="w2"),
    ],
    ids=["tenant", "workspace"],
)
async def test_each_scope_sees_only_its_own_check_outs(checkouts: Checkouts, other: Scope) -> None:
    await checkouts.add(SCOPE, record())
    assert await checkouts.get(other, "co_1") is None
    assert await checkouts.active(other, now=NOON) == []
    await checkouts.remove(other, "co_1")
    await checkouts.add(other, record(base_version=9))
    mine = await checkouts.get(SCOPE, "co_1")
    assert mine is not None
    assert mine.base_version == 3
