"""SQL check-outs: the records of people's check-outs, in ``artifactr_files_checkouts``.

A record keeps the artifact, the base version and digest, and the actor (as the JSON of
artifactr's ``Actor`` union); ``created_at`` is the database's time and orders open check-outs.
Every change is one conditional ``UPDATE`` and a read of the row as it stands, so two racing
calls never both win, on PostgreSQL or SQLite.
"""

import contextlib
from collections.abc import AsyncGenerator, Sequence
from datetime import datetime
from typing import Any

from artifactr.core import Actor
from artifactr.workspace import Scope
from pydantic import TypeAdapter
from sqlalchemy import ColumnElement, Row, delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from artifactr.files.core.checkouts import Checkout, Ended, Outcome
from artifactr.files.core.manifests import Digest
from artifactr.files.sql._connections import DatabaseNow, TenantConnections, finished, upsert_into
from artifactr.files.sql.tables import CheckoutRow

_ACTOR: TypeAdapter[Actor] = TypeAdapter(Actor)


class SqlCheckouts:
    """Check-out records in a SQL database; see :class:`artifactr.files.core.checkouts.Checkouts`.

    Args:
        engine: The database. It is not disposed of here.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._connections = TenantConnections(engine)
        self._dialect = engine.dialect.name

    @contextlib.asynccontextmanager
    async def together(self, scope: Scope) -> AsyncGenerator[None]:
        """Run the block's calls, these records' and the leases' on this engine, in one transaction.

        Committed once if the block ends well, else rolled back (ADR-0034).
        """
        async with self._connections.together(scope.tenant_id):
            yield

    @finished
    async def add(self, scope: Scope, checkout: Checkout) -> None:
        """Record a check-out, replacing a record with the same id, in one statement."""
        values = _values(checkout)
        added = upsert_into(CheckoutRow, self._dialect).values(
            tenant_id=scope.tenant_id,
            workspace_id=scope.workspace_id,
            id=checkout.id,
            created_at=DatabaseNow(),
            **values,
        )
        added = added.on_conflict_do_update(
            index_elements=[CheckoutRow.tenant_id, CheckoutRow.workspace_id, CheckoutRow.id],
            set_=values,
        )
        async with self._connections.begin(scope.tenant_id) as connection:
            await connection.execute(added)

    @finished
    async def get(self, scope: Scope, checkout_id: str) -> Checkout | None:
        """Return a check-out, or None if there is none."""
        async with self._connections.read(scope.tenant_id) as connection:
            return await _read(connection, scope, checkout_id)

    @finished
    async def extend(self, scope: Scope, checkout_id: str, expires_at: datetime) -> bool:
        """Set an open check-out's expiry; return whether it was open."""
        async with self._connections.begin(scope.tenant_id) as connection:
            extended = await connection.execute(
                update(CheckoutRow)
                .where(*_record(scope, checkout_id), CheckoutRow.state == "open")
                .values(expires_at=expires_at)
            )
        return extended.rowcount > 0

    @finished
    async def end(
        self, scope: Scope, checkout_id: str, state: Ended, *, by: Actor, at: datetime
    ) -> Checkout | None:
        """End an open check-out as ``state``; an ended one stays as it is."""
        async with self._connections.begin(scope.tenant_id) as connection:
            await connection.execute(_end(scope, checkout_id, state, by, at))
            return await _read(connection, scope, checkout_id)

    @finished
    async def claim(
        self, scope: Scope, checkout_id: str, token: str, *, until: datetime, now: datetime
    ) -> Checkout | None:
        """Take or renew a check-in's claim while there is no outcome and no other live claim."""
        async with self._connections.begin(scope.tenant_id) as connection:
            await connection.execute(
                update(CheckoutRow)
                .where(
                    *_record(scope, checkout_id),
                    CheckoutRow.outcome.is_(None),
                    CheckoutRow.state != "checked_in",
                    or_(
                        CheckoutRow.claim.is_(None),
                        CheckoutRow.claim == token,
                        CheckoutRow.claimed_until <= now,
                    ),
                )
                .values(claim=token, claimed_until=until)
            )
            return await _read(connection, scope, checkout_id)

    @finished
    async def unclaim(self, scope: Scope, checkout_id: str, token: str) -> None:
        """Drop the claim ``token`` holds, if it still does."""
        async with self._connections.begin(scope.tenant_id) as connection:
            await connection.execute(
                update(CheckoutRow)
                .where(*_record(scope, checkout_id), CheckoutRow.claim == token)
                .values(claim=None, claimed_until=None)
            )

    @finished
    async def settle(
        self, scope: Scope, checkout_id: str, outcome: Outcome, *, by: Actor, at: datetime
    ) -> Checkout | None:
        """Record a check-in's outcome unless one is; end the check-out if it is open."""
        async with self._connections.begin(scope.tenant_id) as connection:
            await connection.execute(
                update(CheckoutRow)
                .where(*_record(scope, checkout_id), CheckoutRow.outcome.is_(None))
                .values(
                    outcome=outcome.status,
                    outcome_version=outcome.version,
                    proposal_id=outcome.proposal_id,
                    fingerprint=outcome.fingerprint,
                    claim=None,
                    claimed_until=None,
                )
            )
            await connection.execute(_end(scope, checkout_id, "checked_in", by, at))
            return await _read(connection, scope, checkout_id)

    @finished
    async def relock(self, scope: Scope, checkout_id: str, old: str, new: str) -> bool:
        """Change an open check-out's lock from ``old`` to ``new``; return whether it did."""
        async with self._connections.begin(scope.tenant_id) as connection:
            changed = await connection.execute(
                update(CheckoutRow)
                .where(
                    *_record(scope, checkout_id),
                    CheckoutRow.state == "open",
                    CheckoutRow.lock == old,
                )
                .values(lock=new)
            )
        return changed.rowcount > 0

    @finished
    async def saved(
        self, scope: Scope, checkout_id: str, outcome: Outcome, *, base: tuple[int, Digest] | None
    ) -> bool:
        """Record an editor's save on an open check-out, moving its base if ``base`` is given."""
        values: dict[str, Any] = {
            "outcome": outcome.status,
            "outcome_version": outcome.version,
            "proposal_id": outcome.proposal_id,
            "fingerprint": outcome.fingerprint,
        }
        if base is not None:
            values |= {"base_version": base[0], "base_sha256": base[1]}
        async with self._connections.begin(scope.tenant_id) as connection:
            changed = await connection.execute(
                update(CheckoutRow)
                .where(*_record(scope, checkout_id), CheckoutRow.state == "open")
                .values(**values)
            )
        return changed.rowcount > 0

    @finished
    async def remove(self, scope: Scope, checkout_id: str) -> None:
        """Forget a check-out; a missing one is a no-op."""
        async with self._connections.begin(scope.tenant_id) as connection:
            await connection.execute(delete(CheckoutRow).where(*_record(scope, checkout_id)))

    @finished
    async def active(self, scope: Scope, *, now: datetime) -> Sequence[Checkout]:
        """Return the scope's open check-outs that expire after ``now``, oldest first."""
        async with self._connections.read(scope.tenant_id) as connection:
            rows = await connection.execute(
                _RECORD.where(
                    CheckoutRow.tenant_id == scope.tenant_id,
                    CheckoutRow.workspace_id == scope.workspace_id,
                    CheckoutRow.expires_at > now,
                    CheckoutRow.state == "open",
                ).order_by(CheckoutRow.created_at, CheckoutRow.id)
            )
            return [_checkout(row) for row in rows]

    @finished
    async def open_on(self, scope: Scope, artifact_id: str) -> Sequence[Checkout]:
        """Return an artifact's open check-outs, their leases lapsed or not, oldest first."""
        async with self._connections.read(scope.tenant_id) as connection:
            rows = await connection.execute(
                _RECORD.where(
                    CheckoutRow.tenant_id == scope.tenant_id,
                    CheckoutRow.workspace_id == scope.workspace_id,
                    CheckoutRow.artifact_id == artifact_id,
                    CheckoutRow.state == "open",
                ).order_by(CheckoutRow.created_at, CheckoutRow.id)
            )
            return [_checkout(row) for row in rows]

    @finished
    async def ended_since(
        self, scope: Scope, artifact_id: str, participant: str, since: datetime
    ) -> Sequence[Checkout]:
        """Return a participant's check-outs discarded after ``since``, not checked in."""
        async with self._connections.read(scope.tenant_id) as connection:
            rows = await connection.execute(
                _RECORD.where(
                    CheckoutRow.tenant_id == scope.tenant_id,
                    CheckoutRow.workspace_id == scope.workspace_id,
                    CheckoutRow.artifact_id == artifact_id,
                    CheckoutRow.state == "discarded",
                    CheckoutRow.outcome.is_(None),
                    CheckoutRow.ended_at > since,
                ).order_by(CheckoutRow.created_at.desc(), CheckoutRow.id.desc())
            )
            found = [_checkout(row) for row in rows]
        return [record for record in found if record.actor.participant == participant]

    @finished
    async def with_lock(self, scope: Scope, artifact_id: str, lock: str) -> Checkout | None:
        """Return the newest check-out of an artifact whose lock is ``lock``, open or ended."""
        async with self._connections.read(scope.tenant_id) as connection:
            rows = await connection.execute(
                _RECORD.where(
                    CheckoutRow.tenant_id == scope.tenant_id,
                    CheckoutRow.workspace_id == scope.workspace_id,
                    CheckoutRow.artifact_id == artifact_id,
                    CheckoutRow.lock == lock,
                )
                .order_by(CheckoutRow.created_at.desc(), CheckoutRow.id.desc())
                .limit(1)
            )
            row = rows.one_or_none()
            return None if row is None else _checkout(row)


def _record(scope: Scope, checkout_id: str) -> tuple[ColumnElement[bool], ...]:
    return (
        CheckoutRow.tenant_id == scope.tenant_id,
        CheckoutRow.workspace_id == scope.workspace_id,
        CheckoutRow.id == checkout_id,
    )


def _end(scope: Scope, checkout_id: str, state: Ended, by: Actor, at: datetime) -> Any:
    return (
        update(CheckoutRow)
        .where(*_record(scope, checkout_id), CheckoutRow.state == "open")
        .values(
            state=state, ended_by=_ACTOR.dump_python(by, mode="json"), ended_at=at, expires_at=at
        )
    )


async def _read(connection: AsyncConnection, scope: Scope, checkout_id: str) -> Checkout | None:
    found = await connection.execute(_RECORD.where(*_record(scope, checkout_id)))
    row = found.one_or_none()
    return None if row is None else _checkout(row)


def _values(checkout: Checkout) -> dict[str, Any]:
    outcome = checkout.outcome
    ended_by = checkout.ended_by
    return {
        "artifact_id": checkout.artifact_id,
        "base_version": checkout.base_version,
        "base_sha256": checkout.base_sha256,
        "actor": _ACTOR.dump_python(checkout.actor, mode="json"),
        "expires_at": checkout.expires_at,
        "state": checkout.state,
        "ended_by": None if ended_by is None else _ACTOR.dump_python(ended_by, mode="json"),
        "ended_at": checkout.ended_at,
        "outcome": None if outcome is None else outcome.status,
        "outcome_version": None if outcome is None else outcome.version,
        "proposal_id": None if outcome is None else outcome.proposal_id,
        "fingerprint": None if outcome is None else outcome.fingerprint,
        "claim": checkout.claim,
        "claimed_until": checkout.claimed_until,
        "lock": checkout.lock,
    }


_RECORD = select(
    CheckoutRow.id,
    CheckoutRow.artifact_id,
    CheckoutRow.base_version,
    CheckoutRow.base_sha256,
    CheckoutRow.actor,
    CheckoutRow.expires_at,
    CheckoutRow.state,
    CheckoutRow.ended_by,
    CheckoutRow.ended_at,
    CheckoutRow.outcome,
    CheckoutRow.outcome_version,
    CheckoutRow.proposal_id,
    CheckoutRow.fingerprint,
    CheckoutRow.claim,
    CheckoutRow.claimed_until,
    CheckoutRow.lock,
)
"""A check-out record's columns, as :func:`_checkout` reads them."""


def _checkout(row: Row[*tuple[Any, ...]]) -> Checkout:
    outcome = None
    if row.outcome is not None:
        outcome = Outcome(
            status=row.outcome,
            version=row.outcome_version,
            proposal_id=row.proposal_id,
            fingerprint=row.fingerprint,
        )
    actor: Any = row.actor
    ended_by: Any = row.ended_by
    return Checkout(
        id=row.id,
        artifact_id=row.artifact_id,
        base_version=row.base_version,
        base_sha256=row.base_sha256,
        actor=_ACTOR.validate_python(actor),
        expires_at=row.expires_at,
        state=row.state,
        ended_by=None if ended_by is None else _ACTOR.validate_python(ended_by),
        ended_at=row.ended_at,
        outcome=outcome,
        claim=row.claim,
        claimed_until=row.claimed_until,
        lock=row.lock,
    )
