"""SQL leases: one writer at a time on a native file, across processes (RFC-0003).

One row per artifact in ``artifactr_files_leases`` holds the holder and the expiry. Acquiring
is one transaction: update the row where the holder is the same or the lease has expired, else
insert it; an insert that meets an existing row is the answer "busy". Each step is atomic on
PostgreSQL (row locks and the primary key) and on SQLite (one writer at a time), so two
processes never both hold a lease.

The time is the database's, so processes need not agree on the clock; a clock passed in
replaces it (tests move time with one). Expiries are timezone-aware UTC.
"""

from datetime import timedelta

from artifactr.workspace import Scope
from sqlalchemy import ColumnElement, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.blobs import Clock
from artifactr.files.leases import ArtifactLease
from artifactr.files.sql._sessions import Sessions, finished
from artifactr.files.sql.tables import LeaseRow


class SqlLeases:
    """Leases on artifacts in a SQL database; see :class:`artifactr.files.leases.Leases`.

    Args:
        engine: The database. It is not disposed of here.
        clock: Replaces the database's clock when given.
    """

    def __init__(self, engine: AsyncEngine, *, clock: Clock | None = None) -> None:
        self._sessions = Sessions(engine, clock)

    @finished
    async def acquire(
        self, scope: Scope, artifact_id: str, holder: str, ttl: timedelta
    ) -> ArtifactLease | None:
        """Take or renew the lease for ``ttl`` from now; return it, or None if it is busy."""
        try:
            async with self._sessions(scope.tenant_id) as session, session.begin():
                connection = await session.connection()
                now = await self._sessions.now(session)
                lease = ArtifactLease(artifact_id=artifact_id, holder=holder, expires_at=now + ttl)
                renewed = await connection.execute(
                    update(LeaseRow)
                    .where(
                        *_lease(scope, artifact_id),
                        or_(LeaseRow.holder == holder, LeaseRow.expires_at <= now),
                    )
                    .values(holder=holder, expires_at=lease.expires_at)
                )
                if renewed.rowcount == 0:
                    await connection.execute(
                        insert(LeaseRow).values(
                            tenant_id=scope.tenant_id,
                            workspace_id=scope.workspace_id,
                            artifact_id=artifact_id,
                            holder=holder,
                            expires_at=lease.expires_at,
                        )
                    )
        except IntegrityError:
            # Another holder's lease is live, or another process took the free one first.
            return None
        return lease

    @finished
    async def current(self, scope: Scope, artifact_id: str) -> ArtifactLease | None:
        """Return the live lease, or None if there is none or it has expired."""
        async with self._sessions(scope.tenant_id) as session:
            now = await self._sessions.now(session)
            found = await session.execute(
                select(LeaseRow.holder, LeaseRow.expires_at).where(
                    *_lease(scope, artifact_id), LeaseRow.expires_at > now
                )
            )
            row = found.one_or_none()
        if row is None:
            return None
        holder, expires_at = row
        return ArtifactLease(artifact_id=artifact_id, holder=holder, expires_at=expires_at)

    @finished
    async def release(self, scope: Scope, artifact_id: str, holder: str) -> bool:
        """End the lease if ``holder`` holds it, expired or not; return whether it did."""
        async with self._sessions(scope.tenant_id) as session, session.begin():
            connection = await session.connection()
            released = await connection.execute(
                delete(LeaseRow).where(*_lease(scope, artifact_id), LeaseRow.holder == holder)
            )
        return released.rowcount > 0


def _lease(scope: Scope, artifact_id: str) -> tuple[ColumnElement[bool], ...]:
    return (
        LeaseRow.tenant_id == scope.tenant_id,
        LeaseRow.workspace_id == scope.workspace_id,
        LeaseRow.artifact_id == artifact_id,
    )
