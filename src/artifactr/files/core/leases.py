"""Leases: one writer at a time on a native file (RFC-0003).

The :class:`Leases` port holds one lease per artifact. Its holder names the mode and owner:
``checkout:<checkout id>:<participant>`` (8 hours) or ``edit:<uuid>`` (45 seconds). The same
holder acquiring again renews it; another holder may take it only once it has expired.
:func:`lease_artifact`, :func:`artifact_lease` and :func:`release_artifact` read the artifact
through the caller's workspace first (hidden is missing), and check ``artifactr:edit_artifact``
before a lease or a release.
"""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import ClassVar, Protocol, override

from artifactr.core import Artifact, InvalidState
from artifactr.workspace import Access, Scope, Workspace
from pydantic import JsonValue

from artifactr.files.core.clock import Clock, rfc3339, utc_now
from artifactr.files.core.visibility import visible

EDIT_ACTION = "artifactr:edit_artifact"
"""The action asked before taking, extending or releasing a lease, or checking in."""


@dataclass(frozen=True)
class ArtifactLease:
    """Who holds an artifact, and until when."""

    artifact_id: str
    """The artifact."""
    holder: str
    """``checkout:<checkout id>:<actor id>`` or ``edit:<uuid>``."""
    expires_at: datetime
    """When another holder may take it (timezone-aware UTC)."""


class ArtifactBusy(InvalidState):
    """Another holder has the artifact's lease: a person's check-out or another agent's edit.

    An :class:`~artifactr.core.InvalidState` with a code of its own, ``artifact_busy``, which
    the files router answers 409. Its details name the ``holder`` and ``until`` when, and the
    ``lease`` with both. ``lease`` is None if the lease ended between the refusal and the read,
    in which case the caller may try again at once.
    """

    code: ClassVar[str] = "artifact_busy"

    def __init__(self, artifact_id: str, lease: ArtifactLease | None) -> None:
        if lease is None:
            message = f"artifact {artifact_id} was busy, and is free now: try again"
        else:
            message = (
                f"artifact {artifact_id} is held by {lease.holder} "
                f"until {rfc3339(lease.expires_at)}"
            )
        super().__init__(message)
        self.artifact_id = artifact_id
        self.lease = lease

    @override
    def details(self) -> dict[str, JsonValue]:
        """Return the artifact, who holds it and until when, and the lease (None if it ended)."""
        if self.lease is None:
            return {"artifact_id": self.artifact_id, "holder": None, "until": None, "lease": None}
        holder, until = self.lease.holder, rfc3339(self.lease.expires_at)
        return {
            "artifact_id": self.artifact_id,
            "holder": holder,
            "until": until,
            "lease": {"holder": holder, "expires_at": until},
        }


class Leases(Protocol):
    """Leases on artifacts, one per artifact in a scope."""

    async def acquire(
        self, scope: Scope, artifact_id: str, holder: str, ttl: timedelta
    ) -> ArtifactLease | None:
        """Take or renew the lease for ``ttl``; return it, or None if another holder has it."""
        ...

    async def current(self, scope: Scope, artifact_id: str) -> ArtifactLease | None:
        """Return the live lease, or None if there is none or it has expired."""
        ...

    async def release(self, scope: Scope, artifact_id: str, holder: str) -> bool:
        """End the lease if ``holder`` holds it (expired or not); return whether it did."""
        ...

    async def live(self, scope: Scope) -> dict[str, ArtifactLease]:
        """Return the scope's live leases by artifact id: one read, however many files it has.

        A list of files shows each one's lease from this read alone (issue 41). It is no check
        of access: the caller shows only the leases of files its workspace handle listed.
        """
        ...


class InMemoryLeases:
    """Leases in a dict, on an injectable clock.

    Args:
        clock: The current time; UTC now if omitted.
    """

    def __init__(self, *, clock: Clock = utc_now) -> None:
        self._clock = clock
        self._leases: dict[tuple[str, str, str], ArtifactLease] = {}

    async def acquire(
        self, scope: Scope, artifact_id: str, holder: str, ttl: timedelta
    ) -> ArtifactLease | None:
        """Take or renew a lease; see :meth:`Leases.acquire`."""
        # In UTC whatever the clock's zone, as the SQL adapter answers.
        now = self._clock().astimezone(UTC)
        key = (scope.tenant_id, scope.workspace_id, artifact_id)
        held = self._leases.get(key)
        if held is not None and held.holder != holder and held.expires_at > now:
            return None
        lease = ArtifactLease(artifact_id=artifact_id, holder=holder, expires_at=now + ttl)
        self._leases[key] = lease
        return lease

    async def current(self, scope: Scope, artifact_id: str) -> ArtifactLease | None:
        """Return the live lease; see :meth:`Leases.current`."""
        held = self._leases.get((scope.tenant_id, scope.workspace_id, artifact_id))
        if held is None or held.expires_at <= self._clock():
            return None
        return held

    async def release(self, scope: Scope, artifact_id: str, holder: str) -> bool:
        """End a lease; see :meth:`Leases.release`."""
        key = (scope.tenant_id, scope.workspace_id, artifact_id)
        held = self._leases.get(key)
        if held is None or held.holder != holder:
            return False
        del self._leases[key]
        return True

    async def live(self, scope: Scope) -> dict[str, ArtifactLease]:
        """Return the scope's live leases; see :meth:`Leases.live`."""
        now = self._clock()
        return {
            lease.artifact_id: lease
            for (tenant, workspace, _), lease in self._leases.items()
            if (tenant, workspace) == (scope.tenant_id, scope.workspace_id)
            and lease.expires_at > now
        }


def scope_of(ws: Workspace) -> Scope:
    """Return the scope a workspace handle acts in."""
    return Scope(tenant_id=ws.tenant_id, workspace_id=ws.workspace_id)


async def lease_artifact(
    ws: Workspace, leases: Leases, artifact_id: str, *, holder: str, ttl: timedelta
) -> ArtifactLease:
    """Take or renew the artifact's lease as the handle's actor; return it.

    Raises:
        NotFound: If the artifact is missing or hidden from the actor.
        Forbidden: If the actor may not edit it.
        ArtifactBusy: If another holder has it.
    """
    await visible(ws, Artifact, artifact_id)
    return await hold_artifact(ws, leases, artifact_id, holder=holder, ttl=ttl)


async def hold_artifact(
    ws: Workspace, leases: Leases, artifact_id: str, *, holder: str, ttl: timedelta
) -> ArtifactLease:
    """Take or renew the lease of an artifact the handle has just read; return it.

    :func:`lease_artifact` for a caller whose read through ``ws`` proved the artifact there
    and visible: it checks the edit right and acquires, without reading the artifact again.

    Raises:
        Forbidden: If the actor may not edit it.
        ArtifactBusy: If another holder has it.
    """
    await ws.check(Access(action=EDIT_ACTION, artifact_id=artifact_id))
    scope = scope_of(ws)
    lease = await leases.acquire(scope, artifact_id, holder, ttl)
    if lease is None:
        raise ArtifactBusy(artifact_id, await leases.current(scope, artifact_id))
    return lease


async def artifact_lease(ws: Workspace, leases: Leases, artifact_id: str) -> ArtifactLease | None:
    """Return the artifact's live lease, or None; a read, so readers may see it.

    Raises:
        NotFound: If the artifact is missing or hidden from the actor.
    """
    await visible(ws, Artifact, artifact_id)
    return await leases.current(scope_of(ws), artifact_id)


async def release_artifact(ws: Workspace, leases: Leases, artifact_id: str, *, holder: str) -> bool:
    """End the lease if ``holder`` holds it; return whether it did.

    Raises:
        NotFound: If the artifact is missing or hidden from the actor.
        Forbidden: If the actor may not edit it.
    """
    await visible(ws, Artifact, artifact_id)
    await ws.check(Access(action=EDIT_ACTION, artifact_id=artifact_id))
    return await leases.release(scope_of(ws), artifact_id, holder)
