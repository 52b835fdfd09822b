"""Check-outs: a person's exclusive, expiring claim on a native file (RFC-0003).

A check-out is a record (``artifactr_files_checkouts`` in SQL): its id, the artifact, the base
version and digest it was made from, the actor, and the expiry. Its lease's holder is
``checkout:<id>:<actor id>``, so two tabs are two check-outs, and a refusal names who has the
file. The check-in reads its base from the record, never from the upload.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from artifactr.core import Actor
from artifactr.workspace import Scope
from pydantic import BaseModel, ConfigDict

from artifactr.files.manifests import Digest


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
    """When its lease lapses unless extended; when it was checked in, once it was."""
    checked_in: bool = False
    """Whether it was checked in: kept so a retried check-in is answered, not refused."""

    @property
    def holder(self) -> str:
        """The lease holder, ``checkout:<id>:<participant>`` (``checkout:co_1:user:alice``)."""
        return holder_of(self.id, self.actor)


def holder_of(checkout_id: str, actor: Actor) -> str:
    """Return a check-out's lease holder."""
    return f"checkout:{checkout_id}:{actor.participant}"


class Checkouts(Protocol):
    """Check-out records, by scope and id."""

    async def add(self, scope: Scope, checkout: Checkout) -> None:
        """Record a check-out."""
        ...

    async def get(self, scope: Scope, checkout_id: str) -> Checkout | None:
        """Return a check-out, or None if there is none."""
        ...

    async def extend(self, scope: Scope, checkout_id: str, expires_at: datetime) -> None:
        """Set a check-out's expiry; a missing one is a no-op."""
        ...

    async def remove(self, scope: Scope, checkout_id: str) -> None:
        """Forget a check-out; a missing one is a no-op."""
        ...

    async def active(self, scope: Scope, *, now: datetime) -> Sequence[Checkout]:
        """Return the scope's open check-outs that expire after ``now``."""
        ...


class InMemoryCheckouts:
    """Check-out records in a dict."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str, str], Checkout] = {}

    async def add(self, scope: Scope, checkout: Checkout) -> None:
        """Record a check-out."""
        self._records[(scope.tenant_id, scope.workspace_id, checkout.id)] = checkout

    async def get(self, scope: Scope, checkout_id: str) -> Checkout | None:
        """Return a check-out, or None."""
        return self._records.get((scope.tenant_id, scope.workspace_id, checkout_id))

    async def extend(self, scope: Scope, checkout_id: str, expires_at: datetime) -> None:
        """Set a check-out's expiry; a missing one is a no-op, as in SQL."""
        key = (scope.tenant_id, scope.workspace_id, checkout_id)
        record = self._records.get(key)
        if record is not None:
            self._records[key] = record.model_copy(update={"expires_at": expires_at})

    async def remove(self, scope: Scope, checkout_id: str) -> None:
        """Forget a check-out."""
        self._records.pop((scope.tenant_id, scope.workspace_id, checkout_id), None)

    async def active(self, scope: Scope, *, now: datetime) -> Sequence[Checkout]:
        """Return the scope's unexpired check-outs."""
        return [
            record
            for (tenant, workspace, _), record in self._records.items()
            if (tenant, workspace) == (scope.tenant_id, scope.workspace_id)
            and record.expires_at > now
            and not record.checked_in
        ]
