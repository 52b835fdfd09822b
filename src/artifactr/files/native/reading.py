"""Reading: a revision's bytes, text, review and pages, and a pending proposal's (RFC-0003).

Every read resolves the artifact through the caller's workspace first, so a hidden one is
answered as a missing one, and only then reads the blob its manifest names ("Blob storage"): a
download reports the store's record of the bytes, never the manifest's claim. A page is a PNG
the app renders, cached by tenant, workspace, artifact, content digest, page, scale and the
app's build, never by digest alone. A proposal is read as accepting it at once would make it,
so a reviewer sees its text, review and pages before deciding ("portalr").
"""

from collections.abc import AsyncGenerator, AsyncIterator
from typing import Final

from artifactr.core import EditArtifact, NotFound, ValidationFailed, apply_patch
from artifactr.workspace import Workspace
from pydantic import JsonValue

from artifactr.files.core.app_port import ReviewItem
from artifactr.files.core.errors import ContentDamaged
from artifactr.files.core.leases import scope_of
from artifactr.files.core.manifests import Blob, NativeFile
from artifactr.files.core.renders import RenderKey
from artifactr.files.native.base import BYTES_IN, MAX_ID, REVIEW, ServiceBase

MAX_PAGE: Final = 2**31 - 1
"""The highest page number a render is asked for: what a database's integer holds."""

MIN_SCALE: Final = 0.1
"""The smallest scale a page is rendered at (WordCraft clamps to 0.1 to 4)."""

MAX_SCALE: Final = 4.0
"""The largest scale a page is rendered at."""

SCALE_STEPS: Final = 20
"""A scale is rounded to the nearest 1/SCALE_STEPS (0.05), so a reader can't have one page
rendered, and cached, in more than 79 ways by asking for 1.0, 1.0001, 1.0002..."""


class Reading(ServiceBase):
    """The part of the service that reads revisions and proposals, and renders their pages."""

    # ─── a revision ───────────────────────────────────────────────────────────

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
        return REVIEW.validate_json(data) if data else []

    async def _stat(self, ws: Workspace, artifact_id: str, version: int, blob: Blob) -> Blob:
        record = await self.blobs.stat(scope_of(ws), artifact_id, blob.sha256)
        if record is None:
            raise ContentDamaged(artifact_id, version, blob.sha256, "missing")
        if record.size != blob.size:
            raise ContentDamaged(artifact_id, version, blob.sha256, "size")
        return record

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

    # ─── a pending proposal ───────────────────────────────────────────────────

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
        return REVIEW.validate_json(data) if data else []

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

    # ─── pages, and the render cache ──────────────────────────────────────────

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
