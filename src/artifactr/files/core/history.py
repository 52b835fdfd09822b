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
log, and lists a file's pending proposals without every other file's, and its decided proposals
(who wrote each, who accepted or rejected it and when) from the log's resolutions (ADR-0035). It
reads the workspace's files a page at a time (:meth:`History.files`, ADR-0026), and many files'
revisions in one read (:meth:`History.revisions`), for collection. It names the files for WebDAV
(:meth:`History.named`, :meth:`History.names`): each live native file a name unique in its
workspace (any case), its own made unique in the order the files were created (``a (2).docx``).
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Literal, Protocol

from artifactr.core import (
    Actor,
    ArtifactChanged,
    ArtifactCreated,
    Envelope,
    Proposal,
    ProposalCreated,
    ProposalResolved,
    Revision,
    Versioned,
)
from artifactr.workspace import Workspace

from artifactr.files.core.manifests import NativeFile, saved_name

PAGE: Final = 50
"""How many revisions a page of history holds unless told otherwise."""


READ_ARTIFACTS: Final = "artifactr:read_artifacts"
"""The action a page of files asks, as the workspace's list does."""

READ_EVENTS: Final = "artifactr:read_events"
"""The action a read of dates asks, as a read of the log does."""

READ_PROPOSALS: Final = "artifactr:read_proposals"
"""The action a read of a file's proposals asks, as the workspace's list does."""


def dav_name(name: str) -> str:
    """Return a file's name as WebDAV shows it, before it is made unique: clean, no slashes."""
    return saved_name(name).replace("/", "_").replace("\\", "_")


def numbered(name: str, number: int) -> str:
    """Return the ``number``-th name WebDAV tries for a file named ``name``: ``a (2).docx``.

    The first is the name itself; a name without an extension is numbered at its end.
    """
    if number == 1:
        return name
    stem, dot, extension = name.rpartition(".")
    if not dot:
        stem, extension = name, ""
    return f"{stem} ({number}){dot}{extension}"


def unique_name(name: str, taken: Collection[str]) -> str:
    """Return the first of a name's :func:`numbered` names not in ``taken`` (casefolded)."""
    number = 1
    while numbered(name, number).casefold() in taken:
        number += 1
    return numbered(name, number)


@dataclass(frozen=True)
class Dates:
    """When a file's versions and proposals were made, as the workspace's log says."""

    versions: dict[int, tuple[datetime, str]] = field(
        default_factory=dict[int, tuple[datetime, str]]
    )
    """Each version's time and summary ("uploaded" for the first)."""
    proposals: dict[str, datetime] = field(default_factory=dict[str, datetime])
    """Each proposal's time."""


@dataclass(frozen=True)
class FilePage:
    """A page of the workspace's native files, in the order they were created, and how many."""

    files: list[Versioned[NativeFile]]
    """The page's files, oldest first, as :meth:`~artifactr.workspace.Workspace.artifacts`."""
    total: int
    """How many native files the workspace shows the actor, in every page."""


@dataclass(frozen=True)
class Decision:
    """A proposal decided: who wrote it, who accepted or rejected it, and when (the log's)."""

    proposal_id: str
    decision: Literal["accept", "reject"]
    proposed_by: Actor
    """Who wrote it: an agent, a person's client, or a person whose check-in was kept."""
    decided_by: Actor
    """Who accepted or rejected it."""
    at: datetime
    """When it was decided."""
    version: int | None
    """The version accepting it made; None for a rejection."""
    reason: str | None = None
    """What the decider said, if anything."""


def decision_of(envelope: Envelope) -> Decision:
    """Return the decision a ``proposal_resolved`` envelope records."""
    event = envelope.event
    assert isinstance(event, ProposalResolved)
    return Decision(
        proposal_id=event.proposal_id,
        decision=event.decision,
        proposed_by=event.proposed_by,
        decided_by=envelope.actor,
        at=envelope.ts,
        version=event.version,
        reason=event.reason,
    )


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

    async def files(self, ws: Workspace, *, start: int = 0, limit: int = PAGE) -> FilePage:
        """Return up to ``limit`` of the workspace's live native files from ``start``, and all.

        The files are those :meth:`~artifactr.workspace.Workspace.artifacts` lists for
        :class:`NativeFile` (not archived, not hidden), in its order, as it shows them.

        Raises:
            Forbidden: If the actor may not read the workspace's artifacts.
        """
        ...

    async def revisions(
        self, ws: Workspace, artifact_ids: Collection[str]
    ) -> dict[str, list[Revision]]:
        """Return the revisions of these files, oldest first, by file: one read for them all.

        For a caller that sees every artifact (collection), of files it has listed.
        """
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

    async def decisions(
        self,
        ws: Workspace,
        artifact_id: str,
        proposals: Collection[str] | None = None,
        *,
        limit: int = PAGE,
    ) -> list[Decision]:
        """Return the file's decided proposals, newest first, as its log shows them to the actor.

        Those named in ``proposals`` (the ones a page of revisions was accepted from), or the
        newest ``limit`` if None.

        Raises:
            Forbidden: If the actor may not read the workspace's log.
        """
        ...

    async def names(self, ws: Workspace) -> dict[str, str]:
        """Return the WebDAV name of each of the workspace's live native files, by id.

        Unique in the workspace, any case. For a caller that lists the files through the
        workspace, which decides which of them the actor sees.
        """
        ...

    async def named(self, ws: Workspace, name: str) -> tuple[str, str] | None:
        """Return the file WebDAV names ``name`` (any case): its id and its name, or None.

        For a caller that then reads the file through the workspace, which decides whether
        the actor sees it.
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

    async def files(self, ws: Workspace, *, start: int = 0, limit: int = PAGE) -> FilePage:
        """Return a page of the workspace's native files; see :meth:`History.files`."""
        every = await ws.artifacts(NativeFile)
        return FilePage(every[start : start + limit], len(every))

    async def revisions(
        self, ws: Workspace, artifact_ids: Collection[str]
    ) -> dict[str, list[Revision]]:
        """Return these files' revisions; see :meth:`History.revisions`."""
        return {aid: await ws.revisions(aid) for aid in sorted(artifact_ids)}

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

    async def decisions(
        self,
        ws: Workspace,
        artifact_id: str,
        proposals: Collection[str] | None = None,
        *,
        limit: int = PAGE,
    ) -> list[Decision]:
        """Return the file's decided proposals; see :meth:`History.decisions`."""
        found = [
            decision_of(envelope)
            for envelope in reversed(await ws.read())
            if isinstance(envelope.event, ProposalResolved)
            and envelope.event.artifact_id == artifact_id
            and (proposals is None or envelope.event.proposal_id in proposals)
        ]
        return found if proposals is not None else found[:limit]

    async def names(self, ws: Workspace) -> dict[str, str]:
        """Return the files' WebDAV names, made unique in the order the actor lists them."""
        found: dict[str, str] = {}
        taken: set[str] = set()
        for artifact in await ws.artifacts(NativeFile):
            name = unique_name(dav_name(artifact.data.name), taken)
            taken.add(name.casefold())
            found[artifact.id] = name
        return found

    async def named(self, ws: Workspace, name: str) -> tuple[str, str] | None:
        """Return the file WebDAV names ``name``; see :meth:`History.named`."""
        folded = name.casefold()
        return next(
            ((aid, own) for aid, own in (await self.names(ws)).items() if own.casefold() == folded),
            None,
        )
