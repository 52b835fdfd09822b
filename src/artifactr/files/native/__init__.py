"""NativeFiles: the one write path for native files, for agents and people alike (RFC-0003).

Every method takes the caller's :class:`~artifactr.workspace.Workspace` handle first, so access,
hiding and the switch are decided there, as the actor it acts as. A write puts bytes first and
commits after: a failure before the commit commits nothing, and :meth:`NativeFiles.collect`
removes what was put.

- An agent's edit is a batch of the app's commands on a base version, run under a lease of
  seconds (``edit:<uuid>``); it becomes a proposal, as the type's write policy says. A person's
  edit commits.
- A person checks a file out (a lease of hours, ``checkout:<id>:<actor>``), edits it in the
  app, and checks it in from a stream. A check-in equal to the head commits nothing; a stale
  one (its lease lapsed, or another holds it, and someone committed), or one of a check-out
  someone discarded, is kept as a proposal against the head, never a silent overwrite. A
  check-out has one check-in: a retry, at once or later, answers what the first did
  (ADR-0009).
- While the app is off in a workspace (ADR-0006), upload, edit, check-out, extend and check-in
  are refused with :class:`~artifactr.files.core.errors.NotEnabled` before any lease; reads go on.
"""

import asyncio
import json
import tempfile
import uuid
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Iterable, Sequence
from datetime import datetime, timedelta
from typing import IO, Any, Final, Literal

from artifactr.core import (
    Actor,
    Applied,
    EditArtifact,
    Forbidden,
    InvalidState,
    NotFound,
    PatchFailed,
    ProposeChange,
    Proposed,
    ValidationFailed,
    VersionConflict,
    apply_patch,
    new_artifact_id,
    new_id,
)
from artifactr.workspace import Access, Scope, Workspace
from pydantic import BaseModel, ConfigDict, JsonValue, TypeAdapter

from artifactr.files.core import log
from artifactr.files.core.app import (
    EDIT_DEADLINE,
    RENDER_DEADLINE,
    App,
    AppCommand,
    Inspection,
    ReviewItem,
)
from artifactr.files.core.blobs import (
    CHUNK_SIZE,
    Blobs,
    Hashing,
    InMemoryRenders,
    RenderKey,
    Renders,
)
from artifactr.files.core.checkouts import Checkout, Checkouts, Outcome, holder_of
from artifactr.files.core.clock import Clock, utc_now
from artifactr.files.core.errors import AppCrashed, ContentDamaged, NotEnabled, UnsafeFile
from artifactr.files.core.fingerprint import DEFAULT_LIMITS, ZipLimits, fingerprint
from artifactr.files.core.integrations import Integrations
from artifactr.files.core.leases import (
    EDIT_ACTION,
    ArtifactLease,
    Leases,
    artifact_lease,
    hold_artifact,
    scope_of,
)
from artifactr.files.core.manifests import (
    MAX_OUTLINE,
    Blob,
    NativeFile,
    Provenance,
    WordDocument,
    clean_text,
)
from artifactr.files.core.revisions import revision_patch
from artifactr.files.core.telemetry import APP, ARTIFACT_ID, TENANT_ID, WORKSPACE_ID, Telemetry
from artifactr.files.core.visibility import visible

EDIT_TTL: Final = timedelta(seconds=45)
"""How long an agent's edit holds the file: the app's deadline plus the commit."""

CHECKOUT_TTL: Final = timedelta(hours=8)
"""How long a check-out lasts unless extended."""

MAX_SIZE: Final = 512 * 1024 * 1024
"""The largest file accepted by default, in bytes (512 MiB, WordCraft's total-inflated cap)."""

SPOOL_SIZE: Final = 8 * 1024 * 1024
"""How much of an incoming file is held in memory before it spools to disk."""

TEXT: Final = "text/plain; charset=utf-8"
"""The media type of a text blob."""

JSON: Final = "application/json"
"""The media type of a review or command blob."""

MAX_NAME: Final = 255
"""The most characters a file's name may have."""

MAX_ID: Final = 255
"""The most characters an id may have: a longer one names nothing."""

MAX_PAGE: Final = 2**31 - 1
"""The highest page number a render is asked for: what a database's integer holds."""

MIN_SCALE: Final = 0.1
"""The smallest scale a page is rendered at (WordCraft clamps to 0.1 to 4)."""

MAX_SCALE: Final = 4.0
"""The largest scale a page is rendered at."""

SCALE_STEPS: Final = 20
"""A scale is rounded to the nearest 1/SCALE_STEPS (0.05), so a reader can't have one page
rendered, and cached, in more than 79 ways by asking for 1.0, 1.0001, 1.0002..."""

CLAIM_POLL: Final = 0.02
"""How long a check-in first waits, in seconds, for another check-in of its check-out."""

CLAIM_POLL_MAX: Final = 0.2
"""The longest it waits between looks: each wait doubles up to this."""

ARCHIVE_ACTION: Final = "artifactr:archive_artifact"
"""The action asked before breaking someone else's check-out."""

BYTES_IN: Final = "artifactr.files.bytes.in"
"""The span attribute for how many bytes the app was given."""

_REVIEW: Final = TypeAdapter(list[ReviewItem])


class Unchanged(BaseModel):
    """The batch or check-in left the file as it was: no revision was made."""

    model_config = ConfigDict(frozen=True)

    type: Literal["unchanged"] = "unchanged"
    """The outcome's tag."""
    artifact_id: str
    """The artifact."""
    version: int
    """Its version, still the head."""


class CheckedIn(BaseModel):
    """What a check-in did: ``applied`` (a new version), ``unchanged`` or ``proposed``."""

    model_config = ConfigDict(frozen=True)

    status: Literal["applied", "unchanged", "proposed"]
    """Committed, identical to the head, or kept as a proposal because it was stale."""
    artifact_id: str
    """The artifact."""
    version: int
    """The new version (applied), or the head it matched or was proposed against."""
    proposal_id: str | None = None
    """The proposal a stale check-in became."""
    ended_by: Actor | None = None
    """Who discarded the check-out before it was checked in: the check-in was kept as a
    proposal (or was unchanged). None if the check-out was open."""
    ended_at: datetime | None = None
    """When the check-out was discarded; None if it was open."""


class Spooled:
    """An incoming file, hashed and counted as it arrived, held in memory or on disk."""

    def __init__(self, file: IO[bytes], hashing: Hashing) -> None:
        self.file = file
        """The bytes, rewound."""
        self.sha256 = hashing.sha256
        """Their digest."""
        self.size = hashing.size
        """How many."""

    async def chunks(self) -> AsyncIterator[bytes]:
        """Yield the bytes in chunks, from the start."""
        self.file.seek(0)
        while chunk := self.file.read(CHUNK_SIZE):
            yield chunk

    def close(self) -> None:
        """Free the memory or the temporary file."""
        self.file.close()


async def spool(data: AsyncIterable[bytes], *, limit: int) -> Spooled:
    """Take a stream into memory, or disk past :data:`SPOOL_SIZE`, hashing it as it arrives.

    Raises:
        FileTooLarge: If more than ``limit`` bytes arrive.
    """
    file = _spool_file()
    hashing = Hashing(limit)
    try:
        async for chunk in data:
            hashing.update(chunk)
            file.write(chunk)
    except BaseException:
        file.close()
        raise
    file.seek(0)
    return Spooled(file, hashing)


def _spool_file() -> IO[bytes]:
    return tempfile.SpooledTemporaryFile(max_size=SPOOL_SIZE)


class NativeFiles:
    """The service behind every read and write of native files.

    Args:
        blobs: Where bytes live.
        app: The native app that edits, inspects and renders.
        leases: Leases on artifacts.
        checkouts: Check-out records.
        renders: The render cache; in memory if omitted.
        integrations: The app's switch per workspace; every app is on if omitted.
        types: The native kinds it handles, the first for each media type chosen on upload.
        edit_ttl: How long an edit holds the file.
        checkout_ttl: How long a check-out lasts unless extended.
        max_size: The largest file accepted, in bytes.
        limits: The limits a package is screened against before any app sees it.
        deadline: Seconds the app may take to apply or inspect.
        render_deadline: Seconds the app may take to render a page.
        build: The app's build, which render cache keys carry; the app's name if omitted.
        clock: The current time, for collection; UTC now if omitted.
        telemetry: Where spans and metrics go; the global providers if omitted.
    """

    def __init__(
        self,
        *,
        blobs: Blobs,
        app: App,
        leases: Leases,
        checkouts: Checkouts,
        renders: Renders | None = None,
        integrations: Integrations | None = None,
        types: Sequence[type[NativeFile]] = (WordDocument,),
        edit_ttl: timedelta = EDIT_TTL,
        checkout_ttl: timedelta = CHECKOUT_TTL,
        max_size: int = MAX_SIZE,
        limits: ZipLimits = DEFAULT_LIMITS,
        deadline: float = EDIT_DEADLINE,
        render_deadline: float = RENDER_DEADLINE,
        build: str | None = None,
        clock: Clock = utc_now,
        telemetry: Telemetry | None = None,
    ) -> None:
        self.blobs = blobs
        """Where bytes live."""
        self.app = app
        """The native app."""
        self.leases = leases
        """Leases on artifacts."""
        self.checkouts = checkouts
        """Check-out records."""
        self._renders = renders if renders is not None else InMemoryRenders()
        self._integrations = integrations
        self._types = {kind.kind: kind for kind in types}
        self._edit_ttl = edit_ttl
        self._checkout_ttl = checkout_ttl
        self._max_size = max_size
        self._limits = limits
        self._deadline = deadline
        self._render_deadline = render_deadline
        self._build = build or app.name
        self._clock = clock
        self._telemetry = telemetry or Telemetry()
        self._version: str | None = None  # the app's version, as its last answer reported it

    # ─── the switch ───────────────────────────────────────────────────────────

    @property
    def key(self) -> str:
        """The app's integration key, ``files:<app>``."""
        return f"files:{self.app.name}"

    def key_of(self, kind: str) -> str | None:
        """Return the app's key for a native kind this service handles, None for any other."""
        return self.key if kind in self._types else None

    async def enabled(self, ws: Workspace) -> bool:
        """Return whether the app is on in the handle's workspace."""
        if self._integrations is None:
            return True
        return await self._integrations.is_enabled(ws.tenant_id, ws.workspace_id, self.key)

    async def _require_enabled(self, ws: Workspace) -> None:
        if not await self.enabled(ws):
            raise NotEnabled(self.key)

    # ─── reads ────────────────────────────────────────────────────────────────

    async def manifest(
        self, ws: Workspace, artifact_id: str, version: int | None = None
    ) -> tuple[int, NativeFile]:
        """Return a native file's manifest at a version (the head if None), with its version.

        Raises:
            NotFound: If there is no such native file or version, or it is hidden.
        """
        head = await visible(ws, NativeFile, artifact_id)
        if version is None or version == head.version:
            return head.version, head.data
        for revision in await ws.revisions(artifact_id):
            if revision.version == version:
                return version, type(head.data).model_validate(revision.data)
        raise NotFound("version", f"{artifact_id}@{version}")

    async def stored(
        self, ws: Workspace, artifact_id: str, version: int | None = None
    ) -> tuple[int, NativeFile, Blob]:
        """Return a revision's version, manifest, and the store's record of its content.

        A download reports the record's size, digest and type, never the manifest's claim.

        Raises:
            NotFound: If there is no such native file or version, or it is hidden.
            ContentDamaged: If the store holds no such bytes for the artifact, or holds them
                with another size than the manifest names.
        """
        number, manifest = await self.manifest(ws, artifact_id, version)
        return number, manifest, await self._stat(ws, artifact_id, number, manifest.content)

    async def content(
        self, ws: Workspace, artifact_id: str, version: int | None = None
    ) -> AsyncIterator[bytes]:
        """Yield a revision's bytes in chunks, in bounded memory.

        Raises:
            NotFound: If there is no such native file or version.
            ContentDamaged: If the store doesn't hold the bytes its manifest names.
        """
        _, _, record = await self.stored(ws, artifact_id, version)
        async for chunk in self.blobs.read(scope_of(ws), artifact_id, record.sha256):
            yield chunk

    async def text(self, ws: Workspace, artifact_id: str, version: int | None = None) -> str:
        """Return a revision's plain text ("" if the app read none).

        Raises:
            NotFound: If there is no such native file or version.
            ContentDamaged: If the store doesn't hold the text its manifest names.
        """
        number, manifest = await self.manifest(ws, artifact_id, version)
        data = await self._blob(ws, artifact_id, number, manifest.text)
        return data.decode()

    async def review(
        self, ws: Workspace, artifact_id: str, version: int | None = None
    ) -> list[ReviewItem]:
        """Return a revision's comments and tracked changes, as the app gave them.

        Raises:
            NotFound: If there is no such native file or version.
            ContentDamaged: If the store doesn't hold the review its manifest names.
        """
        number, manifest = await self.manifest(ws, artifact_id, version)
        data = await self._blob(ws, artifact_id, number, manifest.review)
        return _REVIEW.validate_json(data) if data else []

    async def _stat(self, ws: Workspace, artifact_id: str, version: int, blob: Blob) -> Blob:
        record = await self.blobs.stat(scope_of(ws), artifact_id, blob.sha256)
        if record is None:
            raise ContentDamaged(artifact_id, version, blob.sha256, "missing")
        if record.size != blob.size:
            raise ContentDamaged(artifact_id, version, blob.sha256, "size")
        return record

    async def _blob(
        self, ws: Workspace, artifact_id: str, version: int, blob: Blob | None
    ) -> bytes:
        if blob is None:
            return b""
        data = await self.blobs.get(scope_of(ws), artifact_id, blob.sha256)
        if data is None:
            raise ContentDamaged(artifact_id, version, blob.sha256, "missing")
        if len(data) != blob.size:
            raise ContentDamaged(artifact_id, version, blob.sha256, "size")
        return data

    async def render(
        self,
        ws: Workspace,
        artifact_id: str,
        version: int | None = None,
        page: int = 1,
        *,
        scale: float = 1.0,
    ) -> bytes:
        """Return a page of a revision as a PNG, from the cache when it has it.

        The scale is rounded to the nearest 0.05 (:data:`SCALE_STEPS`): the page is rendered
        and cached at that scale.

        Raises:
            ValidationFailed: If the page or the scale is out of range.
            NotFound: If there is no such native file or version.
            ContentDamaged: If the store doesn't hold the bytes its manifest names.
            AppRefused: If there is no such page.
            AppFailure: If the app fails otherwise.
        """
        _check_page(page, scale)
        number, manifest, _ = await self.stored(ws, artifact_id, version)
        return await self._render(ws, artifact_id, number, manifest, page, scale)

    # ─── proposals ────────────────────────────────────────────────────────────

    async def proposed(
        self, ws: Workspace, artifact_id: str, proposal_id: str
    ) -> tuple[int, NativeFile, NativeFile]:
        """Return a pending proposal's base version, base manifest and the manifest it makes.

        The proposal's patch is applied to its base, as accepting it at once would.

        Raises:
            NotFound: If the file or the proposal is missing or hidden, or the proposal is not
                a pending edit of this file.
            PatchFailed: If its patch doesn't apply to its base.
        """
        await ws.get(NativeFile, artifact_id)
        proposal = await ws.proposal(proposal_id) if 0 < len(proposal_id) <= MAX_ID else None
        change = None if proposal is None else proposal.change
        if (
            proposal is None
            or proposal.status != "pending"
            or not isinstance(change, EditArtifact)
            or change.artifact_id != artifact_id
        ):
            raise NotFound("proposal", proposal_id)
        version, base = await self.manifest(ws, artifact_id, change.base_version)
        data = apply_patch(base.model_dump(mode="json"), change.patch)
        return version, base, type(base).model_validate(data)

    async def proposal_text(self, ws: Workspace, artifact_id: str, proposal_id: str) -> str:
        """Return the plain text a pending proposal would make ("" if the app read none).

        Raises:
            NotFound: As :meth:`proposed`.
        """
        number, _, manifest = await self.proposed(ws, artifact_id, proposal_id)
        return (await self._blob(ws, artifact_id, number, manifest.text)).decode()

    async def proposal_review(
        self, ws: Workspace, artifact_id: str, proposal_id: str
    ) -> list[ReviewItem]:
        """Return the comments and tracked changes a pending proposal would make.

        Raises:
            NotFound: As :meth:`proposed`.
        """
        number, _, manifest = await self.proposed(ws, artifact_id, proposal_id)
        data = await self._blob(ws, artifact_id, number, manifest.review)
        return _REVIEW.validate_json(data) if data else []

    async def render_proposal(
        self, ws: Workspace, artifact_id: str, proposal_id: str, page: int, *, scale: float = 1.0
    ) -> bytes:
        """Return a page of the file a pending proposal would make, as :meth:`render` does.

        Raises:
            ValidationFailed: If the page or the scale is out of range.
            NotFound: As :meth:`proposed`.
            AppFailure: As :meth:`render`.
        """
        _check_page(page, scale)
        number, _, manifest = await self.proposed(ws, artifact_id, proposal_id)
        return await self._render(ws, artifact_id, number, manifest, page, scale)

    async def pages(
        self,
        ws: Workspace,
        artifact_id: str,
        version: int | None,
        last: int,
        *,
        scale: float = 1.0,
        proposal_id: str | None = None,
    ) -> AsyncGenerator[bytes]:
        """Yield pages 1 to ``last`` of a revision, or of a pending proposal, one at a time.

        The revision (or proposal) is resolved once, then each page is rendered as
        :meth:`render` does, from the cache when it has it: a diff of many pages asks the
        workspace once, and holds one page at a time.

        Raises:
            ValidationFailed: If ``last`` or the scale is out of range.
            NotFound: If there is no such native file, version or pending proposal.
            AppFailure: As :meth:`render`.
        """
        _check_page(max(last, 1), scale)
        if proposal_id is None:
            number, manifest, _ = await self.stored(ws, artifact_id, version)
        else:
            number, _, manifest = await self.proposed(ws, artifact_id, proposal_id)
        for page in range(1, last + 1):
            yield await self._render(ws, artifact_id, number, manifest, page, scale)

    async def _render(
        self,
        ws: Workspace,
        artifact_id: str,
        number: int,
        manifest: NativeFile,
        page: int,
        scale: float,
    ) -> bytes:
        scale = round(scale * SCALE_STEPS) / SCALE_STEPS
        sha = manifest.content.sha256
        key = RenderKey(ws.tenant_id, ws.workspace_id, artifact_id, sha, page, scale, self._build)
        cached = await self._renders.get(key)
        if cached is not None:
            return cached
        source = await self._blob(ws, artifact_id, number, manifest.content)
        attributes = {
            "artifactr.files.page": page,
            "artifactr.files.content.sha256": sha,
            "artifactr.files.app.build": self._build,
            BYTES_IN: len(source),
        }
        if self._version is not None:
            attributes["artifactr.files.app.version"] = self._version
        with self._telemetry.operation("render", self._scoped(ws, artifact_id), attributes) as span:
            png = await self.app.render(source, page, scale=scale, deadline=self._render_deadline)
            span.set_attribute("artifactr.files.bytes.out", len(png))
        await self._renders.put(key, png)
        return png

    async def lease(self, ws: Workspace, artifact_id: str) -> ArtifactLease | None:
        """Return who holds the file and until when, or None; a read.

        Raises:
            NotFound: If the artifact is missing or hidden.
        """
        return await artifact_lease(ws, self.leases, artifact_id)

    async def checkout(self, ws: Workspace, checkout_id: str) -> Checkout:
        """Return one of the actor's check-outs.

        Raises:
            NotFound: If there is none, or the artifact is hidden.
            Forbidden: If it is someone else's.
        """
        record = await self._record(ws, checkout_id)
        if record.actor.participant != ws.actor.participant:
            raise Forbidden(f"check-out {checkout_id} is someone else's")
        return record

    async def _record(self, ws: Workspace, checkout_id: str) -> Checkout:
        plausible = 0 < len(checkout_id) <= MAX_ID and checkout_id.isprintable()
        record = await self.checkouts.get(scope_of(ws), checkout_id) if plausible else None
        try:
            if record is None:
                raise NotFound("checkout", checkout_id)
            await visible(ws, NativeFile, record.artifact_id)
        except NotFound:
            # A check-out of a file hidden from the actor is answered as a missing check-out,
            # so its id tells nothing about the file.
            raise NotFound("checkout", checkout_id) from None
        return record

    # ─── writes ───────────────────────────────────────────────────────────────

    @log.logged("uploaded")
    async def upload(
        self,
        ws: Workspace,
        name: str,
        data: AsyncIterable[bytes],
        *,
        media_type: str | None = None,
        thread_id: str | None = None,
    ) -> Applied | Proposed:
        """Create a native file from a stream: inspected by the app, put, then created.

        An agent's upload becomes a proposal, as the type's write policy says.

        Raises:
            NotEnabled: If the app is off here.
            ValidationFailed: If the name or media type doesn't fit a native kind.
            FileTooLarge: If the stream is over the size limit.
            UnsafeFile: If the file is not a package or is hostile.
            AppFailure: If the app can't read it.
        """
        await self._require_enabled(ws)
        name = clean_text(name)
        artifact_type = self._type_for(name, media_type)
        media = media_type or next(iter(sorted(artifact_type.formats)))
        incoming = await spool(data, limit=self._max_size)
        try:
            printed = await asyncio.to_thread(fingerprint, incoming.file, limits=self._limits)
            artifact_id = new_artifact_id()
            inspection = await self._inspect(ws, artifact_id, incoming)
            blobs, _ = await self._put_all(ws, artifact_id, incoming, media, inspection, printed)
        finally:
            incoming.close()
        manifest = artifact_type(
            name=name,
            provenance=Provenance(
                source="upload",
                app=inspection.about.app,
                app_version=inspection.about.version,
                build=inspection.about.build,
            ),
            **blobs,
        )
        return await ws.create(manifest, artifact_id=artifact_id, thread_id=thread_id)

    @log.logged("edited")
    async def edit(
        self,
        ws: Workspace,
        artifact_id: str,
        *,
        base_version: int,
        commands: Iterable[AppCommand],
        summary: str | None = None,
        thread_id: str | None = None,
    ) -> Applied | Proposed | Unchanged:
        """Run a batch of the app's commands on a version and commit the result.

        The edit holds the file for ``edit_ttl`` (``edit:<uuid>``) while the app runs and the
        revision commits. An agent's edit becomes a proposal; a person's commits. A batch that
        changes nothing (the fingerprint is the base's) makes no revision.

        Raises:
            NotFound: If the artifact is missing or hidden.
            NotEnabled: If the app is off here.
            ValidationFailed: If the batch is empty.
            VersionConflict: If ``base_version`` is not the head.
            Forbidden: If the actor may not edit it.
            ArtifactBusy: If someone holds it: a person's check-out or another edit.
            AppRefused: If the app refuses a command.
            AppFailure: If the app times out, crashes or finds the file too large.
        """
        batch = tuple(commands)
        version, manifest = await self.manifest(ws, artifact_id)
        await self._require_enabled(ws)
        if not batch:
            raise ValidationFailed(
                "a batch needs at least one command",
                [{"loc": ["commands"], "msg": "empty batch", "type": "too_short"}],
            )
        if base_version != version:
            raise VersionConflict(artifact_id, base=base_version, head=version)
        holder = f"edit:{uuid.uuid4()}"
        # The manifest read proved the file there and visible: the lease needs no second look.
        await hold_artifact(ws, self.leases, artifact_id, holder=holder, ttl=self._edit_ttl)
        try:
            return await self._edit(ws, artifact_id, version, manifest, batch, summary, thread_id)
        finally:
            await self.leases.release(scope_of(ws), artifact_id, holder)

    async def _edit(
        self,
        ws: Workspace,
        artifact_id: str,
        version: int,
        manifest: NativeFile,
        batch: tuple[AppCommand, ...],
        summary: str | None,
        thread_id: str | None,
    ) -> Applied | Proposed | Unchanged:
        source = await self._blob(ws, artifact_id, version, manifest.content)
        scoped = self._scoped(ws, artifact_id)
        attributes = {
            "artifactr.files.commands": len(batch),
            "artifactr.files.content.sha256": manifest.content.sha256,
            BYTES_IN: len(source),
        }
        with self._telemetry.operation("apply", scoped, attributes) as span:
            edited = await self.app.apply(
                source, batch, deadline=self._deadline, author=ws.actor.display_name
            )
            span.set_attributes(self._about(edited.inspection))
            span.set_attribute("artifactr.files.bytes.out", len(edited.content))
        try:
            printed = await asyncio.to_thread(fingerprint, edited.content, limits=self._limits)
        except UnsafeFile as unsafe:
            raise AppCrashed(f"the app saved a package that can't be read: {unsafe}") from unsafe
        if printed == manifest.fingerprint:
            return Unchanged(artifact_id=artifact_id, version=version)
        blobs, [commands] = await self._put_all(
            ws,
            artifact_id,
            edited.content,
            manifest.content.media_type,
            edited.inspection,
            printed,
            also=[(_canonical(batch), JSON)],
        )
        about = edited.inspection.about
        after = manifest.model_copy(
            update={
                **blobs,
                "provenance": Provenance(
                    source="commands",
                    app=about.app,
                    app_version=about.version,
                    build=about.build,
                    base=manifest.content.sha256,
                    commands=commands,
                ),
            }
        )
        return await ws.commit(
            EditArtifact(
                artifact_id=artifact_id,
                base_version=version,
                patch=revision_patch(manifest.content.sha256, after),
                summary=summary or _summary(batch),
                thread_id=thread_id,
            )
        )

    @log.logged("checked_out")
    async def check_out(self, ws: Workspace, artifact_id: str) -> Checkout:
        """Check the head out to the handle's actor: an exclusive lease of ``checkout_ttl``.

        Two tabs are two check-outs: the second is refused as busy.

        Raises:
            NotFound: If the artifact is missing or hidden.
            NotEnabled: If the app is off here.
            Forbidden: If the actor may not edit it.
            ArtifactBusy: If someone holds it.
        """
        version, manifest = await self.manifest(ws, artifact_id)
        await self._require_enabled(ws)
        checkout_id = new_id("co")
        lease = await hold_artifact(
            ws,
            self.leases,
            artifact_id,
            holder=holder_of(checkout_id, ws.actor),
            ttl=self._checkout_ttl,
        )
        record = Checkout(
            id=checkout_id,
            artifact_id=artifact_id,
            base_version=version,
            base_sha256=manifest.content.sha256,
            actor=ws.actor,
            expires_at=lease.expires_at,
        )
        await self.checkouts.add(scope_of(ws), record)
        return record

    @log.logged("extended")
    async def extend(self, ws: Workspace, checkout_id: str) -> Checkout:
        """Extend a check-out by ``checkout_ttl`` from now, by acquiring its lease again.

        The lease is taken first, then the record extended only if it is still open: an
        extend that lost to a check-in or a discard lets go of the lease at once, so an ended
        check-out never keeps the file (ADR-0009).

        Raises:
            NotFound: If there is no such check-out, or its artifact is hidden.
            Forbidden: If it is someone else's, or the actor may no longer edit the file.
            NotEnabled: If the app is off here.
            InvalidState: If it was checked in or discarded.
            ArtifactBusy: If it lapsed and someone else holds the file now.
        """
        record = await self._open_checkout(ws, checkout_id)
        await self._require_enabled(ws)
        scope = scope_of(ws)
        lease = await hold_artifact(
            ws, self.leases, record.artifact_id, holder=record.holder, ttl=self._checkout_ttl
        )
        if not await self.checkouts.extend(scope, checkout_id, lease.expires_at):
            await self.leases.release(scope, record.artifact_id, record.holder)
            raise _ended(checkout_id, await self.checkouts.get(scope, checkout_id))
        return record.model_copy(update={"expires_at": lease.expires_at})

    @log.logged("discarded")
    async def discard(self, ws: Workspace, checkout_id: str) -> None:
        """End a check-out without checking anything in; its lease is released.

        The person who checked out may discard it, even while the app is off, so they can let
        go of a file. Someone else may break it only if they may archive the file
        (``artifactr:archive_artifact``, an owner's or admin's right), so a person who left for
        the day doesn't hold a file for eight hours (ADR-0006). The record is kept, saying who
        ended it and when: a later check-in of it is kept as a proposal (ADR-0009). Discarding
        an ended check-out changes nothing, so a retry is answered alike.

        Raises:
            NotFound: If there is no such check-out, or its artifact is hidden.
            Forbidden: If it is someone else's and the actor may not archive the file, or the
                actor may no longer edit it.
        """
        record = await self._record(ws, checkout_id)
        try:
            if record.actor.participant != ws.actor.participant:
                await ws.check(Access(action=ARCHIVE_ACTION, artifact_id=record.artifact_id))
            await ws.check(Access(action=EDIT_ACTION, artifact_id=record.artifact_id))
        except NotEnabled:
            # The gate refuses these actions while the app is off, but only once the
            # application's own authorize allowed them: letting go stays allowed (ADR-0006).
            pass
        scope = scope_of(ws)
        # The record ends first, then the lease goes: an extend in between sees it ended.
        await self.checkouts.end(scope, checkout_id, "discarded", by=ws.actor, at=self._clock())
        await self.leases.release(scope, record.artifact_id, record.holder)
        ended = {"checkout_id": checkout_id, "artifact_id": record.artifact_id}
        log.record("discarded", ws, {**ended, "holder": record.holder})

    @log.logged("checked_in")
    async def check_in(
        self,
        ws: Workspace,
        checkout_id: str,
        data: AsyncIterable[bytes],
        *,
        summary: str | None = None,
    ) -> CheckedIn:
        """Check a file in from a stream, against the base its check-out recorded.

        Equal to the head (by fingerprint): succeeds and commits nothing. Stale (someone
        committed since the check-out, or another holds the file now): kept as a proposal
        against the head, with a test on the head's digest, whatever head it finds when it
        proposes. Otherwise committed as the person, with source ``check_in``. Either way the
        check-out ends and its lease is released.

        A check-out has one check-in (ADR-0009): a retry with the same file, at once or later,
        answers exactly what the first did (the same version, ``unchanged``, or the same
        proposal), and one racing the first waits for its outcome. A check-in of a check-out
        that was discarded, by its owner or broken by someone else, is kept as a proposal
        against the head, and its answer says who ended the check-out and when.

        Raises:
            NotFound: If there is no such check-out, or its artifact is hidden.
            Forbidden: If it is someone else's, or the actor may no longer edit the file.
            NotEnabled: If the app is off here.
            InvalidState: If it was checked in already with another file.
            FileTooLarge: If the stream is over the size limit.
            UnsafeFile: If the file is not a package or is hostile.
            AppFailure: If the app can't read it.
        """
        summary = clean_text(summary or "") or None
        record = await self.checkout(ws, checkout_id)
        await self._require_enabled(ws)
        incoming = await spool(data, limit=self._max_size)
        try:
            printed = await asyncio.to_thread(fingerprint, incoming.file, limits=self._limits)
            return await self._check_in(ws, record, incoming, printed, summary)
        finally:
            incoming.close()

    async def _check_in(
        self,
        ws: Workspace,
        record: Checkout,
        source: "Spooled",
        printed: str,
        summary: str | None,
    ) -> CheckedIn:
        scope = scope_of(ws)
        token = new_id("ci")
        while True:
            claimed = await self._claim(scope, record.id, token)
            if claimed.claim != token:
                return _answer(claimed, printed)
            try:
                outcome = await self._checked_in(ws, claimed, source, printed, summary, token)
            except _Overtaken:
                continue
            except BaseException:
                await self.checkouts.unclaim(scope, record.id, token)
                raise
            settled = await self.checkouts.settle(
                scope, record.id, outcome, by=ws.actor, at=self._clock()
            )
            # The record ended first, then the lease goes: an extend in between sees it ended.
            await self.leases.release(scope, record.artifact_id, record.holder)
            # Were the record removed meanwhile, the answer is still what this check-in did.
            return _answer(settled or claimed.model_copy(update={"outcome": outcome}), printed)

    async def _claim(self, scope: Scope, checkout_id: str, token: str) -> Checkout:
        """Return the record once this check-in holds its claim, or it has an outcome."""
        delay = CLAIM_POLL
        while True:
            now = self._clock()
            until = now + self._edit_ttl
            record = await self.checkouts.claim(scope, checkout_id, token, until=until, now=now)
            if record is None:
                raise NotFound("checkout", checkout_id)
            if record.claim == token or record.outcome is not None or record.checked_in:
                return record
            # Another check-in of it is at work: its outcome will be this one's answer.
            await asyncio.sleep(delay)
            delay = min(delay * 2, CLAIM_POLL_MAX)

    async def _checked_in(
        self,
        ws: Workspace,
        record: Checkout,
        source: "Spooled",
        printed: str,
        summary: str | None,
        token: str,
    ) -> Outcome:
        artifact_id = record.artifact_id
        version, head = await self.manifest(ws, artifact_id)
        if printed == head.fingerprint:
            return Outcome(status="unchanged", version=version, fingerprint=printed)
        inspection = await self._inspect(ws, artifact_id, source)
        media_type = head.content.media_type
        blobs, _ = await self._put_all(ws, artifact_id, source, media_type, inspection, printed)
        about = inspection.about
        after = head.model_copy(
            update={
                **blobs,
                "provenance": Provenance(
                    source="check_in",
                    app=about.app,
                    app_version=about.version,
                    build=about.build,
                    base=record.base_sha256,
                ),
            }
        )
        note = summary or f"checked in {head.name}"
        scope = scope_of(ws)
        # The app may have taken long: renew the claim, or leave the commit to the retry that
        # took over from a check-in it thought had died.
        renewed = await self._claim_again(scope, record.id, token)
        if renewed.state == "open" and version == record.base_version:
            held = await self.leases.acquire(scope, artifact_id, record.holder, self._checkout_ttl)
            # Held, and still open once held: a discard before this point makes it a proposal.
            if held is not None and await self.checkouts.extend(scope, record.id, held.expires_at):
                try:
                    outcome = await ws.commit(
                        EditArtifact(
                            artifact_id=artifact_id,
                            base_version=record.base_version,
                            patch=revision_patch(record.base_sha256, after),
                            summary=note,
                        )
                    )
                except (VersionConflict, PatchFailed):
                    pass  # someone committed since the head was read: propose instead
                else:
                    if isinstance(outcome, Applied):
                        return Outcome(
                            status="applied", version=outcome.version, fingerprint=printed
                        )
                    return Outcome(
                        status="proposed",
                        version=version,
                        proposal_id=outcome.proposal_id,
                        fingerprint=printed,
                    )
        return await self._propose(ws, renewed, after, note, printed)

    async def _claim_again(self, scope: Scope, checkout_id: str, token: str) -> Checkout:
        now = self._clock()
        until = now + self._edit_ttl
        record = await self.checkouts.claim(scope, checkout_id, token, until=until, now=now)
        if record is None or record.claim != token:
            raise _Overtaken
        return record

    async def _propose(
        self, ws: Workspace, record: Checkout, after: NativeFile, note: str, printed: str
    ) -> Outcome:
        """Keep a check-in as a proposal against the head it finds, however often it moves.

        Each try fails only if someone committed since the head was read, so it ends.
        """
        while True:
            version, head = await self.manifest(ws, record.artifact_id)
            if printed == head.fingerprint:
                return Outcome(status="unchanged", version=version, fingerprint=printed)
            try:
                proposed = await ws.commit(
                    ProposeChange(
                        change=EditArtifact(
                            artifact_id=record.artifact_id,
                            base_version=version,
                            patch=revision_patch(head.content.sha256, after),
                            summary=note,
                        ),
                        rationale=_rationale(record, version),
                    )
                )
            except VersionConflict:
                continue
            return Outcome(
                status="proposed",
                version=version,
                proposal_id=proposed.proposal_id,
                fingerprint=printed,
            )

    async def _open_checkout(self, ws: Workspace, checkout_id: str) -> Checkout:
        record = await self.checkout(ws, checkout_id)
        if record.state != "open":
            raise _ended(checkout_id, record)
        return record

    # ─── collection ───────────────────────────────────────────────────────────

    @log.logged("collected")
    async def collect(self, ws: Workspace, *, grace: timedelta = timedelta(hours=1)) -> int:
        """Remove blobs that no revision, pending proposal or open check-out names.

        Only blobs put more than ``grace`` ago go, so a put racing its commit is kept. Run it
        as an actor that sees every artifact (a system actor).

        Raises:
            Forbidden: If some artifact is hidden from the handle's actor, whose blobs would
                look unreferenced.
        """
        if (await ws.hidden()).artifacts:
            raise Forbidden("collect must run as an actor that sees every artifact")
        referenced: set[tuple[str, str]] = set()
        for artifact in await ws.artifacts(NativeFile, include_archived=True):
            for revision in await ws.revisions(artifact.id):
                referenced |= {(artifact.id, sha) for sha in _digests(revision.data)}
        for proposal in await ws.proposals():
            change = proposal.change.model_dump(mode="json")
            referenced |= {(proposal.artifact_id, sha) for sha in _digests(change)}
        scope = scope_of(ws)
        now = self._clock()
        for record in await self.checkouts.active(scope, now=now):
            referenced.add((record.artifact_id, record.base_sha256))
        return await self.blobs.collect(scope, referenced, before=now - grace)

    # ─── helpers ──────────────────────────────────────────────────────────────

    def _type_for(self, name: str, media_type: str | None) -> type[NativeFile]:
        kinds = [
            kind
            for kind in self._types.values()
            if media_type is None or media_type in kind.formats
        ]
        errors: list[JsonValue] = []
        if not name.strip():
            errors.append({"loc": ["name"], "msg": "a file needs a name", "type": "missing"})
        elif len(name) > MAX_NAME:
            message = f"a file's name has at most {MAX_NAME} characters"
            errors.append({"loc": ["name"], "msg": message, "type": "too_long"})
        if not kinds:
            message = f"{media_type} is not a native format here"
            errors.append({"loc": ["media_type"], "msg": message, "type": "unsupported"})
        if errors:
            raise ValidationFailed("the file cannot be uploaded as a native file", errors)
        return kinds[0]

    async def _inspect(self, ws: Workspace, artifact_id: str, source: "Spooled") -> Inspection:
        with self._telemetry.operation(
            "inspect", self._scoped(ws, artifact_id), {BYTES_IN: source.size}
        ) as span:
            inspection = await self.app.inspect(source.file, deadline=self._deadline)
            span.set_attributes(self._about(inspection))
        return inspection

    async def _put_all(
        self,
        ws: Workspace,
        artifact_id: str,
        content: "bytes | Spooled",
        media_type: str,
        inspection: Inspection,
        printed: str,
        *,
        also: Sequence[tuple[bytes, str]] = (),
    ) -> tuple[dict[str, Any], list[Blob]]:
        """Put a file's content, text and review, and ``also``; return the manifest fields.

        Content in memory goes with the rest in one :meth:`Blobs.put_many`; a spooled file
        streams in a put of its own. The fingerprint is always the package's own
        (``printed``), never an app's claim, so a check-in and the head compare alike
        whichever app read them. The second value is ``also``'s blobs, in order.
        """
        scope = scope_of(ws)
        derived = [
            (inspection.text.encode(), TEXT),
            (_REVIEW.dump_json(list(inspection.review)), JSON),
            *also,
        ]
        if isinstance(content, bytes):
            stored, *rest = await self.blobs.put_many(
                scope, artifact_id, [(content, media_type), *derived]
            )
        else:
            stored = await self.blobs.put(scope, artifact_id, content.chunks(), media_type)
            rest = await self.blobs.put_many(scope, artifact_id, derived)
        text, review, *more = rest
        fields = {
            "content": stored,
            "text": text,
            "review": review,
            "fingerprint": printed,
            "outline": inspection.outline[:MAX_OUTLINE],
            "pages": inspection.pages,
        }
        return fields, more

    def _scoped(self, ws: Workspace, artifact_id: str) -> dict[str, str]:
        return {
            TENANT_ID: ws.tenant_id,
            WORKSPACE_ID: ws.workspace_id,
            ARTIFACT_ID: artifact_id,
            APP: self.app.name,
        }

    def _about(self, inspection: Inspection) -> dict[str, str]:
        about = inspection.about
        if about.version is not None:
            self._version = about.version
        named = {
            "artifactr.files.app": about.app,
            "artifactr.files.app.version": about.version,
            "artifactr.files.app.build": about.build,
        }
        return {name: value for name, value in named.items() if value is not None}


class _Overtaken(Exception):
    """A check-in's claim lapsed and a retry took over: the retry's outcome is the answer."""


def _answer(record: Checkout, printed: str) -> CheckedIn:
    """Return what a check-out's check-in did, for a check-in of the file ``printed``."""
    outcome = record.outcome
    if outcome is None or outcome.fingerprint != printed:
        # Checked in with another file, or before its outcome was kept (migration 0002).
        raise InvalidState(f"check-out {record.id} was checked in already with another file")
    discarded = record.state == "discarded"
    return CheckedIn(
        status=outcome.status,
        artifact_id=record.artifact_id,
        version=outcome.version,
        proposal_id=outcome.proposal_id,
        ended_by=record.ended_by if discarded else None,
        ended_at=record.ended_at if discarded else None,
    )


def _ended(checkout_id: str, record: Checkout | None) -> NotFound | InvalidState:
    """Return the refusal for acting on a check-out that ended (or is gone)."""
    if record is None:
        return NotFound("checkout", checkout_id)
    how = "checked in" if record.state == "checked_in" else "discarded"
    by = "" if record.ended_by is None else f" by {record.ended_by.participant}"
    at = "" if record.ended_at is None else f" at {record.ended_at.isoformat()}"
    return InvalidState(f"check-out {checkout_id} was {how}{by}{at}")


def _rationale(record: Checkout, version: int) -> str:
    made = f"checked in from check-out {record.id} of version {record.base_version}"
    if record.state == "discarded":
        by = "someone" if record.ended_by is None else record.ended_by.participant
        at = "" if record.ended_at is None else f" at {record.ended_at.isoformat()}"
        return f"{made}, which {by} discarded{at}; the file is at version {version}"
    return f"{made}, after the file moved to version {version}"


def _canonical(batch: Sequence[AppCommand]) -> bytes:
    """Return a batch as canonical JSON: sorted keys, no spaces."""
    data = [command.model_dump(mode="json") for command in batch]
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _summary(batch: Sequence[AppCommand]) -> str:
    names = ", ".join(command.command for command in batch[:5])
    more = f" and {len(batch) - 5} more" if len(batch) > 5 else ""
    return f"ran {names}{more}"


def _digests(data: JsonValue) -> Iterable[str]:
    """Yield every blob digest in a manifest's or patch's JSON."""
    if isinstance(data, dict):
        sha = data.get("sha256")
        if isinstance(sha, str) and "size" in data:
            yield sha
        for value in data.values():
            yield from _digests(value)
    elif isinstance(data, list):
        for value in data:
            yield from _digests(value)


def _check_page(page: int, scale: float) -> None:
    problems: list[JsonValue] = []
    if not 1 <= page <= MAX_PAGE:
        message = f"a page is a number from 1 to {MAX_PAGE}"
        problems.append({"loc": ["page"], "msg": message, "type": "out_of_range"})
    if not MIN_SCALE <= scale <= MAX_SCALE:
        message = f"a scale is from {MIN_SCALE} to {MAX_SCALE}"
        problems.append({"loc": ["scale"], "msg": message, "type": "out_of_range"})
    if problems:
        raise ValidationFailed("the page can't be rendered", problems)
