"""A person's check-out: check out, extend, discard (RFC-0003, ADR-0006, ADR-0009).

RFC-0003's "Check-out: a lease on the artifact" and "People: check-out and check-in". A person
checks the head out: a record of its base version and digest, and a lease of hours whose holder
(``checkout:<id>:<actor id>``) names the record, so two tabs are two check-outs. They extend it
by taking the lease again, edit the file in the app, and check it in from a stream
(:mod:`.checkin` holds how). They may discard it instead; someone else may break it only if
they may archive the file. A record outlives its end, saying who ended it and when, so a late
check-in of a discarded check-out is kept as a proposal and a retry answers what the first did.
"""

from typing import Final

from artifactr.core import Forbidden, InvalidState, NotFound, new_id
from artifactr.workspace import Access, Workspace

from artifactr.files.core import log
from artifactr.files.core.checkouts import Checkout, holder_of
from artifactr.files.core.clock import rfc3339
from artifactr.files.core.errors import CheckoutOutdated, NotEnabled
from artifactr.files.core.leases import (
    EDIT_ACTION,
    ArtifactLease,
    artifact_lease,
    hold_artifact,
    scope_of,
)
from artifactr.files.core.manifests import NativeFile
from artifactr.files.core.visibility import visible
from artifactr.files.native.base import MAX_ID, ServiceBase

ARCHIVE_ACTION: Final = "artifactr:archive_artifact"
"""The action asked before breaking someone else's check-out."""


class CheckOut(ServiceBase):
    """The part of the service that checks a file out to a person: out, extend, discard."""

    async def lease(self, ws: Workspace, artifact_id: str) -> ArtifactLease | None:
        """Return who holds the file and until when, or None; a read.

        Raises:
            NotFound: If the artifact is missing or hidden.
        """
        return await artifact_lease(ws, self.leases, artifact_id)

    async def checkout(self, ws: Workspace, checkout_id: str) -> Checkout:
        """Return one of the actor's check-outs.

        Raises:
            NotFound: If there is none, or the artifact is hidden.
            Forbidden: If it is someone else's.
        """
        record = await self._record(ws, checkout_id)
        if record.actor.participant != ws.actor.participant:
            raise Forbidden(f"check-out {checkout_id} is someone else's")
        return record

    async def open_checkouts(self, ws: Workspace, artifact_id: str) -> list[Checkout]:
        """Return the actor's open check-outs of a file, newest first; a read.

        Those whose lease lapsed are here too: each may still be checked in (applied if the
        file has not moved since, else kept as a proposal, ADR-0004) or discarded.

        Raises:
            NotFound: If the artifact is missing or hidden.
        """
        await visible(ws, NativeFile, artifact_id)
        found = await self.checkouts.open_on(scope_of(ws), artifact_id)
        return [
            record for record in reversed(found) if record.actor.participant == ws.actor.participant
        ]

    async def ended_by_others(self, ws: Workspace, artifact_id: str) -> list[Checkout]:
        """Return the actor's check-outs of a file someone else ended lately, not checked in.

        Lately is within ``checkout_ttl``: each may still be checked in, kept as a proposal on
        the version it was based on (ADR-0009), so the page tells the person and offers it.

        Raises:
            NotFound: If the artifact is missing or hidden.
        """
        await visible(ws, NativeFile, artifact_id)
        since = self._clock() - self._checkout_ttl
        me = ws.actor.participant
        found = await self.checkouts.ended_since(scope_of(ws), artifact_id, me, since)
        return [r for r in found if r.ended_by is not None and r.ended_by.participant != me]

    async def _record(self, ws: Workspace, checkout_id: str) -> Checkout:
        plausible = 0 < len(checkout_id) <= MAX_ID and checkout_id.isprintable()
        record = await self.checkouts.get(scope_of(ws), checkout_id) if plausible else None
        try:
            if record is None:
                raise NotFound("checkout", checkout_id)
            await visible(ws, NativeFile, record.artifact_id)
        except NotFound:
            # A check-out of a file hidden from the actor is answered as a missing check-out,
            # so its id tells nothing about the file.
            raise NotFound("checkout", checkout_id) from None
        return record

    @log.logged("checked_out")
    async def check_out(self, ws: Workspace, artifact_id: str) -> Checkout:
        """Check the head out to the handle's actor: an exclusive lease of ``checkout_ttl``.

        Two tabs are two check-outs: the second is refused as busy.

        Raises:
            NotFound: If the artifact is missing or hidden.
            NotEnabled: If the app is off here.
            Forbidden: If the actor may not edit it.
            ArtifactBusy: If someone holds it.
        """
        await visible(ws, NativeFile, artifact_id)
        await self._require_enabled(ws)
        checkout_id = new_id("co")
        holder = holder_of(checkout_id, ws.actor)
        lease = await hold_artifact(
            ws, self.leases, artifact_id, holder=holder, ttl=self._checkout_ttl
        )
        scope = scope_of(ws)
        try:
            # The head is read once the lease is held: whoever committed before it was granted
            # had let go of the file, so this is the head nobody else may move while it's held.
            # Every lease taken for a person's work reads its base so (ADR-0015): an editor's
            # lock (WOPI, WebDAV) too.
            version, manifest = await self.manifest(ws, artifact_id)
            record = Checkout(
                id=checkout_id,
                artifact_id=artifact_id,
                base_version=version,
                base_sha256=manifest.content.sha256,
                actor=ws.actor,
                expires_at=lease.expires_at,
            )
            await self.checkouts.add(scope, record)
        except BaseException:
            await self.leases.release(scope, artifact_id, holder)
            raise
        return record

    @log.logged("extended")
    async def extend(self, ws: Workspace, checkout_id: str) -> Checkout:
        """Extend a check-out by ``checkout_ttl`` from now, by acquiring its lease again.

        The lease is taken first, then the head read and the record extended only if it is
        still open: an extend that lost to a check-in or a discard lets go of the lease at
        once, so an ended check-out never keeps the file (ADR-0009); one whose lease lapsed
        while someone changed the file lets go too, since its check-in can only be a proposal
        (ADR-0015).

        Raises:
            NotFound: If there is no such check-out, or its artifact is hidden.
            Forbidden: If it is someone else's, or the actor may no longer edit the file.
            NotEnabled: If the app is off here.
            InvalidState: If it was checked in or discarded.
            CheckoutOutdated: If it lapsed and someone changed the file since.
            ArtifactBusy: If it lapsed and someone else holds the file now.
        """
        record = await self.checkout(ws, checkout_id)
        if record.state != "open":
            raise _ended(checkout_id, record)
        await self._require_enabled(ws)
        scope = scope_of(ws)
        lease = await hold_artifact(
            ws, self.leases, record.artifact_id, holder=record.holder, ttl=self._checkout_ttl
        )
        version, _ = await self.manifest(ws, record.artifact_id)
        if version == record.base_version and await self.checkouts.extend(
            scope, checkout_id, lease.expires_at
        ):
            return record.model_copy(update={"expires_at": lease.expires_at})
        await self.leases.release(scope, record.artifact_id, record.holder)
        raise _ended(checkout_id, await self.checkouts.get(scope, checkout_id), version)

    @log.logged("discarded")
    async def discard(self, ws: Workspace, checkout_id: str) -> None:
        """End a check-out without checking anything in; its lease is released.

        The person who checked out may discard it, even while the app is off, so they can let
        go of a file. Someone else may break it only if they may archive the file
        (``artifactr:archive_artifact``, an owner's or admin's right), so a person who left for
        the day doesn't hold a file for eight hours (ADR-0006). The record is kept, saying who
        ended it and when: a later check-in of it is kept as a proposal (ADR-0009). Discarding
        an ended check-out changes nothing, so a retry is answered alike.

        Raises:
            NotFound: If there is no such check-out, or its artifact is hidden.
            Forbidden: If it is someone else's and the actor may not archive the file, or the
                actor may no longer edit it.
        """
        record = await self._record(ws, checkout_id)
        try:
            if record.actor.participant != ws.actor.participant:
                await ws.check(Access(action=ARCHIVE_ACTION, artifact_id=record.artifact_id))
            await ws.check(Access(action=EDIT_ACTION, artifact_id=record.artifact_id))
        except NotEnabled:
            # The gate refuses these actions while the app is off, but only once the
            # application's own authorize allowed them: letting go stays allowed (ADR-0006).
            pass
        scope = scope_of(ws)
        # The record ends first, then the lease goes: an extend in between sees it ended.
        await self.checkouts.end(scope, checkout_id, "discarded", by=ws.actor, at=self._clock())
        await self.leases.release(scope, record.artifact_id, record.holder)
        ended = {"checkout_id": checkout_id, "artifact_id": record.artifact_id}
        log.record("discarded", ws, {**ended, "holder": record.holder})


def _ended(
    checkout_id: str, record: Checkout | None, version: int | None = None
) -> NotFound | InvalidState:
    """Return the refusal for extending a check-out that ended, is gone, or is out of date."""
    if record is None:
        return NotFound("checkout", checkout_id)
    if record.state == "open" and version is not None:
        return CheckoutOutdated(checkout_id, record.base_version, version)
    how = "checked in" if record.state == "checked_in" else "discarded"
    by = "" if record.ended_by is None else f" by {record.ended_by.participant}"
    at = "" if record.ended_at is None else f" at {rfc3339(record.ended_at)}"
    return InvalidState(f"check-out {checkout_id} was {how}{by}{at}")
