"""SQL check-outs: the records of people's check-outs, in ``artifactr_files_checkouts`` (RFC-0003).

A record keeps what a check-in needs and must not take from the upload: the artifact, the base
version and digest it was made from, and who made it. The actor is stored as the JSON of
artifactr's ``Actor`` union and read back as the same model. ``created_at`` is the database's
time; it orders the open check-outs, oldest first.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from artifactr.core import Actor
from artifactr.workspace import Scope
from pydantic import TypeAdapter
from sqlalchemy import ColumnElement, Row, delete, insert, select, update
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.checkouts import Checkout
from artifactr.files.sql._sessions import DatabaseNow, Sessions, finished
from artifactr.files.sql.tables import CheckoutRow

_ACTOR: TypeAdapter[Actor] = TypeAdapter(Actor)


class SqlCheckouts:
    """Check-out records in a SQL database; see :class:`artifactr.files.checkouts.Checkouts`.

    Args:
        engine: The database. It is not disposed of here.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = Sessions(engine)

    @finished
    async def add(self, scope: Scope, checkout: Checkout) -> None:
        """Record a check-out, replacing a record with the same id."""
        async with self._sessions.begin(scope.tenant_id) as connection:
            await connection.execute(delete(CheckoutRow).where(*_record(scope, checkout.id)))
            await connection.execute(
                insert(CheckoutRow).values(
                    tenant_id=scope.tenant_id,
                    workspace_id=scope.workspace_id,
                    id=checkout.id,
                    artifact_id=checkout.artifact_id,
                    base_version=checkout.base_version,
                    base_sha256=checkout.base_sha256,
                    actor=_ACTOR.dump_python(checkout.actor, mode="json"),
                    expires_at=checkout.expires_at,
                    checked_in=checkout.checked_in,
                    created_at=DatabaseNow(),
                )
            )

    @finished
    async def get(self, scope: Scope, checkout_id: str) -> Checkout | None:
        """Return a check-out, or None if there is none."""
        async with self._sessions.read(scope.tenant_id) as connection:
            found = await connection.execute(_RECORD.where(*_record(scope, checkout_id)))
            row = found.one_or_none()
        return None if row is None else _checkout(row)

    @finished
    async def extend(self, scope: Scope, checkout_id: str, expires_at: datetime) -> None:
        """Set a check-out's expiry; a missing one is a no-op."""
        async with self._sessions.begin(scope.tenant_id) as connection:
            await connection.execute(
                update(CheckoutRow)
                .where(*_record(scope, checkout_id))
                .values(expires_at=expires_at)
            )

    @finished
    async def remove(self, scope: Scope, checkout_id: str) -> None:
        """Forget a check-out; a missing one is a no-op."""
        async with self._sessions.begin(scope.tenant_id) as connection:
            await connection.execute(delete(CheckoutRow).where(*_record(scope, checkout_id)))

    @finished
    async def active(self, scope: Scope, *, now: datetime) -> Sequence[Checkout]:
        """Return the scope's open check-outs that expire after ``now``, oldest first."""
        async with self._sessions.read(scope.tenant_id) as connection:
            rows = await connection.execute(
                _RECORD.where(
                    CheckoutRow.tenant_id == scope.tenant_id,
                    CheckoutRow.workspace_id == scope.workspace_id,
                    CheckoutRow.expires_at > now,
                    CheckoutRow.checked_in.is_(False),
                ).order_by(CheckoutRow.created_at, CheckoutRow.id)
            )
            return [_checkout(row) for row in rows]


def _record(scope: Scope, checkout_id: str) -> tuple[ColumnElement[bool], ...]:
    return (
        CheckoutRow.tenant_id == scope.tenant_id,
        CheckoutRow.workspace_id == scope.workspace_id,
        CheckoutRow.id == checkout_id,
    )


_RECORD = select(
    CheckoutRow.id,
    CheckoutRow.artifact_id,
    CheckoutRow.base_version,
    CheckoutRow.base_sha256,
    CheckoutRow.actor,
    CheckoutRow.expires_at,
    CheckoutRow.checked_in,
)
"""A check-out record's columns, as :func:`_checkout` reads them."""


def _checkout(row: Row[str, str, int, str, Any, datetime, bool]) -> Checkout:
    actor: Any = row.actor
    return Checkout(
        id=row.id,
        artifact_id=row.artifact_id,
        base_version=row.base_version,
        base_sha256=row.base_sha256,
        actor=_ACTOR.validate_python(actor),
        expires_at=row.expires_at,
        checked_in=row.checked_in,
    )
