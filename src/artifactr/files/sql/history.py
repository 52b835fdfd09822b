"""SQL history: one revision by its key, a page by an index range (ADR-0026).

The one place this package reads a table of artifactr's: ``artifactr_revisions``, whose primary
key is the tenant, the workspace, the artifact and the version, through the mapped
:class:`artifactr.sql.tables.RevisionRow` of artifactr's public ``artifactr.sql`` extra. A row's
``body`` is the :class:`~artifactr.core.Revision` artifactr wrote, validated here as artifactr's
own storage validates it. Each read is one statement in a tenant's transaction.
"""

from artifactr.core import Revision
from artifactr.sql.tables import RevisionRow
from artifactr.workspace import Workspace
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.history import PAGE
from artifactr.files.sql._connections import TenantConnections, finished


class SqlHistory:
    """A file's revisions, read from artifactr's table (the SQL History port).

    See :class:`~artifactr.files.core.history.History`.

    Args:
        engine: The database artifactr's :class:`~artifactr.sql.SqlStorage` writes. It is not
            disposed of here.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._connections = TenantConnections(engine)

    @finished
    async def revision(self, ws: Workspace, artifact_id: str, version: int) -> Revision | None:
        """Return the revision at ``version``, or None: one row, by its key."""
        query = select(RevisionRow.body).where(
            RevisionRow.tenant_id == ws.tenant_id,
            RevisionRow.workspace_id == ws.workspace_id,
            RevisionRow.artifact_id == artifact_id,
            RevisionRow.version == version,
        )
        async with self._connections.read(ws.tenant_id) as connection:
            body = await connection.scalar(query)
        return None if body is None else Revision.model_validate(body)

    @finished
    async def page(
        self, ws: Workspace, artifact_id: str, *, before: int | None = None, limit: int = PAGE
    ) -> list[Revision]:
        """Return up to ``limit`` revisions older than ``before``, newest first: one statement."""
        query = select(RevisionRow.body).where(
            RevisionRow.tenant_id == ws.tenant_id,
            RevisionRow.workspace_id == ws.workspace_id,
            RevisionRow.artifact_id == artifact_id,
        )
        if before is not None:
            query = query.where(RevisionRow.version < before)
        query = query.order_by(RevisionRow.version.desc()).limit(limit)
        async with self._connections.read(ws.tenant_id) as connection:
            bodies = (await connection.scalars(query)).all()
        return [Revision.model_validate(body) for body in bodies]
