"""SQL history: one revision by its key, a page by an index range (ADR-0026).

The one place this package reads tables of artifactr's, through the mapped rows of artifactr's
public ``artifactr.sql`` extra: ``artifactr_revisions`` (keyed by the tenant, the workspace, the
artifact and the version), the log's ``artifactr_events`` for a file's dates,
``artifactr_proposals`` for a file's pending proposals, the log's resolutions for its decided
ones, and ``artifactr_artifacts`` for a page of
the workspace's files, by its ``position`` index, in artifactr's listing order. Each row is
validated as artifactr's own storage validates it, and shown as the workspace shows it to the
actor (artifactr's ``seen_*`` rules). Each read is one statement in a tenant's transaction (a
page of files is two: its rows and their count).

WebDAV's names are the package's own table, ``artifactr_files_dav_names``, kept from the log: a
read of a name first asks the log for an artifact's creation, change or archiving past the
table's mark (one statement, nothing in the steady state), and only then updates the names, in
one transaction that holds the mark's row. A file keeps its name until it is renamed or archived.
"""

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Final, cast

from artifactr.core import (
    ArtifactChanged,
    ArtifactCreated,
    Envelope,
    Proposal,
    ProposalCreated,
    Revision,
    Versioned,
    artifact_types,
    load_versioned,
)
from artifactr.core.visibility import seen, seen_artifact, seen_proposal, seen_revision
from artifactr.sql.tables import ArtifactRow, EventRow, ProposalRow, RevisionRow
from artifactr.workspace import Access, Workspace
from sqlalchemy import (
    ColumnElement,
    Row,
    Select,
    and_,
    delete,
    false,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from artifactr.files.core.history import (
    PAGE,
    READ_ARTIFACTS,
    READ_EVENTS,
    READ_PROPOSALS,
    Dates,
    Decision,
    FilePage,
    dav_name,
    decision_of,
    numbered,
)
from artifactr.files.core.manifests import NativeFile
from artifactr.files.sql._connections import TenantConnections, finished, upsert_into
from artifactr.files.sql.tables import DavMarkRow, DavNameRow

MADE_BATCH: Final = 4_000
"""How many files one statement of :meth:`SqlHistory.made` dates: two parameters each."""

REVISIONS_BATCH: Final = 500
"""How many files' revisions one statement of :meth:`SqlHistory.revisions` reads."""

NAMES_BATCH: Final = 500
"""How many files or names one statement reads while WebDAV's names are brought up to date."""

NAMES_AHEAD: Final = 16
"""How many numbered names (``a (2).docx``...) one statement asks about for a taken name."""

NAMING: Final = ("artifact_created", "artifact_changed", "artifact_archived")
"""The log's events that can give a file a name, change it or free it."""


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
        if body is None:
            return None
        return seen_revision(Revision.model_validate(body), await ws.hidden())

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
        hidden = await ws.hidden()
        return [seen_revision(Revision.model_validate(body), hidden) for body in bodies]

    @finished
    async def files(self, ws: Workspace, *, start: int = 0, limit: int = PAGE) -> FilePage:
        """Return a page of the workspace's native files: two statements, a page and a count.

        The page is read by artifactr's ``position`` index (its listing order), the count by
        the same conditions; neither sends the other files' rows.

        Raises:
            Forbidden: If the actor may not read the workspace's artifacts.
        """
        await ws.check(Access(action=READ_ARTIFACTS))
        hidden = await ws.hidden()
        kinds = sorted(k for k, t in artifact_types().items() if issubclass(t, NativeFile))
        shown: list[ColumnElement[bool]] = [
            ArtifactRow.tenant_id == ws.tenant_id,
            ArtifactRow.workspace_id == ws.workspace_id,
            ArtifactRow.kind.in_(kinds),
            ArtifactRow.archived.is_(False),
        ]
        if hidden.artifacts:
            shown.append(ArtifactRow.id.not_in(sorted(hidden.artifacts)))
        query = (
            select(
                ArtifactRow.id,
                ArtifactRow.kind,
                ArtifactRow.version,
                ArtifactRow.data,
                ArtifactRow.updated_by,
            )
            .where(*shown)
            .order_by(ArtifactRow.position)
            .offset(start)
            .limit(limit)
        )
        async with self._connections.read(ws.tenant_id) as connection:
            count = select(func.count()).select_from(ArtifactRow).where(*shown)
            total = await connection.scalar(count) or 0
            rows = (await connection.execute(query)).all()
        found: list[Versioned[NativeFile]] = []
        for artifact_id, kind, version, data, updated_by in rows:
            loaded = load_versioned(
                id=artifact_id, kind=kind, version=version, data=data, updated_by=updated_by
            )
            found.append(seen_artifact(cast("Versioned[NativeFile]", loaded), hidden))
        return FilePage(found, total)

    @finished
    async def revisions(
        self, ws: Workspace, artifact_ids: Collection[str]
    ) -> dict[str, list[Revision]]:
        """Return these files' revisions, oldest first: a statement per batch of files."""
        found: dict[str, list[Revision]] = {}
        wanted = sorted(artifact_ids)
        async with self._connections.read(ws.tenant_id) as connection:
            for begin in range(0, len(wanted), REVISIONS_BATCH):
                query = (
                    select(RevisionRow.artifact_id, RevisionRow.body)
                    .where(
                        RevisionRow.tenant_id == ws.tenant_id,
                        RevisionRow.workspace_id == ws.workspace_id,
                        RevisionRow.artifact_id.in_(wanted[begin : begin + REVISIONS_BATCH]),
                    )
                    .order_by(RevisionRow.artifact_id, RevisionRow.version)
                )
                for artifact_id, body in (await connection.execute(query)).all():
                    found.setdefault(artifact_id, []).append(Revision.model_validate(body))
        return found

    @finished
    async def dates(
        self,
        ws: Workspace,
        artifact_id: str,
        versions: Collection[int],
        proposals: Collection[str] = (),
    ) -> Dates:
        """Return when versions and proposals were made: one statement over the log's rows.

        Raises:
            Forbidden: If the actor may not read the workspace's log.
        """
        await ws.check(Access(action=READ_EVENTS))
        found = Dates()
        if not versions and not proposals:
            return found
        event = EventRow.envelope
        made = and_(
            EventRow.event_type.in_(["artifact_created", "artifact_changed"]),
            event[("event", "artifact_id")].as_string() == artifact_id,
            event[("event", "version")].as_integer().in_(sorted(versions)),
        )
        proposed = and_(
            EventRow.event_type == "proposal_created",
            event[("event", "proposal_id")].as_string().in_(sorted(proposals)),
        )
        query = select(EventRow.envelope).where(
            EventRow.tenant_id == ws.tenant_id,
            EventRow.workspace_id == ws.workspace_id,
            or_(made if versions else false(), proposed if proposals else false()),
        )
        async with self._connections.read(ws.tenant_id) as connection:
            rows = (await connection.scalars(query)).all()
        for row in rows:
            # Only the time and the summary are shown, of a file the caller has read: nothing
            # a hidden thread would take from the envelope.
            envelope = Envelope.model_validate(row)
            event = envelope.event
            if isinstance(event, ArtifactCreated):
                found.versions[event.version] = (envelope.ts, "uploaded")
            elif isinstance(event, ArtifactChanged):
                found.versions[event.version] = (envelope.ts, event.summary)
            else:
                assert isinstance(event, ProposalCreated)
                found.proposals[event.proposal_id] = envelope.ts
        return found

    @finished
    async def made(
        self, ws: Workspace, heads: Mapping[str, int]
    ) -> dict[str, tuple[datetime, datetime]]:
        """Return when files were created and their heads made: a statement a batch of files.

        Each statement reads the files' creations and their heads' changes alone, by the
        events' artifact and version, never the rest of the log.

        Raises:
            Forbidden: If the actor may not read the workspace's log.
        """
        await ws.check(Access(action=READ_EVENTS))
        event = EventRow.envelope
        artifact = event[("event", "artifact_id")].as_string()
        version = event[("event", "version")].as_string()
        created: dict[str, datetime] = {}
        modified: dict[str, datetime] = {}
        wanted = sorted(heads.items())
        async with self._connections.read(ws.tenant_id) as connection:
            for start in range(0, len(wanted), MADE_BATCH):
                batch = wanted[start : start + MADE_BATCH]
                query = select(EventRow.envelope).where(
                    EventRow.tenant_id == ws.tenant_id,
                    EventRow.workspace_id == ws.workspace_id,
                    or_(
                        and_(
                            EventRow.event_type == "artifact_created",
                            artifact.in_([aid for aid, _ in batch]),
                        ),
                        and_(
                            EventRow.event_type == "artifact_changed",
                            # One value a head, not a pair: PostgreSQL hashes a list of
                            # values but compares a list of pairs one by one, row by row.
                            (artifact + literal(":") + version).in_(
                                [f"{aid}:{head}" for aid, head in batch]
                            ),
                        ),
                    ),
                )
                for row in (await connection.scalars(query)).all():
                    envelope = Envelope.model_validate(row)
                    made = envelope.event
                    assert isinstance(made, ArtifactCreated | ArtifactChanged)
                    if isinstance(made, ArtifactCreated):
                        created[made.artifact_id] = envelope.ts
                    if made.version == heads[made.artifact_id]:
                        modified[made.artifact_id] = envelope.ts
        return {aid: (made, modified.get(aid, made)) for aid, made in created.items()}

    @finished
    async def pending(self, ws: Workspace, artifact_id: str) -> list[Proposal]:
        """Return the file's pending proposals, oldest first: one statement.

        Raises:
            Forbidden: If the actor may not read proposals.
        """
        await ws.check(Access(action=READ_PROPOSALS))
        query = (
            select(ProposalRow.body)
            .where(
                ProposalRow.tenant_id == ws.tenant_id,
                ProposalRow.workspace_id == ws.workspace_id,
                ProposalRow.status == "pending",
                ProposalRow.body[("change", "artifact_id")].as_string() == artifact_id,
            )
            .order_by(ProposalRow.position)
        )
        async with self._connections.read(ws.tenant_id) as connection:
            bodies = (await connection.scalars(query)).all()
        hidden = await ws.hidden()
        shown = (seen_proposal(Proposal.model_validate(body), hidden) for body in bodies)
        return [proposal for proposal in shown if proposal is not None]

    @finished
    async def decisions(
        self,
        ws: Workspace,
        artifact_id: str,
        proposals: Collection[str] | None = None,
        *,
        limit: int = PAGE,
    ) -> list[Decision]:
        """Return the file's decided proposals, newest first: one statement over the log's rows.

        It reads the file's ``proposal_resolved`` events alone: those named, or the newest
        ``limit``. See :meth:`~artifactr.files.core.history.History.decisions`.

        Raises:
            Forbidden: If the actor may not read the workspace's log.
        """
        await ws.check(Access(action=READ_EVENTS))
        if proposals is not None and not proposals:
            return []
        event = EventRow.envelope
        query = select(EventRow.envelope).where(
            EventRow.tenant_id == ws.tenant_id,
            EventRow.workspace_id == ws.workspace_id,
            EventRow.event_type == "proposal_resolved",
            event[("event", "artifact_id")].as_string() == artifact_id,
        )
        if proposals is not None:
            query = query.where(event[("event", "proposal_id")].as_string().in_(sorted(proposals)))
        query = query.order_by(EventRow.seq.desc()).limit(limit if proposals is None else None)
        async with self._connections.read(ws.tenant_id) as connection:
            rows = (await connection.scalars(query)).all()
        hidden = await ws.hidden()
        shown = (seen(Envelope.model_validate(row), hidden) for row in rows)
        return [decision_of(envelope) for envelope in shown if envelope is not None]

    @finished
    async def names(self, ws: Workspace) -> dict[str, str]:
        """Return every live native file's WebDAV name, by id: one statement once up to date.

        See :meth:`~artifactr.files.core.history.History.names`.

        Raises:
            Forbidden: If the actor may not read the workspace's artifacts.
        """
        await ws.check(Access(action=READ_ARTIFACTS))
        query = select(DavNameRow.artifact_id, DavNameRow.name).where(*_names_of(ws))
        return dict(await self._named_to_date(ws, query))

    @finished
    async def named(self, ws: Workspace, name: str) -> tuple[str, str] | None:
        """Return the file WebDAV names ``name``: one row, by the unique index of names.

        See :meth:`~artifactr.files.core.history.History.named`.

        Raises:
            Forbidden: If the actor may not read the workspace's artifacts.
        """
        await ws.check(Access(action=READ_ARTIFACTS))
        query = select(DavNameRow.artifact_id, DavNameRow.name).where(
            *_names_of(ws), DavNameRow.folded == name.casefold()
        )
        return next(((aid, own) for aid, own in await self._named_to_date(ws, query)), None)

    async def _named_to_date(
        self, ws: Workspace, query: Select[str, str]
    ) -> Sequence[Row[str, str]]:
        """Return what ``query`` reads of the names, brought up to the workspace's log first.

        Two statements on one connection when nothing naming is new in the log.
        """
        async with self._connections.read(ws.tenant_id) as connection:
            newer = await connection.scalar(_naming_since(ws, _mark_of(ws)).limit(1))
            if newer is None:
                return (await connection.execute(query)).all()
        async with self._connections.begin(ws.tenant_id) as connection:
            await _rename(connection, ws)
            return (await connection.execute(query)).all()


def _names_of(ws: Workspace) -> tuple[ColumnElement[bool], ...]:
    return (DavNameRow.tenant_id == ws.tenant_id, DavNameRow.workspace_id == ws.workspace_id)


def _mark_of(ws: Workspace) -> ColumnElement[int]:
    """The workspace's mark, as SQL: -1 while it has none (its names not yet made)."""
    mark = select(DavMarkRow.seq).where(
        DavMarkRow.tenant_id == ws.tenant_id, DavMarkRow.workspace_id == ws.workspace_id
    )
    return func.coalesce(mark.scalar_subquery(), -1)


def _naming_since(ws: Workspace, mark: ColumnElement[int] | int) -> Select[int, str]:
    """The log's naming events past ``mark``: their ``seq`` and artifact, in order."""
    artifact: ColumnElement[str] = EventRow.envelope[("event", "artifact_id")].as_string()
    return (
        select(EventRow.seq, artifact)
        .where(
            EventRow.tenant_id == ws.tenant_id,
            EventRow.workspace_id == ws.workspace_id,
            EventRow.event_type.in_(NAMING),
            EventRow.seq > mark,
        )
        .order_by(EventRow.seq)
    )


async def _rename(connection: AsyncConnection, ws: Workspace) -> None:
    """Give names to the files created or renamed since the mark, free the archived ones'.

    Holds the mark's row to the end of the transaction, so two requests never name at once;
    the second finds nothing left to do. New names are given in the files' creation order,
    each the first of its numbered names (``a (2).docx``) no other file holds.
    """
    scope = (DavMarkRow.tenant_id == ws.tenant_id, DavMarkRow.workspace_id == ws.workspace_id)
    start = upsert_into(DavMarkRow, connection.dialect.name).values(
        tenant_id=ws.tenant_id, workspace_id=ws.workspace_id, seq=-1
    )
    await connection.execute(start.on_conflict_do_nothing())
    mark = (
        await connection.execute(select(DavMarkRow.seq).where(*scope).with_for_update())
    ).scalar_one()
    # Read again under the mark's row: a request that named them meanwhile leaves none.
    events = (await connection.execute(_naming_since(ws, mark))).all()
    touched = sorted({artifact_id for _, artifact_id in events})
    kinds = sorted(k for k, t in artifact_types().items() if issubclass(t, NativeFile))
    live: dict[str, tuple[int, str]] = {}
    had: dict[str, str] = {}
    for batch in _batches(touched):
        rows = await connection.execute(
            select(
                ArtifactRow.id, ArtifactRow.position, ArtifactRow.data["name"].as_string()
            ).where(
                ArtifactRow.tenant_id == ws.tenant_id,
                ArtifactRow.workspace_id == ws.workspace_id,
                ArtifactRow.id.in_(batch),
                ArtifactRow.kind.in_(kinds),
                ArtifactRow.archived.is_(False),
            )
        )
        live.update((aid, (position, dav_name(name))) for aid, position, name in rows)
        known = await connection.execute(
            select(DavNameRow.artifact_id, DavNameRow.base).where(
                *_names_of(ws), DavNameRow.artifact_id.in_(batch)
            )
        )
        had.update((aid, base) for aid, base in known)
    gone = sorted(aid for aid, base in had.items() if live.get(aid, (0, None))[1] != base)
    for batch in _batches(gone):
        await connection.execute(
            delete(DavNameRow).where(*_names_of(ws), DavNameRow.artifact_id.in_(batch))
        )
    fresh = sorted(
        (position, aid, base) for aid, (position, base) in live.items() if had.get(aid) != base
    )
    naming = _Naming(connection, ws)
    for batch in _batches(sorted({base.casefold() for _, _, base in fresh})):
        await naming.ask(batch)
    given = [
        {**_scope_values(ws), "artifact_id": aid, "base": base, **_named(await naming.give(base))}
        for _, aid, base in fresh
    ]
    for begin in range(0, len(given), NAMES_BATCH):
        await connection.execute(insert(DavNameRow), given[begin : begin + NAMES_BATCH])
    last = max((seq for seq, _ in events), default=mark)
    await connection.execute(update(DavMarkRow).where(*scope).values(seq=last))


class _Naming:
    """The names taken in a workspace, asked of the table as a new name needs them."""

    def __init__(self, connection: AsyncConnection, ws: Workspace) -> None:
        self._connection = connection
        self._ws = ws
        self._asked: set[str] = set()
        self._taken: set[str] = set()

    async def ask(self, folded: Sequence[str]) -> None:
        """Learn which of these casefolded names are taken: one statement."""
        found = await self._connection.scalars(
            select(DavNameRow.folded).where(*_names_of(self._ws), DavNameRow.folded.in_(folded))
        )
        self._taken.update(found)
        self._asked.update(folded)

    async def give(self, base: str) -> str:
        """Return the first of ``base``'s numbered names not taken, now taken."""
        number = 1
        while True:
            name = numbered(base, number)
            if name.casefold() not in self._asked:
                await self.ask(
                    [numbered(base, n).casefold() for n in range(number, number + NAMES_AHEAD)]
                )
            if name.casefold() not in self._taken:
                self._taken.add(name.casefold())
                return name
            number += 1


def _batches(items: Sequence[str]) -> list[Sequence[str]]:
    return [items[begin : begin + NAMES_BATCH] for begin in range(0, len(items), NAMES_BATCH)]


def _scope_values(ws: Workspace) -> dict[str, str]:
    return {"tenant_id": ws.tenant_id, "workspace_id": ws.workspace_id}


def _named(name: str) -> dict[str, str]:
    return {"name": name, "folded": name.casefold()}
