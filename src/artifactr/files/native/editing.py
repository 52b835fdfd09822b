"""An editor's session: a lock held as a check-out, and many saves under it (ADR-0017).

A browser or desktop editor (Collabora or OnlyOffice over WOPI, Word or LibreOffice over
WebDAV) locks a file while it is open and saves many times under the lock. This part is that
session, protocol-neutral, so the routers that speak to editors stay thin:

- :meth:`Editing.lock` holds the editor's lock as a check-out for the handle's actor: the same
  access checks, switch and hiding as :meth:`~.checkout.CheckOut.check_out`, with the lock
  string recorded on the check-out. The same string again is a refresh of the same record.
  Anyone else holding the file (another lock, a person's check-out, an agent's edit) is
  :class:`~artifactr.files.core.leases.ArtifactBusy`; a refusal for another lock is a
  :class:`LockMismatch` carrying that lock. The lease is taken first, then the head read: that
  head is the session's base.
- :meth:`Editing.save` is a check-in that keeps the check-out: screened, inspected, put, then
  committed as the person with a test on the base digest, the base moving to the new head. A
  save equal to the head makes nothing new (``unchanged``), so a retried save is never doubled;
  a save after someone else's revision is kept as a proposal against the head, the base
  staying where it was. Without the lock it is refused with the lock that holds the file.
- :meth:`Editing.unlock` ends the session: checked in if a save committed or proposed, else
  discarded; :meth:`Editing.relock` swaps the lock string; :meth:`Editing.refresh` renews it.

Who may do what (ADR-0023): every operation that takes, refreshes, swaps, saves under or ends a
lock asks the edit right first, before it reads or changes the session, so a viewer who learnt a
lock changes nothing (``Forbidden``). A lock belongs to the person who took it (the record's
``actor``). A WebDAV token (``opaquelocktoken:``, :func:`personal_lock`) is theirs alone: anyone
else presenting it is refused as a mismatch that names no lock. Any other lock string is a WOPI
lock, which Collabora shares among the people editing a document together: another person who
may edit acts in that session, each save commits as the person who saved, and each such act is
logged as ``lock_joined``. A refusal shows the lock that holds the file only when it is a WOPI
lock (the caller may edit, or it would have been refused first); a WebDAV token is never shown.

No save is lost: a save under a lock whose session ended (unlocked, discarded from the portal,
or taken over after its lease lapsed) is kept as a proposal against the head, saying who ended
the session; one whose lease lapsed with no one else holding the file takes it up again.

What each operation costs (ADR-0034): the head read through the workspace (which the answer's
version comes from) and the edit right, each asked once, then the session's record, its lease
and its expiry read and written in one transaction (:meth:`~.checkouts.Checkouts.together`).
:meth:`Editing.locked`, :meth:`Editing.refreshed`, :meth:`Editing.unlocked` and
:meth:`Editing.relocked` answer the check-out with that version (:class:`Held`), so an editor's
router reads nothing again to answer.
"""

import asyncio
from collections.abc import AsyncIterable
from datetime import timedelta
from typing import ClassVar, Final, NamedTuple, override

from artifactr.core import ValidationFailed, new_id
from artifactr.workspace import Access, Scope, Workspace
from pydantic import JsonValue

from artifactr.files.core import log
from artifactr.files.core.checkouts import Checkout, Outcome, holder_of
from artifactr.files.core.errors import NotEnabled
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.leases import EDIT_ACTION, ArtifactBusy, ArtifactLease, scope_of
from artifactr.files.core.manifests import NativeFile, clean_text
from artifactr.files.core.visibility import visible
from artifactr.files.native.checkin import CheckedIn, CheckIn
from artifactr.files.native.spool import spool

EDITOR_TTL: Final = timedelta(minutes=30)
"""How long an editor's lock lasts unless refreshed: WOPI's 30 minutes."""

MAX_LOCK: Final = 1024
"""The most characters a lock string may have (WOPI's extended lock length)."""

RECORD_WAITS: Final = 50
"""How often a refusal looks again for the record of a check-out whose lease it found."""

RECORD_WAIT: Final = 0.02
"""Seconds between those looks: a second in all, far more than a record's write takes."""

CHECKOUT_PREFIX: Final = "checkout:"
"""How a check-out's lease holder begins."""

PERSONAL_PREFIX: Final = "opaquelocktoken:"
"""How a lock that is one person's alone begins: a WebDAV lock token (RFC 4918, 6.4)."""


def personal_lock(lock: str) -> bool:
    """Return whether a lock is its taker's alone (a WebDAV token), not a shared WOPI lock."""
    return lock.startswith(PERSONAL_PREFIX)


class LockMismatch(ArtifactBusy):
    """The lock given is not the one that holds the file: another, or none (``lock`` is None).

    An :class:`~artifactr.files.core.leases.ArtifactBusy` with its own code, ``lock_mismatch``;
    its details add the ``lock`` that holds the file, so an editor's router can answer with it
    (WOPI's ``409`` with ``X-WOPI-Lock``, WebDAV's ``423``).
    """

    code: ClassVar[str] = "lock_mismatch"

    def __init__(self, artifact_id: str, lease: ArtifactLease | None, lock: str | None) -> None:
        super().__init__(artifact_id, lease)
        if lease is None:
            self.args = (f"artifact {artifact_id} is not locked",)
        self.lock = lock

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return the artifact, who holds it and until when, and the lock that holds it."""
        return {**super().details(), "lock": self.lock}


class Held(NamedTuple):
    """What a lock operation leaves: the session's check-out, and the file's head version."""

    checkout: Checkout
    """The check-out as it stands after the operation."""
    version: int
    """The head version, read as the operation began (an editor's ``X-WOPI-ItemVersion``)."""


class _Lost(NamedTuple):
    """A renewal that lost: to another holder (``busy``, with the lease read), or to its end."""

    busy: bool
    lease: ArtifactLease | None


class Editing(CheckIn):
    """The part of the service that holds an editor's lock as a check-out and saves under it."""

    async def lock(
        self, ws: Workspace, artifact_id: str, *, lock: str, ttl: timedelta = EDITOR_TTL
    ) -> Checkout:
        """Hold the file for an editor's session under ``lock``; the same lock again refreshes.

        :meth:`locked`'s check-out; see it.
        """
        return (await self.locked(ws, artifact_id, lock=lock, ttl=ttl)).checkout

    @log.logged("locked")
    async def locked(
        self, ws: Workspace, artifact_id: str, *, lock: str, ttl: timedelta = EDITOR_TTL
    ) -> Held:
        """Hold the file for an editor's session under ``lock``; the same lock again refreshes.

        Raises:
            ValidationFailed: If the lock is empty, longer than :data:`MAX_LOCK` or not ASCII.
            NotFound: If the artifact is missing or hidden.
            NotEnabled: If the app is off here.
            Forbidden: If the actor may not edit it.
            LockMismatch: If another editor's lock holds it.
            ArtifactBusy: If a person's check-out or an agent's edit holds it.
        """
        _check_lock(lock)
        version = await self._asked(ws, artifact_id)
        await self._require_enabled(ws)
        scope = scope_of(ws)
        renewed: Checkout | _Lost | None = None
        async with self.checkouts.together(scope):
            if personal_lock(lock):
                # A WebDAV token stays its taker's after their session ends: no one else takes it.
                former = await self.checkouts.with_lock(scope, artifact_id, lock)
                if former is not None and not _own(former, ws):
                    lease = await self.leases.current(scope, artifact_id)
                    raise LockMismatch(artifact_id, lease, None)
            for record in await self.checkouts.open_on(scope, artifact_id):
                # Another's session under the same lock (never a WebDAV token: refused above) is
                # joined; one the actor may not use is left to the lease, which refuses as busy.
                if record.lock == lock and _usable(record, ws):
                    _joined(ws, record)
                    renewed = await self._extended(scope, record, ttl)
                    break
        if renewed is not None:
            return Held(await self._renewed(scope, artifact_id, renewed), version)
        checkout_id = new_id("co")
        holder = holder_of(checkout_id, ws.actor)
        # The edit right was asked above: the lease is taken without asking it again.
        lease = await self.leases.acquire(scope, artifact_id, holder, ttl)
        if lease is None:
            raise await self._busy(
                scope, artifact_id, await self.leases.current(scope, artifact_id)
            )
        # The lease is held: the head read now is the base no one can move but this session.
        try:
            version, head = await self.manifest(ws, artifact_id)
            record = Checkout(
                id=checkout_id,
                artifact_id=artifact_id,
                base_version=version,
                base_sha256=head.content.sha256,
                actor=ws.actor,
                expires_at=lease.expires_at,
                lock=lock,
            )
            async with self.checkouts.together(scope):
                await self._end_lapsed(ws, artifact_id)
                await self.checkouts.add(scope, record)
        except BaseException:
            await self.leases.release(scope, artifact_id, holder)
            raise
        return Held(record, version)

    async def refresh(
        self, ws: Workspace, artifact_id: str, *, lock: str, ttl: timedelta = EDITOR_TTL
    ) -> Checkout:
        """Renew the session ``lock`` holds for ``ttl`` from now: :meth:`refreshed`'s check-out."""
        return (await self.refreshed(ws, artifact_id, lock=lock, ttl=ttl)).checkout

    @log.logged("lock_refreshed")
    async def refreshed(
        self, ws: Workspace, artifact_id: str, *, lock: str, ttl: timedelta = EDITOR_TTL
    ) -> Held:
        """Renew the session ``lock`` holds for ``ttl`` from now.

        Raises:
            NotFound: If the artifact is missing or hidden.
            NotEnabled: If the app is off here.
            Forbidden: If the actor may not edit it.
            LockMismatch: If ``lock`` doesn't hold the file (another does, or none).
        """
        version = await self._asked(ws, artifact_id)
        await self._require_enabled(ws)
        scope = scope_of(ws)
        async with self.checkouts.together(scope):
            record = await self._named(ws, artifact_id, lock)
            renewed = await self._extended(scope, record, ttl)
        return Held(await self._renewed(scope, artifact_id, renewed), version)

    async def current_lock(
        self, ws: Workspace, artifact_id: str, *, personal: bool = True
    ) -> str | None:
        """Return the editor's lock that holds the file now, as the actor may see it, or None.

        A WOPI lock is shown to anyone who may edit the file; a WebDAV token only to the person
        who took it, and only if ``personal`` (WOPI's ``GetLock`` passes False: it never shows
        a WebDAV token). None when a person's check-out or an agent's edit holds the file.

        Raises:
            NotFound: If the artifact is missing or hidden.
            Forbidden: If the actor may not edit it: a viewer is shown no lock.
        """
        await self._asked(ws, artifact_id, letting_go=True)
        scope = scope_of(ws)
        async with self.checkouts.together(scope):
            _, record = await self._holding(scope, artifact_id)
        if record is None or record.lock is None:
            return None
        if _shown(record) is not None or (personal and _own(record, ws)):
            return record.lock
        return None

    async def unlock(self, ws: Workspace, artifact_id: str, *, lock: str) -> Checkout:
        """End the session ``lock`` holds and free the file: :meth:`unlocked`'s check-out."""
        return (await self.unlocked(ws, artifact_id, lock=lock)).checkout

    @log.logged("unlocked")
    async def unlocked(self, ws: Workspace, artifact_id: str, *, lock: str) -> Held:
        """End the session ``lock`` holds and free the file; return the record as it ended.

        A session whose saves committed or were proposed ends checked in; one with none ends
        discarded. Unlocking is allowed while the app is off, so an editor can let go.

        Raises:
            NotFound: If the artifact is missing or hidden.
            Forbidden: If the actor may not edit it.
            LockMismatch: If ``lock`` doesn't hold the file (another does, or none).
        """
        version = await self._asked(ws, artifact_id, letting_go=True)
        scope = scope_of(ws)
        async with self.checkouts.together(scope):
            record = await self._named(ws, artifact_id, lock)
            state = "discarded" if record.outcome is None else "checked_in"
            # The record ends first, then the lease goes: a refresh in between sees it ended.
            at = self._clock()
            ended = await self.checkouts.end(scope, record.id, state, by=ws.actor, at=at)
            await self.leases.release(scope, artifact_id, record.holder)
        return Held(ended or record, version)

    async def relock(
        self,
        ws: Workspace,
        artifact_id: str,
        *,
        old: str,
        new: str,
        ttl: timedelta = EDITOR_TTL,
    ) -> Checkout:
        """Swap the session's lock ``old`` for ``new``: :meth:`relocked`'s check-out."""
        return (await self.relocked(ws, artifact_id, old=old, new=new, ttl=ttl)).checkout

    @log.logged("relocked")
    async def relocked(
        self,
        ws: Workspace,
        artifact_id: str,
        *,
        old: str,
        new: str,
        ttl: timedelta = EDITOR_TTL,
    ) -> Held:
        """Swap the session's lock ``old`` for ``new``, and renew it for ``ttl``.

        Raises:
            ValidationFailed: If ``new`` is empty, too long or not ASCII.
            NotFound: If the artifact is missing or hidden.
            NotEnabled: If the app is off here.
            Forbidden: If the actor may not edit it.
            LockMismatch: If ``old`` doesn't hold the file (another lock does, or none).
        """
        _check_lock(new)
        version = await self._asked(ws, artifact_id)
        await self._require_enabled(ws)
        scope = scope_of(ws)
        renewed: Checkout | _Lost | None = None
        async with self.checkouts.together(scope):
            record = await self._named(ws, artifact_id, old)
            if await self.checkouts.relock(scope, record.id, old, new):
                moved = record.model_copy(update={"lock": new})
                renewed = await self._extended(scope, moved, ttl)
        if renewed is None:
            raise await self._mismatch(scope, artifact_id)
        return Held(await self._renewed(scope, artifact_id, renewed), version)

    @log.logged("saved")
    async def save(
        self,
        ws: Workspace,
        artifact_id: str,
        data: AsyncIterable[bytes],
        *,
        lock: str,
        summary: str | None = None,
        loaded: int | None = None,
    ) -> CheckedIn:
        """Save a file under the session ``lock`` holds: a check-in that keeps the check-out.

        Equal to the head (by fingerprint): ``unchanged``, nothing written, so a retry after a
        lost answer makes nothing new. On the session's base, with its lease held: committed
        as the person (source ``check_in``), and the base moves to the new version. Otherwise
        (someone else's revision came first): kept as a proposal against the head, and the
        base stays, so every later save of the session is a proposal too until it reloads.
        ``loaded`` is the version the editor says it loaded, if it says (Collabora does, on
        every save): it stands for the session's base, so a head that moved on from it makes
        the save a proposal, and an editor that reloaded the head saves on it again.

        The lock is checked before a byte is read, so a refusal costs no upload.

        Raises:
            NotFound: If the artifact is missing or hidden.
            NotEnabled: If the app is off here.
            Forbidden: If the actor may not edit it.
            LockMismatch: If ``lock`` doesn't hold the file (another does, or none).
            FileTooLarge: If the stream is over the size limit.
            UnsafeFile: If the file is not a package or is hostile.
            AppFailure: If the app can't read it.
        """
        summary = clean_text(summary or "") or None
        record = await self._saving(ws, artifact_id, lock)
        await self._require_enabled(ws)
        incoming = await spool(data, limit=self._max_size)
        try:
            printed = await asyncio.to_thread(fingerprint, incoming.file, limits=self._limits)
            version, head = await self.manifest(ws, artifact_id)
            previous = record.outcome
            if printed == head.fingerprint:
                outcome = Outcome(status="unchanged", version=version, fingerprint=printed)
                return _saved(record, outcome)
            if previous is not None and previous.fingerprint == printed:
                return _saved(record, previous)  # a retry of a save kept as a proposal
            if loaded == version:  # the editor has the head: it is the base of this save
                record = record.model_copy(
                    update={"base_version": version, "base_sha256": head.content.sha256}
                )
            after = await self._written(ws, record, head, incoming, printed)
        finally:
            incoming.close()
        note = summary or f"saved {head.name} in an editor"
        scope = scope_of(ws)
        outcome = None
        on_base = version == record.base_version and loaded in (None, version)
        if on_base and record.state == "open" and await self._holds(scope, record):
            outcome = await self._commit(ws, record, after, note, printed)
        if outcome is None:
            outcome = await self._propose(ws, record, after, note, printed)
        base = None
        if outcome.status == "applied":
            base = (outcome.version, after.content.sha256)
        await self.checkouts.saved(scope, record.id, outcome, base=base)
        return _saved(record, outcome)

    # ─── the session a lock names ─────────────────────────────────────────────

    async def _holding(
        self, scope: Scope, artifact_id: str
    ) -> tuple[ArtifactLease | None, Checkout | None]:
        """Return the live lease and the open check-out it names, if a check-out holds it."""
        lease = await self.leases.current(scope, artifact_id)
        if lease is None or not lease.holder.startswith(CHECKOUT_PREFIX):
            return lease, None
        checkout_id = lease.holder.removeprefix(CHECKOUT_PREFIX).split(":", 1)[0]
        record = await self.checkouts.get(scope, checkout_id)
        if record is None or record.state != "open" or record.holder != lease.holder:
            return lease, None
        return lease, record

    async def _holds(self, scope: Scope, record: Checkout) -> bool:
        lease = await self.leases.current(scope, record.artifact_id)
        return lease is not None and lease.holder == record.holder

    async def _asked(self, ws: Workspace, artifact_id: str, *, letting_go: bool = False) -> int:
        """Read the file's head through the workspace and ask the edit right; return the version.

        Asked first, before anything of the session is read: a viewer learns nothing and
        changes nothing. ``letting_go`` lets it pass while the app is off.
        """
        head = await visible(ws, NativeFile, artifact_id)
        await _may_edit(ws, artifact_id, letting_go=letting_go)
        return head.version

    async def _session(self, ws: Workspace, artifact_id: str, lock: str) -> Checkout:
        """Return the open check-out whose lock ``lock`` is and whose lease holds the file.

        The edit right is asked first (:meth:`_asked`), then the session read in one go.
        """
        await self._asked(ws, artifact_id)
        async with self.checkouts.together(scope_of(ws)):
            return await self._named(ws, artifact_id, lock)

    async def _named(self, ws: Workspace, artifact_id: str, lock: str) -> Checkout:
        """Return the session ``lock`` names, live: the edit right must have been asked.

        Reads leases and check-outs only, so it runs inside a ``together`` block.
        """
        lease, record = await self._holding(scope_of(ws), artifact_id)
        if record is None or record.lock != lock or not _usable(record, ws):
            raise LockMismatch(artifact_id, lease, _shown(record))
        _joined(ws, record)
        return record

    async def _saving(self, ws: Workspace, artifact_id: str, lock: str) -> Checkout:
        """Return the session a save under ``lock`` goes to: live, taken up again, or ended.

        A session whose lease lapsed with no one else holding the file is taken up again; one
        that ended, or whose file another holds now, is returned as it is, and the save is kept
        as a proposal. A lock no session of the actor's (or shared) ever had is a mismatch.
        """
        try:
            return await self._session(ws, artifact_id, lock)
        except LockMismatch as mismatch:
            former = await self.checkouts.with_lock(scope_of(ws), artifact_id, lock)
            if former is None or not _usable(former, ws):
                raise mismatch from None
        if former.state != "open":
            return former
        try:
            return await self._renew(ws, former, EDITOR_TTL)
        except ArtifactBusy:
            return former

    async def _mismatch(self, scope: Scope, artifact_id: str) -> LockMismatch:
        lease, record = await self._holding(scope, artifact_id)
        return LockMismatch(artifact_id, lease, _shown(record))

    async def _busy(
        self, scope: Scope, artifact_id: str, lease: ArtifactLease | None
    ) -> ArtifactBusy:
        """Return the refusal for a lock the file's holder refused: with its lock, if it has one.

        A session that has just taken the lease writes its record a moment later: a check-out's
        holder whose record isn't there yet is looked for again, briefly, so the refusal names
        the lock that won rather than none.
        """
        held, record = await self._holding(scope, artifact_id)
        for _ in range(RECORD_WAITS):
            if record is not None or held is None or not held.holder.startswith(CHECKOUT_PREFIX):
                break
            await asyncio.sleep(RECORD_WAIT)
            held, record = await self._holding(scope, artifact_id)
        if record is not None and record.lock is not None:
            return LockMismatch(artifact_id, held, _shown(record))
        return ArtifactBusy(artifact_id, held or lease)

    async def _renew(self, ws: Workspace, record: Checkout, ttl: timedelta) -> Checkout:
        """Renew a session's lease and record for ``ttl``, in one transaction.

        The caller has asked the edit right (every operation asks it first, once).

        Raises:
            LockMismatch: If it ended meanwhile, or its lease lapsed and another lock holds it.
            ArtifactBusy: If its lease lapsed and someone else holds the file now.
        """
        scope = scope_of(ws)
        async with self.checkouts.together(scope):
            renewed = await self._extended(scope, record, ttl)
        return await self._renewed(scope, record.artifact_id, renewed)

    async def _extended(self, scope: Scope, record: Checkout, ttl: timedelta) -> Checkout | _Lost:
        """Renew a session's lease, then extend its record; return it, or how it was lost.

        The lease is taken first, then the record extended only if it is still open: a renewal
        that lost to an unlock lets go of the lease at once. Leases and check-outs only, so it
        runs inside a ``together`` block; the refusal is made after it (:meth:`_renewed`).
        """
        lease = await self.leases.acquire(scope, record.artifact_id, record.holder, ttl)
        if lease is None:
            return _Lost(busy=True, lease=await self.leases.current(scope, record.artifact_id))
        if not await self.checkouts.extend(scope, record.id, lease.expires_at):
            await self.leases.release(scope, record.artifact_id, record.holder)
            return _Lost(busy=False, lease=None)
        return record.model_copy(update={"expires_at": lease.expires_at})

    async def _renewed(self, scope: Scope, artifact_id: str, renewed: Checkout | _Lost) -> Checkout:
        """Return a renewed session, or raise the refusal for one that was lost.

        Raises:
            LockMismatch: If it ended meanwhile, or its lease lapsed and another lock holds it.
            ArtifactBusy: If its lease lapsed and someone else holds the file now.
        """
        if isinstance(renewed, Checkout):
            return renewed
        if renewed.busy:
            raise await self._busy(scope, artifact_id, renewed.lease)
        raise await self._mismatch(scope, artifact_id)

    async def _end_lapsed(self, ws: Workspace, artifact_id: str) -> None:
        """End the editors' sessions on a file whose lease lapsed: a new lock now holds it."""
        scope = scope_of(ws)
        for record in await self.checkouts.open_on(scope, artifact_id):
            if record.lock is not None:
                state = "discarded" if record.outcome is None else "checked_in"
                await self.checkouts.end(scope, record.id, state, by=ws.actor, at=self._clock())


async def _may_edit(ws: Workspace, artifact_id: str, *, letting_go: bool = False) -> None:
    """Ask the edit right; ``letting_go`` (an unlock) passes while the app is off (ADR-0006)."""
    try:
        await ws.check(Access(action=EDIT_ACTION, artifact_id=artifact_id))
    except NotEnabled:
        # The gate refuses while the app is off only once the application's own authorize
        # allowed the action: the person may edit, so letting go stays allowed.
        if not letting_go:
            raise


def _own(record: Checkout, ws: Workspace) -> bool:
    return record.actor.participant == ws.actor.participant


def _usable(record: Checkout, ws: Workspace) -> bool:
    """Return whether the actor may act under the record's lock: theirs, or a shared one."""
    return record.lock is not None and (_own(record, ws) or not personal_lock(record.lock))


def _shown(record: Checkout | None) -> str | None:
    """Return the lock a refusal may show an editor: a WOPI lock, never a WebDAV token."""
    if record is None or record.lock is None or personal_lock(record.lock):
        return None
    return record.lock


def _joined(ws: Workspace, record: Checkout) -> None:
    """Log another person acting in a shared (WOPI) session: who joined whose lock."""
    if not _own(record, ws):
        fields = {"artifact_id": record.artifact_id, "checkout_id": record.id}
        log.record("lock_joined", ws, {**fields, "taken_by": record.actor.participant})


def _check_lock(lock: str) -> None:
    """Refuse a lock string WOPI and WebDAV would not send."""
    problem = None
    if not lock:
        problem = ("missing", "a lock needs at least one character")
    elif len(lock) > MAX_LOCK:
        problem = ("too_long", f"a lock has at most {MAX_LOCK} characters")
    elif not lock.isascii():
        problem = ("not_ascii", "a lock is ASCII characters")
    if problem is not None:
        kind, message = problem
        raise ValidationFailed(
            "the lock is refused", [{"loc": ["lock"], "msg": message, "type": kind}]
        )


def _saved(record: Checkout, outcome: Outcome) -> CheckedIn:
    ended = record.state != "open"
    return CheckedIn(
        status=outcome.status,
        artifact_id=record.artifact_id,
        version=outcome.version,
        proposal_id=outcome.proposal_id,
        ended_by=record.ended_by if ended else None,
        ended_at=record.ended_at if ended else None,
    )
