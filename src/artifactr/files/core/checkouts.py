"""Check-outs: a person's exclusive, expiring claim on a native file (RFC-0003, ADR-0009).

A check-out is a record: the artifact, the base version and digest, the actor and the expiry.
Its lease's holder is ``checkout:<id>:<participant>``, built by :func:`holder_of` and read by
:func:`parse_holder`. A record outlives its end: ``open`` until ``checked_in`` or ``discarded``,
it then keeps who ended it and what its check-in did (:class:`Outcome`), so a retried check-in
answers what the first did. Every change is a conditional update of the one record:
:meth:`Checkouts.claim` lets one check-in at a time work, :meth:`Checkouts.settle` keeps the first
outcome, and :meth:`Checkouts.extend` and :meth:`Checkouts.end` change only an open record.
An editor's session (WOPI, WebDAV) is a check-out too, carrying the editor's ``lock``:
:meth:`Checkouts.relock` changes it and :meth:`Checkouts.saved` records a save that keeps the
check-out open, moving its base to the revision the save committed (ADR-0017).
:meth:`Checkouts.together` runs a few calls as one transaction, with the leases' calls too
where they are kept in the same database (ADR-0034).
"""

import contextlib
from collections.abc import AsyncGenerator, Sequence
from datetime import datetime
from typing import Literal, NamedTuple, Protocol

from artifactr.core import Actor
from artifactr.workspace import Scope
from pydantic import BaseModel, ConfigDict

from artifactr.files.core.manifests import Digest

State = Literal["open", "checked_in", "discarded"]
"""Where a check-out is: open, or ended by a check-in or a discard."""

Ended = Literal["checked_in", "discarded"]
"""How a check-out ended."""


class Outcome(BaseModel):
    """What a check-out's check-in did, kept so a retry answers the same."""

    model_config = ConfigDict(frozen=True)

    status: Literal["applied", "unchanged", "proposed"]
    """Committed, identical to the head, or kept as a proposal."""
    version: int
    """The new version (applied), or the head it matched or was proposed against."""
    proposal_id: str | None = None
    """The proposal it became (proposed)."""
    fingerprint: Digest
    """The fingerprint of the file checked in: a retry with another answers ``InvalidState``."""


class Checkout(BaseModel):
    """A person's check-out of a native file."""

    model_config = ConfigDict(frozen=True)

    id: str
    """The check-out's id (``co_<hex>``)."""
    artifact_id: str
    """The artifact checked out."""
    base_version: int
    """The version downloaded, which the check-in is based on."""
    base_sha256: Digest
    """That version's content digest, which the check-in tests."""
    actor: Actor
    """Who checked it out."""
    expires_at: datetime
    """When its lease lapses unless extended; when it ended, once it did."""
    state: State = "open"
    """Open, or how it ended: kept so a retried or late check-in is answered, not refused."""
    ended_by: Actor | None = None
    """Who ended it: the person who checked in, or who discarded or broke it."""
    ended_at: datetime | None = None
    """When it ended."""
    outcome: Outcome | None = None
    """What its check-in did, once one did: a check-in after a discard has one too."""
    claim: str | None = None
    """The check-in at work on it now, if any, until ``claimed_until``."""
    claimed_until: datetime | None = None
    """When that check-in's claim lapses, so a retry may take over from one that died."""
    lock: str | None = None
    """The editor's lock string, stored as given, if an editor's session holds it (ADR-0017)."""

    @property
    def checked_in(self) -> bool:
        """Whether it was checked in."""
        return self.state == "checked_in"

    @property
    def holder(self) -> str:
        """The lease holder, ``checkout:<id>:<participant>`` (``checkout:co_1:user:alice``)."""
        return holder_of(self.id, self.actor)


def holder_of(checkout_id: str, actor: Actor) -> str:
    """Return a check-out's lease holder."""
    return f"checkout:{checkout_id}:{actor.participant}"


class Holder(NamedTuple):
    """Who a check-out's lease holder names: the check-out, and its participant."""

    checkout_id: str
    participant: str


def parse_holder(holder: str) -> Holder | None:
    """Return the check-out a lease holder names, or None if another holds it (an edit)."""
    kind, _, rest = holder.partition(":")
    if kind != "checkout":
        return None
    checkout_id, _, participant = rest.partition(":")
    return Holder(checkout_id, participant)


class Checkouts(Protocol):
    """Check-out records, by scope and id.

    Every method that changes a record returns it as it stands afterwards (None if there is
    none), so the caller learns whether its change won or what the winner did.
    """

    async def add(self, scope: Scope, checkout: Checkout) -> None:
        """Record a check-out, replacing a record with the same id."""
        ...

    async def get(self, scope: Scope, checkout_id: str) -> Checkout | None:
        """Return a check-out, or None if there is none."""
        ...

    async def extend(self, scope: Scope, checkout_id: str, expires_at: datetime) -> bool:
        """Set an open check-out's expiry; return whether it was open (a missing one is not)."""
        ...

    async def end(
        self, scope: Scope, checkout_id: str, state: Ended, *, by: Actor, at: datetime
    ) -> Checkout | None:
        """End an open check-out as ``state``, by ``by`` at ``at``; an ended one stays as it is."""
        ...

    async def claim(
        self, scope: Scope, checkout_id: str, token: str, *, until: datetime, now: datetime
    ) -> Checkout | None:
        """Take or renew the claim for a check-in, ``token``, until ``until``.

        It is taken only while the record has no outcome and was not checked in, and only if
        no other claim is live at ``now``: the record returned holds ``token`` in ``claim`` if
        it was.
        """
        ...

    async def unclaim(self, scope: Scope, checkout_id: str, token: str) -> None:
        """Drop the claim ``token`` holds, if it still does: its check-in failed."""
        ...

    async def settle(
        self, scope: Scope, checkout_id: str, outcome: Outcome, *, by: Actor, at: datetime
    ) -> Checkout | None:
        """Record a check-in's outcome unless one is recorded; end it as checked in if open.

        The claim is dropped. The record returned carries the outcome that stands: this one,
        or the one recorded first.
        """
        ...

    async def relock(self, scope: Scope, checkout_id: str, old: str, new: str) -> bool:
        """Change an open check-out's lock from ``old`` to ``new``; return whether it did."""
        ...

    async def saved(
        self, scope: Scope, checkout_id: str, outcome: Outcome, *, base: tuple[int, Digest] | None
    ) -> bool:
        """Record an editor's save on an open check-out, which stays open; return whether it was.

        ``outcome`` is what the save did; ``base``, if given, is the version and digest the
        save committed, the session's base from now on.
        """
        ...

    async def remove(self, scope: Scope, checkout_id: str) -> None:
        """Forget a check-out; a missing one is a no-op."""
        ...

    async def active(self, scope: Scope, *, now: datetime) -> Sequence[Checkout]:
        """Return the scope's open check-outs that expire after ``now``."""
        ...

    async def open_on(self, scope: Scope, artifact_id: str) -> Sequence[Checkout]:
        """Return an artifact's open check-outs, their leases lapsed or not, oldest first."""
        ...

    async def ended_since(
        self, scope: Scope, artifact_id: str, participant: str, since: datetime
    ) -> Sequence[Checkout]:
        """Return a participant's check-outs of an artifact discarded after ``since``.

        Only those with no check-in yet, newest first: the portal offers each one's check-in
        still (ADR-0023).
        """
        ...

    async def with_lock(self, scope: Scope, artifact_id: str, lock: str) -> Checkout | None:
        """Return the newest check-out of an artifact under the editor's lock ``lock``, or None.

        Open or ended: a save under a session that ended is kept as a proposal (ADR-0023).
        """
        ...

    def together(self, scope: Scope) -> contextlib.AbstractAsyncContextManager[None]:
        """Run the block's calls of these records, and of leases kept beside them, as one.

        On SQL, one transaction on one connection, committed once, which the leases' calls on
        the same engine join (ADR-0034); in memory, as they are. The block calls nothing else
        that opens a connection on the database.
        """
        ...


class InMemoryCheckouts:
    """Check-out records in a dict.

    Each method changes a record without awaiting anything in between, so on one event loop
    it is as atomic as the SQL adapter's conditional updates.
    """

    def __init__(self) -> None:
        self._records: dict[tuple[str, str, str], Checkout] = {}

    async def add(self, scope: Scope, checkout: Checkout) -> None:
        """Record a check-out, replacing one with the same id."""
        self._records[(scope.tenant_id, scope.workspace_id, checkout.id)] = checkout

    async def get(self, scope: Scope, checkout_id: str) -> Checkout | None:
        """Return a check-out, or None."""
        return self._records.get((scope.tenant_id, scope.workspace_id, checkout_id))

    async def extend(self, scope: Scope, checkout_id: str, expires_at: datetime) -> bool:
        """Set an open check-out's expiry; see :meth:`Checkouts.extend`."""
        record = await self.get(scope, checkout_id)
        if record is None or record.state != "open":
            return False
        self._put(scope, record.model_copy(update={"expires_at": expires_at}))
        return True

    async def end(
        self, scope: Scope, checkout_id: str, state: Ended, *, by: Actor, at: datetime
    ) -> Checkout | None:
        """End an open check-out; see :meth:`Checkouts.end`."""
        record = await self.get(scope, checkout_id)
        if record is not None and record.state == "open":
            record = self._put(scope, _ended(record, state, by, at))
        return record

    async def claim(
        self, scope: Scope, checkout_id: str, token: str, *, until: datetime, now: datetime
    ) -> Checkout | None:
        """Take or renew a check-in's claim; see :meth:`Checkouts.claim`."""
        record = await self.get(scope, checkout_id)
        if record is not None and _claimable(record, token, now):
            record = self._put(
                scope, record.model_copy(update={"claim": token, "claimed_until": until})
            )
        return record

    async def unclaim(self, scope: Scope, checkout_id: str, token: str) -> None:
        """Drop a claim; see :meth:`Checkouts.unclaim`."""
        record = await self.get(scope, checkout_id)
        if record is not None and record.claim == token:
            self._put(scope, record.model_copy(update={"claim": None, "claimed_until": None}))

    async def settle(
        self, scope: Scope, checkout_id: str, outcome: Outcome, *, by: Actor, at: datetime
    ) -> Checkout | None:
        """Record a check-in's outcome; see :meth:`Checkouts.settle`."""
        record = await self.get(scope, checkout_id)
        if record is None:
            return None
        if record.outcome is None:
            record = record.model_copy(
                update={"outcome": outcome, "claim": None, "claimed_until": None}
            )
        if record.state == "open":
            record = _ended(record, "checked_in", by, at)
        return self._put(scope, record)

    async def relock(self, scope: Scope, checkout_id: str, old: str, new: str) -> bool:
        """Change an open check-out's lock; see :meth:`Checkouts.relock`."""
        record = await self.get(scope, checkout_id)
        if record is None or record.state != "open" or record.lock != old:
            return False
        self._put(scope, record.model_copy(update={"lock": new}))
        return True

    async def saved(
        self, scope: Scope, checkout_id: str, outcome: Outcome, *, base: tuple[int, Digest] | None
    ) -> bool:
        """Record an editor's save; see :meth:`Checkouts.saved`."""
        record = await self.get(scope, checkout_id)
        if record is None or record.state != "open":
            return False
        update: dict[str, object] = {"outcome": outcome}
        if base is not None:
            update |= {"base_version": base[0], "base_sha256": base[1]}
        self._put(scope, record.model_copy(update=update))
        return True

    async def remove(self, scope: Scope, checkout_id: str) -> None:
        """Forget a check-out."""
        self._records.pop((scope.tenant_id, scope.workspace_id, checkout_id), None)

    async def active(self, scope: Scope, *, now: datetime) -> Sequence[Checkout]:
        """Return the scope's open, unexpired check-outs."""
        return [
            record
            for (tenant, workspace, _), record in self._records.items()
            if (tenant, workspace) == (scope.tenant_id, scope.workspace_id)
            and record.expires_at > now
            and record.state == "open"
        ]

    async def open_on(self, scope: Scope, artifact_id: str) -> Sequence[Checkout]:
        """Return an artifact's open check-outs, oldest first (as they were added)."""
        return [
            record
            for (tenant, workspace, _), record in self._records.items()
            if (tenant, workspace) == (scope.tenant_id, scope.workspace_id)
            and record.artifact_id == artifact_id
            and record.state == "open"
        ]

    async def ended_since(
        self, scope: Scope, artifact_id: str, participant: str, since: datetime
    ) -> Sequence[Checkout]:
        """Return a participant's discarded check-outs; see :meth:`Checkouts.ended_since`."""
        return [
            record
            for (tenant, workspace, _), record in reversed(self._records.items())
            if (tenant, workspace) == (scope.tenant_id, scope.workspace_id)
            and record.artifact_id == artifact_id
            and record.actor.participant == participant
            and record.state == "discarded"
            and record.outcome is None
            and record.ended_at is not None
            and record.ended_at > since
        ]

    async def with_lock(self, scope: Scope, artifact_id: str, lock: str) -> Checkout | None:
        """Return the newest check-out with the lock; see :meth:`Checkouts.with_lock`."""
        found = [
            record
            for (tenant, workspace, _), record in self._records.items()
            if (tenant, workspace) == (scope.tenant_id, scope.workspace_id)
            and record.artifact_id == artifact_id
            and record.lock == lock
        ]
        return found[-1] if found else None

    @contextlib.asynccontextmanager
    async def together(self, scope: Scope) -> AsyncGenerator[None]:
        """Run the block as it is: each call here is atomic already."""
        del scope
        yield

    def _put(self, scope: Scope, record: Checkout) -> Checkout:
        self._records[(scope.tenant_id, scope.workspace_id, record.id)] = record
        return record


def _ended(record: Checkout, state: Ended, by: Actor, at: datetime) -> Checkout:
    return record.model_copy(
        update={"state": state, "ended_by": by, "ended_at": at, "expires_at": at}
    )


def _claimable(record: Checkout, token: str, now: datetime) -> bool:
    if record.outcome is not None or record.state == "checked_in":
        return False
    return (
        record.claim in (None, token) or record.claimed_until is None or record.claimed_until <= now
    )
