"""The service's common ground: its ports and settings, the switch, and what every part does.

:class:`~artifactr.files.native.NativeFiles` tells RFC-0003's stories, one a module, each a part
that subclasses :class:`ServiceBase`: an upload (:mod:`.upload`), an agent's edit (:mod:`.edit`), a
person's check-out (:mod:`.checkout`) and check-in (:mod:`.checkin`), reading (:mod:`.reading`) and
collection (:mod:`.collection`). What more than one of them needs is here: the ports and settings
the service is made of, the app's switch (ADR-0006), a revision's manifest, a blob's bytes, and a
new file's bytes made into the blobs of a revision: inspected by the app, then put before anything
commits ("Edits: JSON Patch with a test").
"""

import asyncio
from collections.abc import Sequence
from datetime import timedelta
from typing import Final, TypedDict

from artifactr.core import NotFound, ValidationFailed
from artifactr.workspace import Workspace
from pydantic import JsonValue, TypeAdapter

from artifactr.files.core.app_port import App, Inspection, ReviewItem, Styles
from artifactr.files.core.blobs import Blobs
from artifactr.files.core.checkouts import Checkouts
from artifactr.files.core.clock import Clock
from artifactr.files.core.errors import ContentDamaged, NotEnabled
from artifactr.files.core.fingerprint import ZipLimits, fingerprint
from artifactr.files.core.formats import Sniffer, kind_name
from artifactr.files.core.history import History
from artifactr.files.core.integrations import Integrations
from artifactr.files.core.leases import Leases, scope_of
from artifactr.files.core.manifests import MAX_OUTLINE, Blob, NativeFile
from artifactr.files.core.renders import Renders
from artifactr.files.core.telemetry import APP, ARTIFACT_ID, TENANT_ID, WORKSPACE_ID, Telemetry
from artifactr.files.core.visibility import visible
from artifactr.files.native.jobs import Jobs
from artifactr.files.native.spool import Spooled

EDIT_TTL: Final = timedelta(seconds=45)
"""How long an agent's edit holds the file: the app's deadline plus the commit."""

CHECKOUT_TTL: Final = timedelta(hours=8)
"""How long a check-out lasts unless extended."""

MAX_SIZE: Final = 512 * 1024 * 1024
"""The largest file accepted by default, in bytes (512 MiB, WordCraft's total-inflated cap)."""

MAX_ID: Final = 255
"""The most characters an id may have: a longer one names nothing."""

TEXT: Final = "text/plain; charset=utf-8"
"""The media type of a text blob."""

JSON: Final = "application/json"
"""The media type of a review or command blob."""

BYTES_IN: Final = "artifactr.files.bytes.in"
"""The span attribute for how many bytes the app was given."""

REVIEW: Final = TypeAdapter(list[ReviewItem])
"""A review blob's JSON: the comments and tracked changes, as the app gave them."""


class Written(TypedDict):
    """A revision's blobs, put, and what the app read: the manifest's fields they fill."""

    content: Blob
    """The file's bytes."""
    text: Blob
    """Its plain text."""
    review: Blob
    """Its comments and tracked changes."""
    fingerprint: str
    """The package's own fingerprint, never an app's claim."""
    outline: str
    """Its headings, cut to :data:`~artifactr.files.core.manifests.MAX_OUTLINE`."""
    pages: int | None
    """Its page count, if the app knows."""
    styles: Styles | None
    """A Word document's styles, if the app lists them."""


class ServiceBase:
    """The ports and settings every part of the service acts on, and what they share.

    :class:`~artifactr.files.native.NativeFiles` sets them; its ``Args`` say what each is.
    """

    blobs: Blobs
    app: App
    leases: Leases
    checkouts: Checkouts
    history: History
    _renders: Renders
    _integrations: Integrations | None
    _types: dict[str, type[NativeFile]]
    _edit_ttl: timedelta
    _checkout_ttl: timedelta
    _max_size: int
    _limits: ZipLimits
    _deadline: float
    _render_deadline: float
    _build: str
    _clock: Clock
    _telemetry: Telemetry
    jobs: Jobs
    _version: str | None  # the app's version, as its last answer reported it

    @property
    def max_size(self) -> int:
        """The largest file accepted, in bytes."""
        return self._max_size

    # ─── the switch ───────────────────────────────────────────────────────────

    @property
    def key(self) -> str:
        """The app's integration key, ``files:<app>``."""
        return f"files:{self.app.name}"

    @property
    def formats(self) -> frozenset[str]:
        """The media types of the native kinds this service handles."""
        return frozenset(media for kind in self._types.values() for media in kind.formats)

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

    # ─── a revision and its blobs ─────────────────────────────────────────────

    async def manifest(
        self, ws: Workspace, artifact_id: str, version: int | None = None
    ) -> tuple[int, NativeFile]:
        """Return a native file's manifest at a version (the head if None), with its version.

        An old version is one read of :attr:`history` (one row on SQL, ADR-0026), after the
        head's read through the workspace has checked the file is there and visible.

        Raises:
            NotFound: If there is no such native file or version, or it is hidden.
        """
        head = await visible(ws, NativeFile, artifact_id)
        if version is None or version == head.version:
            return head.version, head.data
        revision = await self.history.revision(ws, artifact_id, version)
        if revision is None:
            raise NotFound("version", f"{artifact_id}@{version}")
        return version, type(head.data).model_validate(revision.data)

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

    # ─── a new file's bytes, made into a revision's blobs ─────────────────────

    async def _inspect(self, ws: Workspace, artifact_id: str, source: Spooled) -> Inspection:
        with self._telemetry.operation(
            "inspect", self._scoped(ws, artifact_id), {BYTES_IN: source.size}
        ) as span:
            inspection = await self.app.inspect(source.file, deadline=self._deadline)
            span.set_attributes(self._about(inspection))
        return inspection

    async def _screened(self, source: Spooled) -> tuple[str, str]:
        """Return a file's fingerprint and its format, read from its content in one pass.

        Raises:
            UnsafeFile: If the file is not a package, is hostile, or holds no native format.
        """
        sniffer = Sniffer()
        printed = await asyncio.to_thread(
            fingerprint, source.file, limits=self._limits, check=sniffer
        )
        return printed, sniffer.media_type()

    def _kind_of(self, media_type: str, wanted: type[NativeFile] | None = None) -> type[NativeFile]:
        """Return the kind that holds a format: ``wanted``'s, or the first of the service's.

        Raises:
            ValidationFailed: If no kind here holds it, or ``wanted`` holds another.
        """
        kinds = [wanted] if wanted is not None else list(self._types.values())
        for kind in kinds:
            if media_type in kind.formats:
                return kind
        what = kind_name(media_type)
        if wanted is not None:
            formats = " or ".join(kind_name(held) for held in sorted(wanted.formats))
            message = f"the file is {what}, and this file is {formats}"
        else:
            message = f"the file is {what}, which is not a native kind here"
        error: dict[str, JsonValue] = {"loc": ["file"], "msg": message, "type": "wrong_kind"}
        raise ValidationFailed(message, [error])

    async def _put_all(
        self,
        ws: Workspace,
        artifact_id: str,
        content: bytes | Spooled,
        media_type: str,
        inspection: Inspection,
        printed: str,
        *,
        also: Sequence[tuple[bytes, str]] = (),
    ) -> tuple[Written, list[Blob]]:
        """Put a file's content, text and review, and ``also``; return the manifest fields.

        Content in memory goes with the rest in one :meth:`Blobs.put_many`; a spooled file
        streams in a put of its own, with the digest it was spooled with (so an object store
        puts it straight to its digest's key, ADR-0024). The fingerprint is always the package's own
        (``printed``), never an app's claim, so a check-in and the head compare alike
        whichever app read them. The second value is ``also``'s blobs, in order.
        """
        scope = scope_of(ws)
        derived = [
            (inspection.text.encode(), TEXT),
            (REVIEW.dump_json(list(inspection.review)), JSON),
            *also,
        ]
        if isinstance(content, bytes):
            stored, *rest = await self.blobs.put_many(
                scope, artifact_id, [(content, media_type), *derived]
            )
        else:
            stored = await self.blobs.put(
                scope, artifact_id, content.chunks(), media_type, sha256=content.sha256
            )
            rest = await self.blobs.put_many(scope, artifact_id, derived)
        text, review, *more = rest
        fields = Written(
            content=stored,
            text=text,
            review=review,
            fingerprint=printed,
            outline=inspection.outline[:MAX_OUTLINE],
            pages=inspection.pages,
            styles=inspection.styles,
        )
        return fields, more

    # ─── telemetry ────────────────────────────────────────────────────────────

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
