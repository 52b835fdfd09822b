"""Check-out records: one behaviour suite over memory, SQLite and PostgreSQL.

A record round-trips whole, whoever the actor is; it can be extended, replaced and removed;
``active`` lists only the scope's open, unexpired ones; and each scope sees only its own. The
conditional changes answer alike everywhere: only an open record is extended or ended, one
check-in at a time holds a claim, and the first outcome settled is the one that stands.
"""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from artifactr import AgentActor, UserActor
from artifactr.core import Actor, EvaluatorActor, ExternalAgentActor, SystemActor
from artifactr.workspace import Scope

from artifactr.files import Checkout, InMemoryCheckouts
from artifactr.files.core.checkouts import Checkouts, Holder, Outcome, holder_of, parse_holder
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


def test_a_holder_reads_back_as_the_check_out_and_participant_it_was_built_from() -> None:
    for n, actor in enumerate(ACTORS):
        assert parse_holder(holder_of(f"co_{n}", actor)) == Holder(f"co_{n}", actor.participant)
    assert parse_holder("checkout:co_1:user:alice") == Holder("co_1", "user:alice")
    # An edit's lease (an agent's, or the app's own) is no check-out's.
    assert parse_holder("edit:run_1") is None
    assert parse_holder("user:alice") is None


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
    checked_in = record(state="checked_in", ended_by=ALICE, ended_at=NOON, expires_at=NOON)
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
    await checkouts.add(SCOPE, record("co_done", state="checked_in"))
    await checkouts.add(SCOPE, record("co_gone", state="discarded"))
    await checkouts.add(SCOPE, record("co_too", artifact_id="a2"))
    active = await checkouts.active(SCOPE, now=NOON)
    assert sorted(checkout.id for checkout in active) == ["co_open", "co_too"]
    assert await checkouts.active(SCOPE, now=NOON + timedelta(hours=9)) == []


async def test_open_on_lists_an_artifact_s_open_check_outs_lapsed_or_not_oldest_first(
    checkouts: Checkouts,
) -> None:
    # Added in the order of their ids, which break a tie in the database's clock.
    await checkouts.add(SCOPE, record("co_1", expires_at=NOON - timedelta(hours=1)))
    await checkouts.add(SCOPE, record("co_2"))
    await checkouts.add(SCOPE, record("co_3", state="checked_in"))
    await checkouts.add(SCOPE, record("co_4", state="discarded"))
    await checkouts.add(SCOPE, record("co_5", artifact_id="a2"))
    found = await checkouts.open_on(SCOPE, "a1")
    assert [checkout.id for checkout in found] == ["co_1", "co_2"]
    assert await checkouts.open_on(Scope(tenant_id="t1", workspace_id="w2"), "a1") == []
    assert await checkouts.open_on(SCOPE, "a3") == []


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


BOB = UserActor(id="bob", name="Bob")
APPLIED = Outcome(status="applied", version=4, fingerprint="f" * 64)
PROPOSED = Outcome(status="proposed", version=3, proposal_id="prp_1", fingerprint="e" * 64)


async def test_only_an_open_check_out_is_extended(checkouts: Checkouts) -> None:
    await checkouts.add(SCOPE, record())
    assert await checkouts.extend(SCOPE, "co_1", NOON + timedelta(hours=9))
    await checkouts.end(SCOPE, "co_1", "discarded", by=BOB, at=NOON)
    assert not await checkouts.extend(SCOPE, "co_1", NOON + timedelta(hours=20))
    assert not await checkouts.extend(SCOPE, "co_gone", NOON)
    ended = await checkouts.get(SCOPE, "co_1")
    assert ended is not None
    assert ended.expires_at == NOON


async def test_a_check_out_ends_once_and_says_by_whom_and_when(checkouts: Checkouts) -> None:
    await checkouts.add(SCOPE, record())
    ended = await checkouts.end(SCOPE, "co_1", "discarded", by=BOB, at=NOON)
    assert ended == record(state="discarded", ended_by=BOB, ended_at=NOON, expires_at=NOON)
    later = NOON + timedelta(hours=1)
    assert await checkouts.end(SCOPE, "co_1", "checked_in", by=ALICE, at=later) == ended
    assert await checkouts.get(SCOPE, "co_1") == ended
    assert await checkouts.end(SCOPE, "co_gone", "discarded", by=BOB, at=NOON) is None
    assert await checkouts.active(SCOPE, now=NOON - timedelta(hours=1)) == []


async def test_one_check_in_at_a_time_holds_the_claim_until_it_lapses(
    checkouts: Checkouts,
) -> None:
    await checkouts.add(SCOPE, record())
    until = NOON + timedelta(seconds=45)
    first = await checkouts.claim(SCOPE, "co_1", "ci_1", until=until, now=NOON)
    assert first is not None
    assert (first.claim, first.claimed_until) == ("ci_1", until)
    second = await checkouts.claim(SCOPE, "co_1", "ci_2", until=until, now=NOON)
    assert second == first  # the first's claim is live: refused, and told whose it is
    renewed = await checkouts.claim(SCOPE, "co_1", "ci_1", until=until + timedelta(1), now=NOON)
    assert renewed is not None
    assert renewed.claimed_until == until + timedelta(1)
    await checkouts.unclaim(SCOPE, "co_1", "ci_2")  # not its claim: nothing changes
    assert await checkouts.get(SCOPE, "co_1") == renewed
    taken = await checkouts.claim(SCOPE, "co_1", "ci_2", until=until, now=until + timedelta(1))
    assert taken is not None
    assert taken.claim == "ci_2"  # the first's lapsed: a retry takes over
    await checkouts.unclaim(SCOPE, "co_1", "ci_2")
    assert await checkouts.get(SCOPE, "co_1") == record()
    assert await checkouts.claim(SCOPE, "co_gone", "ci_1", until=until, now=NOON) is None
    await checkouts.unclaim(SCOPE, "co_gone", "ci_1")


async def test_the_first_outcome_settled_stands_and_ends_the_check_out(
    checkouts: Checkouts,
) -> None:
    await checkouts.add(SCOPE, record())
    await checkouts.claim(SCOPE, "co_1", "ci_1", until=NOON, now=NOON)
    settled = await checkouts.settle(SCOPE, "co_1", APPLIED, by=ALICE, at=NOON)
    expected = record(
        state="checked_in", ended_by=ALICE, ended_at=NOON, expires_at=NOON, outcome=APPLIED
    )
    assert settled == expected
    later = NOON + timedelta(hours=1)
    assert await checkouts.settle(SCOPE, "co_1", PROPOSED, by=BOB, at=later) == expected
    # Settled or checked in, it can't be claimed again: a retry reads the outcome.
    assert await checkouts.claim(SCOPE, "co_1", "ci_2", until=later, now=later) == expected
    assert await checkouts.settle(SCOPE, "co_gone", APPLIED, by=ALICE, at=NOON) is None


async def test_a_discarded_check_out_keeps_its_ender_when_a_late_check_in_settles(
    checkouts: Checkouts,
) -> None:
    await checkouts.add(SCOPE, record())
    await checkouts.end(SCOPE, "co_1", "discarded", by=BOB, at=NOON)
    claimed = await checkouts.claim(SCOPE, "co_1", "ci_1", until=NOON, now=NOON)
    assert claimed is not None
    assert claimed.claim == "ci_1"
    later = NOON + timedelta(hours=1)
    settled = await checkouts.settle(SCOPE, "co_1", PROPOSED, by=ALICE, at=later)
    assert settled == record(
        state="discarded", ended_by=BOB, ended_at=NOON, expires_at=NOON, outcome=PROPOSED
    )


async def test_a_check_out_checked_in_before_outcomes_were_kept_is_never_claimed(
    checkouts: Checkouts,
) -> None:
    old = record(state="checked_in", ended_by=ALICE, ended_at=NOON, expires_at=NOON)
    await checkouts.add(SCOPE, old)
    assert await checkouts.claim(SCOPE, "co_1", "ci_1", until=NOON, now=NOON) == old


async def test_a_whole_record_round_trips_through_add(checkouts: Checkouts) -> None:
    whole = record(
        state="discarded",
        ended_by=BOB,
        ended_at=NOON,
        outcome=PROPOSED,
        claim="ci_1",
        claimed_until=NOON,
        lock='{"S":"wopi lock"}',
    )
    await checkouts.add(SCOPE, whole)
    assert await checkouts.get(SCOPE, "co_1") == whole


async def test_an_editor_s_lock_changes_only_on_an_open_record_holding_the_old_one(
    checkouts: Checkouts,
) -> None:
    await checkouts.add(SCOPE, record(lock="L1"))
    assert not await checkouts.relock(SCOPE, "co_1", "L0", "L2")
    assert await checkouts.relock(SCOPE, "co_1", "L1", "L2")
    changed = await checkouts.get(SCOPE, "co_1")
    assert changed is not None
    assert changed.lock == "L2"
    assert not await checkouts.relock(SCOPE, "co_missing", "L2", "L3")
    await checkouts.end(SCOPE, "co_1", "discarded", by=ALICE, at=NOON)
    assert not await checkouts.relock(SCOPE, "co_1", "L2", "L3")


async def test_an_editor_s_save_keeps_the_record_open_and_may_move_its_base(
    checkouts: Checkouts,
) -> None:
    await checkouts.add(SCOPE, record(lock="L1"))
    applied = Outcome(status="applied", version=4, fingerprint="b" * 64)
    assert await checkouts.saved(SCOPE, "co_1", applied, base=(4, "c" * 64))
    moved = await checkouts.get(SCOPE, "co_1")
    assert moved is not None
    assert (moved.state, moved.base_version, moved.base_sha256) == ("open", 4, "c" * 64)
    assert moved.outcome == applied
    proposed = Outcome(status="proposed", version=5, proposal_id="prop_1", fingerprint="d" * 64)
    assert await checkouts.saved(SCOPE, "co_1", proposed, base=None)
    kept = await checkouts.get(SCOPE, "co_1")
    assert kept is not None
    assert (kept.base_version, kept.outcome) == (4, proposed)
    await checkouts.end(SCOPE, "co_1", "checked_in", by=ALICE, at=NOON)
    assert not await checkouts.saved(SCOPE, "co_1", applied, base=(6, "e" * 64))
    assert not await checkouts.saved(SCOPE, "co_missing", applied, base=None)
