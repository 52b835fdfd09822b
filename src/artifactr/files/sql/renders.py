"""SQL renders: the cache of rendered pages, on SQLAlchemy (RFC-0003).

A page is cached under its :class:`~artifactr.files.core.renders.RenderKey` (the file's digest,
the page, the scale and the app's build) in the scope it was rendered in.
"""

import contextlib

from sqlalchemy import ColumnElement, delete, insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.core.renders import RenderKey
from artifactr.files.sql._connections import TenantConnections, finished
from artifactr.files.sql.tables import RenderRow


class SqlRenders:
    """Rendered pages in a SQL database, keyed by :class:`~artifactr.files.core.blobs.RenderKey`.

    Args:
        engine: The database. It is not disposed of here.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._connections = TenantConnections(engine)

    @finished
    async def get(self, key: RenderKey) -> bytes | None:
        """Return the cached PNG, or None."""
        async with self._connections.read(key.tenant_id) as connection:
            return await connection.scalar(select(RenderRow.png).where(*_render(key)))

    @finished
    async def put(self, key: RenderKey, png: bytes) -> None:
        """Cache a PNG, replacing any under the same key."""
        # Two renders of one page racing both insert; either PNG will do.
        with contextlib.suppress(IntegrityError):
            async with self._connections.begin(key.tenant_id) as connection:
                await connection.execute(delete(RenderRow).where(*_render(key)))
                await connection.execute(
                    insert(RenderRow).values(
                        tenant_id=key.tenant_id,
                        workspace_id=key.workspace_id,
                        artifact_id=key.artifact_id,
                        sha256=key.sha256,
                        page=key.page,
                        scale=key.scale,
                        build=key.build,
                        png=png,
                    )
                )


def _render(key: RenderKey) -> tuple[ColumnElement[bool], ...]:
    return (
        RenderRow.tenant_id == key.tenant_id,
        RenderRow.workspace_id == key.workspace_id,
        RenderRow.artifact_id == key.artifact_id,
        RenderRow.sha256 == key.sha256,
        RenderRow.page == key.page,
        RenderRow.scale == key.scale,
        RenderRow.build == key.build,
    )
