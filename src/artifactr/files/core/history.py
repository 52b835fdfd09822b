"""History: one revision of a file by its version, and its revisions a page at a time (ADR-0026).

artifactr's :class:`~artifactr.workspace.Workspace` answers a file's revisions only all at once,
so a read of one old version, or of a page of a long history, would read every revision. The
:class:`History` port reads just what a request shows. :class:`WorkspaceHistory` answers through
the workspace (in memory, where a whole list costs no statement); the SQL adapter,
:class:`artifactr.files.sql.SqlHistory`, reads artifactr's revisions table by its key.

The port reads after the caller has read the file through its workspace: access and visibility
are the workspace's, checked there first.
"""

from typing import Final, Protocol

from artifactr.core import Revision
from artifactr.workspace import Workspace

PAGE: Final = 50
"""How many revisions a page of history holds unless told otherwise."""


class History(Protocol):
    """A file's revisions, read one or a page at a time."""

    async def revision(self, ws: Workspace, artifact_id: str, version: int) -> Revision | None:
        """Return the revision at ``version``, or None if there is none."""
        ...

    async def page(
        self, ws: Workspace, artifact_id: str, *, before: int | None = None, limit: int = PAGE
    ) -> list[Revision]:
        """Return up to ``limit`` revisions older than ``before`` (all if None), newest first."""
        ...


class WorkspaceHistory:
    """History read through the workspace: every revision, then the ones asked for.

    Bounded in statements only where the workspace's storage keeps revisions in memory; on SQL
    use :class:`artifactr.files.sql.SqlHistory`.
    """

    async def revision(self, ws: Workspace, artifact_id: str, version: int) -> Revision | None:
        """Return one revision; see :meth:`History.revision`."""
        for revision in await ws.revisions(artifact_id):
            if revision.version == version:
                return revision
        return None

    async def page(
        self, ws: Workspace, artifact_id: str, *, before: int | None = None, limit: int = PAGE
    ) -> list[Revision]:
        """Return a page of revisions, newest first; see :meth:`History.page`."""
        older = [
            revision
            for revision in reversed(await ws.revisions(artifact_id))
            if before is None or revision.version < before
        ]
        return older[:limit]
