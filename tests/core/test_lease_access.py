"""Leases through a workspace: access checks, hiding, and the refusal that names the holder."""

from datetime import UTC, datetime, timedelta, timezone

import pytest
from artifactr import UserActor, Workspaces
from artifactr.core import Actor, Forbidden, InvalidState, NotFound, Visibility
from artifactr.workspace import Access, InMemoryStorage, Workspace

from artifactr.files import (
    DOCX,
    ArtifactBusy,
    ArtifactLease,
    Blob,
    InMemoryLeases,
    Provenance,
    WordDocument,
    artifact_lease,
    lease_artifact,
    release_artifact,
)
from artifactr.files.core.clock import rfc3339
from tests.clock import Clock

HOUR = timedelta(hours=1)


async def workspace(*, refuse: set[str] | None = None, hide: set[str] | None = None) -> Workspace:
    async def authorize(tenant: str, ws: str | None, actor: Actor, access: Access) -> bool:
        return access.action not in (refuse or set())

    async def hidden(tenant: str, ws: str, actor: Actor) -> Visibility:
        return Visibility(artifacts=frozenset(hide or set()))

    storage = InMemoryStorage()
    owner = await Workspaces(storage, types=[WordDocument]).open(
        "t", "w", actor=UserActor(id="admin")
    )
    await owner.create(
        WordDocument(
            name="a.docx",
            content=Blob(sha256="a" * 64, size=1, media_type=DOCX),
            fingerprint="b" * 64,
            provenance=Provenance(source="upload"),
        ),
        artifact_id="doc",
    )
    workspaces = Workspaces(storage, types=[WordDocument], authorize=authorize, hidden=hidden)
    return await workspaces.open("t", "w", actor=UserActor(id="alice"))


async def test_a_lease_is_taken_renewed_read_and_released_through_the_workspace() -> None:
    clock = Clock()
    leases = InMemoryLeases(clock=clock)
    ws = await workspace()
    lease = await lease_artifact(ws, leases, "doc", holder="checkout:co_1:user:alice", ttl=HOUR)
    assert lease == ArtifactLease("doc", "checkout:co_1:user:alice", clock.now + HOUR)
    assert await artifact_lease(ws, leases, "doc") == lease
    clock.now += timedelta(minutes=30)
    renewed = await lease_artifact(ws, leases, "doc", holder=lease.holder, ttl=HOUR)
    assert renewed.expires_at == clock.now + HOUR
    assert not await release_artifact(ws, leases, "doc", holder="edit:other")
    assert await release_artifact(ws, leases, "doc", holder=lease.holder)
    assert await artifact_lease(ws, leases, "doc") is None


async def test_another_holder_is_refused_as_busy_with_the_lease_until_it_expires() -> None:
    clock = Clock()
    leases = InMemoryLeases(clock=clock)
    ws = await workspace()
    held = await lease_artifact(ws, leases, "doc", holder="checkout:co_1:user:alice", ttl=HOUR)
    with pytest.raises(ArtifactBusy) as caught:
        await lease_artifact(ws, leases, "doc", holder="edit:1", ttl=timedelta(seconds=45))
    assert caught.value.lease == held
    assert caught.value.code == "artifact_busy"
    assert isinstance(caught.value, InvalidState)
    until = rfc3339(held.expires_at)
    assert until.endswith("Z")
    assert caught.value.payload() == {
        "type": "artifact_busy",
        "message": f"artifact doc is held by {held.holder} until {until}",
        "artifact_id": "doc",
        "holder": held.holder,
        "until": until,
        "lease": {"holder": held.holder, "expires_at": until},
    }
    clock.now += HOUR
    taken = await lease_artifact(ws, leases, "doc", holder="edit:1", ttl=timedelta(seconds=45))
    assert taken.holder == "edit:1"


def test_a_busy_refusal_without_a_lease_says_to_try_again() -> None:
    busy = ArtifactBusy("doc", None)
    assert busy.lease is None
    assert busy.payload()["lease"] is None
    assert "try again" in busy.message


async def test_a_hidden_artifact_is_answered_as_a_missing_one_by_every_lease_call() -> None:
    leases = InMemoryLeases()
    ws = await workspace(hide={"doc"})
    answers: list[str] = []
    for call in (
        lease_artifact(ws, leases, "doc", holder="edit:1", ttl=HOUR),
        artifact_lease(ws, leases, "doc"),
        release_artifact(ws, leases, "doc", holder="edit:1"),
        lease_artifact(ws, leases, "nothing", holder="edit:1", ttl=HOUR),
    ):
        with pytest.raises(NotFound) as caught:
            await call
        answers.append(str(caught.value.payload()).replace("nothing", "doc"))
    assert len(set(answers)) == 1


async def test_leasing_and_releasing_ask_for_edit_access_but_reading_does_not() -> None:
    leases = InMemoryLeases()
    ws = await workspace(refuse={"artifactr:edit_artifact"})
    with pytest.raises(Forbidden):
        await lease_artifact(ws, leases, "doc", holder="edit:1", ttl=HOUR)
    with pytest.raises(Forbidden):
        await release_artifact(ws, leases, "doc", holder="edit:1")
    assert await artifact_lease(ws, leases, "doc") is None


def test_a_time_is_given_in_rfc_3339_in_utc() -> None:
    assert rfc3339(datetime(2026, 11, 30, 20, tzinfo=UTC)) == "2026-11-30T20:00:00Z"
    paris = timezone(timedelta(hours=1))
    assert rfc3339(datetime(2026, 11, 30, 21, 0, 0, 500, tzinfo=paris)) == (
        "2026-11-30T20:00:00.000500Z"
    )


def test_a_lease_that_just_ended_is_busy_with_no_holder() -> None:
    assert ArtifactBusy("doc", None).details() == {
        "artifact_id": "doc",
        "holder": None,
        "until": None,
        "lease": None,
    }
