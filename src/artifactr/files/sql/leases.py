"""SQL leases: one writer at a time on a native file, across processes (RFC-0003).

One row per artifact holds the holder and the expiry. Acquiring is one atomic statement: insert
the row, or take it over only from the same holder or an expired lease; no row back means busy.
The time is the database's unless a clock is passed; expiries are aware UTC.
"""

from datetime import timedelta

from artifactr.workspace import Scope
from sqlalchemy import ColumnElement, delete, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.clock import Clock
from artifactr.files.core.leases import ArtifactLease
from artifactr.files.sql._connections import TenantConnections, finished, upsert_into
from artifactr.files.sql.tables import LeaseRow


class SqlLeases:
    """Leases on artifacts in a SQL database; see :class:`artifactr.files.core.leases.Leases`.

    Args:
        engine: The database. It is not disposed of here.
        clock: Replaces the database's clock when given.
    """

    def __init__(self, engine: AsyncEngine, *, clock: Clock | None = None) -> None:
        self._connections = TenantConnections(engine, clock)
        self._dialect = engine.dialect.name

    @finished
    async def acquire(
        self, scope: Scope, artifact_id: str, holder: str, ttl: timedelta
    ) -> ArtifactLease | None:
        """Take or renew the lease for ``ttl`` from now; return it, or None if it is busy.

        One statement: it inserts the lease, or takes the row over if ``holder`` has it or it
        has expired, and says when the lease now ends; a live lease of another holder stays.
        """
        taken = upsert_into(LeaseRow, self._dialect).values(
            tenant_id=scope.tenant_id,
            workspace_id=scope.workspace_id,
            artifact_id=artifact_id,
            holder=holder,
            expires_at=self._connections.stamp_after(ttl),
        )
        taken = taken.on_conflict_do_update(
            index_elements=[LeaseRow.tenant_id, LeaseRow.workspace_id, LeaseRow.artifact_id],
            set_={"holder": taken.excluded.holder, "expires_at": taken.excluded.expires_at},
            where=or_(LeaseRow.holder == holder, LeaseRow.expires_at <= self._connections.stamp()),
        )
        async with self._connections.begin(scope.tenant_id) as connection:
            expires_at = await connection.scalar(taken.returning(LeaseRow.expires_at))
        if expires_at is None:
            return None
        return ArtifactLease(artifact_id=artifact_id, holder=holder, expires_at=expires_at)

    @finished
    async def current(self, scope: Scope, artifact_id: str) -> ArtifactLease | None:
        """Return the live lease, or None if there is none or it has expired."""
        async with self._connections.read(scope.tenant_id) as connection:
            now = await self._connections.now(connection)
            found = await connection.execute(
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
    async def live(self, scope: Scope) -> dict[str, ArtifactLease]:
        """Return the scope's live leases by artifact id, in one statement."""
        live = select(LeaseRow.artifact_id, LeaseRow.holder, LeaseRow.expires_at).where(
            LeaseRow.tenant_id == scope.tenant_id,
            LeaseRow.workspace_id == scope.workspace_id,
            LeaseRow.expires_at > self._connections.stamp(),
        )
        async with self._connections.read(scope.tenant_id) as connection:
            rows = (await connection.execute(live)).all()
        return {
            artifact_id: ArtifactLease(artifact_id=artifact_id, holder=holder, expires_at=expires)
            for artifact_id, holder, expires in rows
        }

    @finished
    async def release(self, scope: Scope, artifact_id: str, holder: str) -> bool:
        """End the lease if ``holder`` holds it, expired or not; return whether it did."""
        async with self._connections.begin(scope.tenant_id) as connection:
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
