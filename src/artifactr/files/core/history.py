"""History: one revision of a file by its version, and its revisions a page at a time (ADR-0026).

artifactr's :class:`~artifactr.workspace.Workspace` answers a file's revisions only all at once,
so a read of one old version, or of a page of a long history, would read every revision. The
:class:`History` port reads just what a request shows. :class:`WorkspaceHistory` answers through
the workspace (in memory, where a whole list costs no statement); the SQL adapter,
:class:`artifactr.files.sql.SqlHistory`, reads artifactr's revisions table by its key.

The port reads after the caller has read the file through its workspace: whether the file is
there and visible is the workspace's, checked there first. The port checks the read it makes
(the log's, the proposals') as the workspace would, and shows what it reads as the workspace
shows it to the actor. It also dates a file's versions and proposals without reading the whole
log, and lists a file's pending proposals without every other file's.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Protocol

from artifactr.core import ArtifactChanged, ArtifactCreated, Proposal, ProposalCreated, Revision
from artifactr.workspace import Workspace

PAGE: Final = 50
"""How many revisions a page of history holds unless told otherwise."""


READ_EVENTS: Final = "artifactr:read_events"
"""The action a read of dates asks, as a read of the log does."""

READ_PROPOSALS: Final = "artifactr:read_proposals"
"""The action a read of a file's proposals asks, as the workspace's list does."""


@dataclass(frozen=True)
class Dates:
    """When a file's versions and proposals were made, as the workspace's log says."""

    versions: dict[int, tuple[datetime, str]] = field(
        default_factory=dict[int, tuple[datetime, str]]
    )
    """Each version's time and summary ("uploaded" for the first)."""
    proposals: dict[str, datetime] = field(default_factory=dict[str, datetime])
    """Each proposal's time."""


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

    async def dates(
        self,
        ws: Workspace,
        artifact_id: str,
        versions: Collection[int],
        proposals: Collection[str] = (),
    ) -> Dates:
        """Return when these versions of the file and these proposals were made.

        Raises:
            Forbidden: If the actor may not read the workspace's log.
        """
        ...

    async def made(
        self, ws: Workspace, heads: Mapping[str, int]
    ) -> dict[str, tuple[datetime, datetime]]:
        """Return when each file was created and when its head (``heads[id]``) was made.

        Exact at any age of the log. A file the log doesn't name is left out.

        Raises:
            Forbidden: If the actor may not read the workspace's log.
        """
        ...

    async def pending(self, ws: Workspace, artifact_id: str) -> list[Proposal]:
        """Return the file's pending proposals, oldest first, as the workspace lists them.

        Raises:
            Forbidden: If the actor may not read proposals.
        """
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

    async def dates(
        self,
        ws: Workspace,
        artifact_id: str,
        versions: Collection[int],
        proposals: Collection[str] = (),
    ) -> Dates:
        """Return when versions and proposals were made; see :meth:`History.dates`."""
        found = Dates()
        for envelope in await ws.read():
            match envelope.event:
                case ArtifactCreated(artifact_id=artifact, version=version) if (
                    artifact == artifact_id and version in versions
                ):
                    found.versions[version] = (envelope.ts, "uploaded")
                case ArtifactChanged(artifact_id=artifact, version=version, summary=summary) if (
                    artifact == artifact_id and version in versions
                ):
                    found.versions[version] = (envelope.ts, summary)
                case ProposalCreated(proposal_id=proposal_id) if proposal_id in proposals:
                    found.proposals[proposal_id] = envelope.ts
                case _:
                    pass
        return found

    async def made(
        self, ws: Workspace, heads: Mapping[str, int]
    ) -> dict[str, tuple[datetime, datetime]]:
        """Return when files were created and their heads made; see :meth:`History.made`."""
        created: dict[str, datetime] = {}
        modified: dict[str, datetime] = {}
        for envelope in await ws.read():
            event = envelope.event
            if isinstance(event, ArtifactCreated | ArtifactChanged) and event.artifact_id in heads:
                if isinstance(event, ArtifactCreated):
                    created[event.artifact_id] = envelope.ts
                if event.version == heads[event.artifact_id]:
                    modified[event.artifact_id] = envelope.ts
        return {aid: (made, modified.get(aid, made)) for aid, made in created.items()}

    async def pending(self, ws: Workspace, artifact_id: str) -> list[Proposal]:
        """Return the file's pending proposals; see :meth:`History.pending`."""
        return [p for p in await ws.proposals() if p.artifact_id == artifact_id]
