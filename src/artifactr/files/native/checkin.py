"""Check-in: a person's file back in, once, against its check-out's base (RFC-0003, ADR-0009).

RFC-0003's "People: check-out and check-in" ends here, and "Check-out: a lease on the artifact"
says what may happen on the way. A check-in walks down once, in order:

1. It claims its check-out, so one check-in at a time works on it. A retry that finds another's
   live claim waits for that one's outcome, and one that finds an outcome answers it: a
   check-out has one check-in.
2. It decides against the head: a file equal to it (by fingerprint) is ``unchanged``, and
   nothing is written.
3. It writes the file: the app inspects it, and its bytes, text and review are put.
4. It renews its claim, then writes the revision: committed as its actor if the check-out is
   still open, its base is the head and its lease is held (an agent's commit is a proposal, as
   the type's write policy says); otherwise (stale, discarded, or beaten to the commit) kept as
   a proposal against whatever head it finds, never a silent overwrite.
5. It settles the outcome on the record, then lets go of the lease.

A check-in whose claim lapsed while the app ran (step 3) writes no revision: the retry that took
over does, and its outcome is the answer.
"""

import asyncio
from collections.abc import AsyncIterable
from datetime import datetime
from typing import Final, Literal

from artifactr.core import (
    Actor,
    Applied,
    EditArtifact,
    InvalidState,
    NotFound,
    PatchFailed,
    ProposeChange,
    VersionConflict,
    new_id,
)
from artifactr.workspace import Scope, Workspace
from pydantic import BaseModel, ConfigDict

from artifactr.files.core import log
from artifactr.files.core.checkouts import Checkout, Outcome
from artifactr.files.core.clock import rfc3339
from artifactr.files.core.leases import scope_of
from artifactr.files.core.manifests import NativeFile, Provenance, clean_text
from artifactr.files.core.revisions import revision_patch
from artifactr.files.native.checkout import CheckOut
from artifactr.files.native.spool import Spooled, spool

CLAIM_POLL: Final = 0.02
"""How long a check-in first waits, in seconds, for another check-in of its check-out."""

CLAIM_POLL_MAX: Final = 0.2
"""The longest it waits between looks: each wait doubles up to this."""


class CheckedIn(BaseModel):
    """What a check-in did: ``applied`` (a new version), ``unchanged`` or ``proposed``."""

    model_config = ConfigDict(frozen=True)

    status: Literal["applied", "unchanged", "proposed"]
    """Committed, identical to the head, or kept as a proposal because it was stale."""
    artifact_id: str
    """The artifact."""
    version: int
    """The new version (applied), or the head it matched or was proposed against."""
    proposal_id: str | None = None
    """The proposal a stale check-in became."""
    ended_by: Actor | None = None
    """Who discarded the check-out before it was checked in: the check-in was kept as a
    proposal (or was unchanged). None if the check-out was open."""
    ended_at: datetime | None = None
    """When the check-out was discarded; None if it was open."""


class CheckIn(CheckOut):
    """The part of the service that checks a person's file in against its check-out."""

    @log.logged("checked_in")
    async def check_in(
        self,
        ws: Workspace,
        checkout_id: str,
        data: AsyncIterable[bytes],
        *,
        summary: str | None = None,
    ) -> CheckedIn:
        """Check a file in from a stream, against the base its check-out recorded.

        Equal to the head (by fingerprint): succeeds and commits nothing. Stale (someone
        committed since the check-out, or another holds the file now): kept as a proposal
        against the head, with a test on the head's digest, whatever head it finds when it
        proposes. Otherwise committed as the person, with source ``check_in``. Either way the
        check-out ends and its lease is released.

        A check-out has one check-in (ADR-0009): a retry with the same file, at once or later,
        answers exactly what the first did (the same version, ``unchanged``, or the same
        proposal), and one racing the first waits for its outcome. A check-in of a check-out
        that was discarded, by its owner or broken by someone else, is kept as a proposal
        against the head, and its answer says who ended the check-out and when.

        Raises:
            NotFound: If there is no such check-out, or its artifact is hidden.
            Forbidden: If it is someone else's, or the actor may no longer edit the file.
            NotEnabled: If the app is off here.
            InvalidState: If it was checked in already with another file.
            FileTooLarge: If the stream is over the size limit.
            UnsafeFile: If the file is not a package or is hostile.
            ValidationFailed: If the file is of another kind than the file checked out (a
                workbook checked in over a Word document).
            AppFailure: If the app can't read it.
            ServiceBusy: If too many files are being read at once (ADR-0015).
        """
        summary = clean_text(summary or "") or None
        record = await self.checkout(ws, checkout_id)
        await self._require_enabled(ws)
        self.jobs.admit()  # a full queue refuses before the body is read
        incoming = await spool(data, limit=self._max_size)
        try:
            printed, media = await self._screened(incoming)
            _, head = await self.manifest(ws, record.artifact_id)
            self._kind_of(media, type(head))
            return await self._check_in(ws, record, incoming, printed, summary)
        finally:
            incoming.close()

    async def _check_in(
        self, ws: Workspace, record: Checkout, source: Spooled, printed: str, summary: str | None
    ) -> CheckedIn:
        """Claim the check-out, decide and write the check-in, and settle it; or answer."""
        scope = scope_of(ws)
        token = new_id("ci")
        while True:
            claimed = await self._claim(scope, record.id, token)
            if claimed.claim != token:
                return _answer(claimed, printed)
            try:
                outcome = await self._outcome(ws, claimed, source, printed, summary, token)
            except BaseException:
                await self.checkouts.unclaim(scope, record.id, token)
                raise
            if outcome is None:
                continue  # a retry took the claim over: its outcome is this one's answer
            settled = await self.checkouts.settle(
                scope, record.id, outcome, by=ws.actor, at=self._clock()
            )
            # The record ended first, then the lease goes: an extend in between sees it ended.
            await self.leases.release(scope, record.artifact_id, record.holder)
            # Were the record removed meanwhile, the answer is still what this check-in did.
            return _answer(settled or claimed.model_copy(update={"outcome": outcome}), printed)

    async def _claim(self, scope: Scope, checkout_id: str, token: str) -> Checkout:
        """Return the record once this check-in holds its claim, or it has an outcome."""
        delay = CLAIM_POLL
        while True:
            record = await self._claim_once(scope, checkout_id, token)
            if record is None:
                raise NotFound("checkout", checkout_id)
            if record.claim == token or record.outcome is not None or record.checked_in:
                return record
            # Another check-in of it is at work: its outcome will be this one's answer.
            await asyncio.sleep(delay)
            delay = min(delay * 2, CLAIM_POLL_MAX)

    async def _claim_once(self, scope: Scope, checkout_id: str, token: str) -> Checkout | None:
        now = self._clock()
        until = now + self._edit_ttl
        return await self.checkouts.claim(scope, checkout_id, token, until=until, now=now)

    async def _outcome(
        self,
        ws: Workspace,
        record: Checkout,
        source: Spooled,
        printed: str,
        summary: str | None,
        token: str,
    ) -> Outcome | None:
        """Decide what the check-in does to the head, then write it; None if it was overtaken."""
        version, head = await self.manifest(ws, record.artifact_id)
        if printed == head.fingerprint:
            return Outcome(status="unchanged", version=version, fingerprint=printed)
        after = await self._written(ws, record, head, source, printed)
        note = summary or f"checked in {head.name}"
        # The app may have taken long: renew the claim, or leave the commit to the retry that
        # took over from a check-in it thought had died.
        scope = scope_of(ws)
        renewed = await self._claim_once(scope, record.id, token)
        if renewed is None or renewed.claim != token:
            return None
        if version == renewed.base_version and await self._held(scope, renewed):
            committed = await self._commit(ws, renewed, after, note, printed)
            if committed is not None:
                return committed
        return await self._propose(ws, renewed, after, note, printed)

    async def _written(
        self, ws: Workspace, record: Checkout, head: NativeFile, source: Spooled, printed: str
    ) -> NativeFile:
        """Return the head as the file makes it, its blobs put: the app's reading, then a put."""
        async with self.jobs.turn():
            inspection = await self._inspect(ws, record.artifact_id, source)
        media_type = head.content.media_type
        blobs, _ = await self._put_all(
            ws, record.artifact_id, source, media_type, inspection, printed
        )
        about = inspection.about
        return head.model_copy(
            update={
                **blobs,
                "provenance": Provenance(
                    source="check_in",
                    app=about.app,
                    app_version=about.version,
                    build=about.build,
                    base=record.base_sha256,
                ),
            }
        )

    async def _held(self, scope: Scope, record: Checkout) -> bool:
        """Return whether the check-out is open and holds the file: it may commit on its base."""
        if record.state != "open":
            return False
        held = await self.leases.acquire(
            scope, record.artifact_id, record.holder, self._checkout_ttl
        )
        # Held, and still open once held: a discard before this point makes it a proposal.
        return held is not None and await self.checkouts.extend(scope, record.id, held.expires_at)

    async def _commit(
        self, ws: Workspace, record: Checkout, after: NativeFile, note: str, printed: str
    ) -> Outcome | None:
        """Commit the check-in on its base as the person; None if someone committed first."""
        try:
            outcome = await ws.commit(
                EditArtifact(
                    artifact_id=record.artifact_id,
                    base_version=record.base_version,
                    patch=revision_patch(record.base_sha256, after),
                    summary=note,
                )
            )
        except (VersionConflict, PatchFailed):
            return None  # someone committed since the head was read: propose instead
        if isinstance(outcome, Applied):
            return Outcome(status="applied", version=outcome.version, fingerprint=printed)
        return Outcome(
            status="proposed",
            version=record.base_version,
            proposal_id=outcome.proposal_id,
            fingerprint=printed,
        )

    async def _propose(
        self, ws: Workspace, record: Checkout, after: NativeFile, note: str, printed: str
    ) -> Outcome:
        """Keep a check-in as a proposal against the head it finds, however often it moves.

        Each try fails only if someone committed since the head was read, so it ends.
        """
        while True:
            version, head = await self.manifest(ws, record.artifact_id)
            if printed == head.fingerprint:
                return Outcome(status="unchanged", version=version, fingerprint=printed)
            try:
                proposed = await ws.commit(
                    ProposeChange(
                        change=EditArtifact(
                            artifact_id=record.artifact_id,
                            base_version=version,
                            patch=revision_patch(head.content.sha256, after),
                            summary=note,
                        ),
                        rationale=_rationale(record, version),
                    )
                )
            except VersionConflict:
                continue
            return Outcome(
                status="proposed",
                version=version,
                proposal_id=proposed.proposal_id,
                fingerprint=printed,
            )


def _answer(record: Checkout, printed: str) -> CheckedIn:
    """Return what a check-out's check-in did, for a check-in of the file ``printed``."""
    outcome = record.outcome
    if outcome is None or outcome.fingerprint != printed:
        # Checked in with another file, or before its outcome was kept (migration 0002).
        raise InvalidState(f"check-out {record.id} was checked in already with another file")
    discarded = record.state == "discarded"
    return CheckedIn(
        status=outcome.status,
        artifact_id=record.artifact_id,
        version=outcome.version,
        proposal_id=outcome.proposal_id,
        ended_by=record.ended_by if discarded else None,
        ended_at=record.ended_at if discarded else None,
    )


def _rationale(record: Checkout, version: int) -> str:
    made = f"checked in from check-out {record.id} of version {record.base_version}"
    if record.state == "discarded":
        by = "someone" if record.ended_by is None else record.ended_by.participant
        at = "" if record.ended_at is None else f" at {rfc3339(record.ended_at)}"
        return f"{made}, which {by} discarded{at}; the file is at version {version}"
    return f"{made}, after the file moved to version {version}"
