"""Files router: check-out, check-in and downloads of native files over HTTP (RFC-0003).

:func:`files_router` is a FastAPI router mounted beside artifactr's ``artifactr_router``, with the
same ``resolve_actor`` convention: it returns the request's tenant and actor, or raises
:class:`~artifactr.fastapi.Unauthorized` (401). Each request opens its workspace through
:meth:`Workspaces.open <artifactr.workspace.Workspaces.open>` as that actor, so every call passes
the workspaces' ``authorize`` and ``hidden`` hooks, and the switch (ADR-0006)::

    app.include_router(artifactr_router(workspaces, runner, resolve_actor=resolve_actor))
    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))

Every route names an artifact, and a revision where it serves bytes, never a bare digest. Bytes
are served only once the artifact resolved through the workspace, so a hidden artifact is
answered exactly as a missing one. Uploads and check-ins stream the raw request body into
:class:`~artifactr.files.native.NativeFiles`, which hashes it as it arrives and spools it to
disk, so memory stays flat at any size. Downloads stream too, with the content digest as a
strong ``ETag``.

Refusals answer as artifactr's router does: ``{"detail": rejection.payload()}`` with the
rejection's status from ``STATUS_CODES`` (else 400). The package's own map to their own:
:class:`~artifactr.files.core.errors.ArtifactBusy` 409 with the lease, ``NotEnabled`` 403,
``FileTooLarge`` 413, ``UnsafeFile`` and ``AppRefused`` 422, ``ContentDamaged`` 409; an app
that times out is 504, one that crashes 502, and a file too large for the app 413.
"""

import hashlib
from collections.abc import AsyncIterator, Awaitable
from datetime import datetime
from typing import Annotated, Any, Final, Literal
from urllib.parse import quote

from artifactr.core import Actor, NotFound, Proposed, Rejection
from artifactr.fastapi import STATUS_CODES, ResolveActor, Unauthorized
from artifactr.fastapi.router import REFUSALS
from artifactr.workspace import Workspace, Workspaces
from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict

from artifactr.files.core.checkouts import Checkout, State
from artifactr.files.core.errors import AppFailure, FailureKind, FileTooLarge
from artifactr.files.core.leases import scope_of
from artifactr.files.core.manifests import DOCX, Blob, saved_name
from artifactr.files.native import CheckedIn, NativeFiles
from artifactr.files.native.diff import (
    DIFF_SCALE,
    FileDiff,
    ReviewDiff,
    TextDiff,
    proposal_diff,
    revision_diff,
)

MAX_INT: Final = 2**31 - 1
"""The largest version or page a path may name: what a database's integer holds."""

MAX_SCALE: Final = 4.0
"""The largest scale a page is rendered at, in pixels per point (288 dpi)."""

MIN_SCALE: Final = 0.1
"""The smallest scale a page is rendered at."""

CACHE_CONTROL: Final = "private, no-cache"
"""Bytes may be kept by the browser, but each use asks again, so access is checked each time."""

_ID_PATTERN: Final = r"^[A-Za-z0-9_.:-]+$"

WorkspacePath = Annotated[str, Path(min_length=1, max_length=255)]
"""A workspace's id in a path."""

ArtifactPath = Annotated[str, Path(min_length=1, max_length=255)]
"""An artifact's id in a path."""

CheckoutPath = Annotated[str, Path(min_length=1, max_length=255, pattern=_ID_PATTERN)]
"""A check-out's id in a path (``co_<hex>``)."""

VersionPath = Annotated[int, Path(ge=1, le=MAX_INT)]
"""A revision's version in a path, from 1."""

PagePath = Annotated[int, Path(ge=1, le=MAX_INT)]
"""A page in a path, from 1."""

_REFUSED: Final = REFUSALS[400]["model"]
_STATUSES: Final = {
    **STATUS_CODES,
    "artifact_busy": 409,
    "unsafe_file": 422,
    "app_refused": 422,
    "content_damaged": 409,
}
_APP_STATUSES: Final[dict[FailureKind, int]] = {
    "timeout": 504,
    "crashed": 502,
    "too_large": 413,
    "refused": 422,
}
_BINARY: Final = {"schema": {"type": "string", "format": "binary"}}
_ETAG: Final = {
    "ETag": {
        "description": "The bytes' SHA-256, quoted: a strong tag",
        "schema": {"type": "string"},
    }
}
_FILE: Final = {
    **_ETAG,
    "Content-Disposition": {
        "description": "Saves the file under its name (RFC 6266)",
        "schema": {"type": "string"},
    },
}
# RFC 5987's attr-char, less the alphanumerics quote() keeps anyway.
_ATTR_CHARS: Final = "!#$&+-.^_`|~"


def _refusals(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {status: {"model": _REFUSED, "description": "Refused"} for status in statuses}


def _body(description: str) -> dict[str, Any]:
    return {
        "requestBody": {"required": True, "description": description, "content": {DOCX: _BINARY}}
    }


# ─── bodies ───────────────────────────────────────────────────────────────────


class Uploaded(BaseModel):
    """What an upload did: created the file (201), or kept it as an agent's proposal (202)."""

    model_config = ConfigDict(frozen=True)

    status: Literal["applied", "proposed"]
    """Created, or proposed because the actor is an agent."""
    artifact_id: str | None = None
    """The new artifact (applied)."""
    version: int | None = None
    """Its version, 1 (applied)."""
    download_url: str | None = None
    """Where its bytes are (applied)."""
    proposal_id: str | None = None
    """The proposal to create it (proposed)."""


class CheckoutState(BaseModel):
    """A check-out: what was checked out, until when, and where to download its base."""

    model_config = ConfigDict(frozen=True)

    id: str
    """The check-out's id, which check-in, extend and discard name."""
    artifact_id: str
    """The artifact checked out."""
    base_version: int
    """The version downloaded and edited, which the check-in is based on."""
    base_sha256: str
    """That version's content digest: the download's ``ETag``."""
    holder: str
    """The lease's holder, as the lease route and a busy refusal name it."""
    expires_at: datetime
    """When the lease lapses unless extended; when it ended, once it did."""
    checked_in: bool
    """Whether it was checked in."""
    state: State
    """``open``, or how it ended: ``checked_in`` or ``discarded`` (ADR-0009)."""
    ended_by: Actor | None
    """Who ended it: who checked it in, or who discarded or broke it; None while open."""
    ended_at: datetime | None
    """When it ended; None while open."""
    download_url: str
    """Where the base version's bytes are."""


class Holder(BaseModel):
    """Who holds a file, and until when."""

    model_config = ConfigDict(frozen=True)

    holder: str
    """``checkout:<checkout id>:<participant>`` or ``edit:<uuid>``."""
    expires_at: datetime
    """When another holder may take the file."""


class LeaseState(BaseModel):
    """A file's lease: who holds it, or None if it is free."""

    model_config = ConfigDict(frozen=True)

    artifact_id: str
    """The artifact."""
    lease: Holder | None
    """The live lease, or None."""


# ─── the router ───────────────────────────────────────────────────────────────


def files_router(
    files: NativeFiles, workspaces: Workspaces, *, resolve_actor: ResolveActor
) -> APIRouter:
    """Return the router for native files: upload, check-out, check-in, downloads and pages.

    Its routes are under ``/workspaces/{workspace_id}/files``; include it with the prefix
    artifactr's router has.

    Args:
        files: The service every route calls.
        workspaces: Opens each request's workspace as its actor, asking ``authorize`` and
            ``hidden``; the same one ``files`` was built for.
        resolve_actor: Authenticates each request: returns its tenant and actor, or raises
            :class:`~artifactr.fastapi.Unauthorized`.
    """
    router = APIRouter(prefix="/workspaces/{workspace_id}/files", responses=_refusals(401, 403))

    async def open_workspace(request: Request, workspace_id: WorkspacePath) -> Workspace:
        try:
            tenant_id, actor = await resolve_actor(request)
        except Unauthorized as error:
            raise HTTPException(status_code=401, detail=str(error) or "unauthorized") from error
        return await _or_http(workspaces.open(tenant_id, workspace_id, actor=actor))

    current = Depends(open_workspace)

    def download_url(request: Request, ws: Workspace, artifact_id: str, version: int) -> str:
        url = request.url_for(
            "download_file",
            workspace_id=quote(ws.workspace_id, safe=""),
            artifact_id=quote(artifact_id, safe=""),
            version=str(version),
        )
        return str(url)

    def state(request: Request, ws: Workspace, record: Checkout) -> CheckoutState:
        return CheckoutState(
            id=record.id,
            artifact_id=record.artifact_id,
            base_version=record.base_version,
            base_sha256=record.base_sha256,
            holder=record.holder,
            expires_at=record.expires_at,
            checked_in=record.checked_in,
            state=record.state,
            ended_by=record.ended_by,
            ended_at=record.ended_at,
            download_url=download_url(request, ws, record.artifact_id, record.base_version),
        )

    async def found_checkout(ws: Workspace, artifact_id: str, checkout_id: str) -> None:
        # The artifact first, so a hidden one is answered as a missing one whatever the id;
        # then the record, found only under the artifact it names.
        await files.manifest(ws, artifact_id)
        record = await files.checkouts.get(scope_of(ws), checkout_id)
        if record is None or record.artifact_id != artifact_id:
            raise NotFound("checkout", checkout_id)

    async def own_checkout(ws: Workspace, artifact_id: str, checkout_id: str) -> Checkout:
        await found_checkout(ws, artifact_id, checkout_id)
        return await files.checkout(ws, checkout_id)

    @router.post(
        "",
        status_code=201,
        responses={
            202: {"model": Uploaded, "description": "Kept as a proposal: an agent's upload"},
            **_refusals(400, 403, 413, 422, 502, 504),
        },
        openapi_extra=_body("The file's bytes, streamed; Content-Type is its media type."),
    )
    async def upload_file(
        request: Request,
        response: Response,
        name: Annotated[str, Query(min_length=1, max_length=255)],
        ws: Workspace = current,
    ) -> Uploaded:
        """Create a native file from the request's raw body, named ``name``.

        A person's upload creates it (201, with a ``Location`` to download it); an agent's is a
        proposal (202).
        """
        outcome = await _or_http(
            files.upload(ws, name, request.stream(), media_type=_media_type(request))
        )
        if isinstance(outcome, Proposed):
            response.status_code = 202
            return Uploaded(status="proposed", proposal_id=outcome.proposal_id)
        url = download_url(request, ws, outcome.artifact_id, outcome.version)
        response.headers["Location"] = url
        return Uploaded(
            status="applied",
            artifact_id=outcome.artifact_id,
            version=outcome.version,
            download_url=url,
        )

    @router.get(
        "/{artifact_id}/versions/{version}/content",
        name="download_file",
        response_class=Response,
        responses={
            200: {
                "content": {DOCX: _BINARY},
                "headers": _FILE,
                "description": "The revision's bytes",
            },
            304: {"headers": _ETAG, "description": "Not modified: the ETag matches"},
            **_refusals(404, 409, 422),
        },
    )
    async def download_file(
        request: Request,
        artifact_id: ArtifactPath,
        version: VersionPath,
        ws: Workspace = current,
    ) -> Response:
        """Stream a revision's bytes, with its content digest as a strong ``ETag``.

        Size, digest and type are the blob store's record, never the manifest's claim; a
        manifest that names bytes the store doesn't hold so is refused as ``content_damaged``
        (409). ``If-None-Match`` with that tag answers 304 with no body.
        """
        _, manifest, record = await _or_http(files.stored(ws, artifact_id, version))
        headers = _file_headers(manifest.name, record)
        if _matches(request, headers["ETag"]):
            return Response(status_code=304, headers=_cache_headers(headers["ETag"]))
        chunks = files.blobs.read(scope_of(ws), artifact_id, record.sha256)
        first = await _or_http(anext(chunks, b""))
        return StreamingResponse(
            _chained(first, chunks), media_type=record.media_type, headers=headers
        )

    @router.head(
        "/{artifact_id}/versions/{version}/content",
        response_class=Response,
        responses={
            200: {"headers": _FILE, "description": "The revision's headers, without its bytes"},
            304: {"headers": _ETAG, "description": "Not modified: the ETag matches"},
            **_refusals(404, 409, 422),
        },
    )
    async def file_headers(
        request: Request,
        artifact_id: ArtifactPath,
        version: VersionPath,
        ws: Workspace = current,
    ) -> Response:
        """Answer as the download would, without its bytes: its size, type and ``ETag``."""
        _, manifest, record = await _or_http(files.stored(ws, artifact_id, version))
        headers = _file_headers(manifest.name, record)
        if _matches(request, headers["ETag"]):
            return Response(status_code=304, headers=_cache_headers(headers["ETag"]))
        return Response(media_type=record.media_type, headers=headers)

    @router.get(
        "/{artifact_id}/versions/{version}/pages/{page}",
        response_class=Response,
        responses={
            200: {
                "content": {"image/png": _BINARY},
                "headers": _ETAG,
                "description": "The page as a PNG",
            },
            304: {"headers": _ETAG, "description": "Not modified: the ETag matches"},
            **_refusals(404, 409, 413, 422, 502, 504),
        },
    )
    async def file_page(
        request: Request,
        artifact_id: ArtifactPath,
        version: VersionPath,
        page: PagePath,
        scale: Annotated[float, Query(ge=MIN_SCALE, le=MAX_SCALE, allow_inf_nan=False)] = 1.0,
        ws: Workspace = current,
    ) -> Response:
        """Return a page of a revision as a PNG, rendered once and then cached.

        ``scale`` is pixels per point (1 is 72 dpi), rounded to the nearest 0.05. A page past
        the last is refused (422).
        """
        png = await _or_http(files.render(ws, artifact_id, version, page, scale=scale))
        etag = f'"{hashlib.sha256(png).hexdigest()}"'
        if _matches(request, etag):
            return Response(status_code=304, headers=_cache_headers(etag))
        return Response(png, media_type="image/png", headers=_cache_headers(etag))

    @router.get("/{artifact_id}/lease", responses=_refusals(404, 422))
    async def file_lease(artifact_id: ArtifactPath, ws: Workspace = current) -> LeaseState:
        """Return who holds the file and until when, or a null lease if it is free."""
        lease = await _or_http(files.lease(ws, artifact_id))
        holder = None if lease is None else Holder(holder=lease.holder, expires_at=lease.expires_at)
        return LeaseState(artifact_id=artifact_id, lease=holder)

    @router.post("/{artifact_id}/checkouts", responses=_refusals(404, 409, 422))
    async def check_out(
        request: Request, artifact_id: ArtifactPath, ws: Workspace = current
    ) -> CheckoutState:
        """Check the head out to the caller, exclusively, until it expires or is checked in.

        The answer names the version to download and edit. If someone holds the file, it is
        refused (409) with the lease: who holds it and until when.
        """
        record = await _or_http(files.check_out(ws, artifact_id))
        return state(request, ws, record)

    @router.get("/{artifact_id}/checkouts/{checkout_id}", responses=_refusals(404, 422))
    async def get_checkout(
        request: Request,
        artifact_id: ArtifactPath,
        checkout_id: CheckoutPath,
        ws: Workspace = current,
    ) -> CheckoutState:
        """Return one of the caller's check-outs of the file."""
        record = await _or_http(own_checkout(ws, artifact_id, checkout_id))
        return state(request, ws, record)

    @router.post(
        "/{artifact_id}/checkouts/{checkout_id}/extend", responses=_refusals(404, 409, 422)
    )
    async def extend_checkout(
        request: Request,
        artifact_id: ArtifactPath,
        checkout_id: CheckoutPath,
        ws: Workspace = current,
    ) -> CheckoutState:
        """Extend one of the caller's check-outs by its full length from now."""

        async def extend() -> Checkout:
            await own_checkout(ws, artifact_id, checkout_id)
            return await files.extend(ws, checkout_id)

        return state(request, ws, await _or_http(extend()))

    @router.delete(
        "/{artifact_id}/checkouts/{checkout_id}",
        status_code=204,
        response_class=Response,
        responses=_refusals(404, 422),
    )
    async def discard_checkout(
        artifact_id: ArtifactPath, checkout_id: CheckoutPath, ws: Workspace = current
    ) -> Response:
        """End a check-out without checking anything in; the file is free.

        The caller's own, or anyone's if the caller may archive the file (ADR-0006). The
        check-out is kept as discarded, so discarding it again answers alike, and a late
        check-in of it is kept as a proposal that says who discarded it (ADR-0009).
        """

        async def discard() -> None:
            await found_checkout(ws, artifact_id, checkout_id)
            await files.discard(ws, checkout_id)

        await _or_http(discard())
        return Response(status_code=204)

    @router.post(
        "/{artifact_id}/checkouts/{checkout_id}/check-in",
        responses={
            202: {
                "model": CheckedIn,
                "description": "Kept as a proposal: the check-in was stale, or its check-out "
                "was discarded",
            },
            **_refusals(404, 409, 413, 422, 502, 504),
        },
        openapi_extra=_body("The edited file's bytes, streamed."),
    )
    async def check_in(
        request: Request,
        response: Response,
        artifact_id: ArtifactPath,
        checkout_id: CheckoutPath,
        summary: Annotated[str | None, Query(max_length=1_000)] = None,
        ws: Workspace = current,
    ) -> CheckedIn:
        """Check the file in from the request's raw body, against the check-out's base.

        Applied: a new version. Unchanged: the upload equals the head, nothing was made.
        Proposed (202): the check-out lapsed and someone committed meanwhile, or it was
        discarded (``ended_by`` and ``ended_at`` say by whom and when), so it was kept as a
        proposal against the head. A retry with the same file, at once or later, answers
        exactly what the first did; with another file it is refused (409).
        """

        async def checked_in() -> CheckedIn:
            await own_checkout(ws, artifact_id, checkout_id)
            return await files.check_in(ws, checkout_id, request.stream(), summary=summary)

        outcome = await _or_http(checked_in())
        if outcome.status == "proposed":
            response.status_code = 202
        return outcome

    _add_diff_routes(router, files, current)
    return router


# ─── diffs (ADR-0011) ─────────────────────────────────────────────────────────

ProposalPath = Annotated[str, Path(min_length=1, max_length=255, pattern=_ID_PATTERN)]
"""A proposal's id in a path (``prop_<hex>``)."""


class DiffPage(BaseModel):
    """A page whose renders differ, with the two renders to show side by side."""

    model_config = ConfigDict(frozen=True)

    page: int
    """The page, from 1."""
    before_url: str | None
    """The first side's render, at the diff's scale; None if it has no such page."""
    after_url: str | None
    """The second side's; None if it has no such page."""


class Diff(BaseModel):
    """What changed in a native file: text hunks, review changes and differing pages."""

    model_config = ConfigDict(frozen=True)

    artifact_id: str
    """The artifact."""
    before_version: int
    """The first revision, or the proposal's base."""
    after_version: int | None
    """The second revision; None for a proposal."""
    proposal_id: str | None
    """The proposal compared with its base, if it is one."""
    before_pages: int | None
    """The first side's page count, if the app knows it."""
    after_pages: int | None
    """The second side's."""
    text: TextDiff
    """The changed paragraphs, as hunks; ``truncated`` if cut at the size cap."""
    review: ReviewDiff
    """Comments and tracked changes added, removed and changed."""
    pages: list[DiffPage]
    """The pages whose renders differ, in order."""
    pages_compared: int
    """How many pages were compared."""
    pages_truncated: bool
    """Whether pages past the cap were left uncompared."""


def _add_diff_routes(router: APIRouter, files: NativeFiles, current: Any) -> None:
    def page_url(request: Request, ws: Workspace, artifact_id: str, version: int, page: int) -> str:
        url = request.url_for(
            "file_page",
            workspace_id=quote(ws.workspace_id, safe=""),
            artifact_id=quote(artifact_id, safe=""),
            version=str(version),
            page=str(page),
        )
        return f"{url}?scale={DIFF_SCALE}"

    def proposal_page_url(request: Request, ws: Workspace, found: FileDiff, page: int) -> str:
        url = request.url_for(
            "proposal_page",
            workspace_id=quote(ws.workspace_id, safe=""),
            artifact_id=quote(found.artifact_id, safe=""),
            proposal_id=quote(found.proposal_id or "", safe=""),
            page=str(page),
        )
        return f"{url}?scale={DIFF_SCALE}"

    def answer(request: Request, ws: Workspace, found: FileDiff) -> Diff:
        def after(page: int) -> str:
            if found.after_version is None:
                return proposal_page_url(request, ws, found, page)
            return page_url(request, ws, found.artifact_id, found.after_version, page)

        pages = [
            DiffPage(
                page=changed.page,
                before_url=page_url(
                    request, ws, found.artifact_id, found.before_version, changed.page
                )
                if changed.before
                else None,
                after_url=after(changed.page) if changed.after else None,
            )
            for changed in found.pages
        ]
        return Diff(
            **found.model_dump(exclude={"pages", "text", "review"}),
            text=found.text,
            review=found.review,
            pages=pages,
        )

    @router.get("/{artifact_id}/diff", responses=_refusals(404, 413, 422, 502, 504))
    async def file_diff(
        request: Request,
        artifact_id: ArtifactPath,
        before: Annotated[int, Query(alias="from", ge=1, le=MAX_INT)],
        after: Annotated[int, Query(alias="to", ge=1, le=MAX_INT)],
        ws: Workspace = current,
    ) -> Diff:
        """Return what changed from version ``from`` to version ``to`` (``from`` < ``to``).

        The changed text as paragraph hunks, the comments and tracked changes added, removed
        and changed, the page counts, and the pages whose renders differ, each with its two
        render URLs. Pages are compared through the render cache: a second request renders
        nothing. Either version hidden or missing is 404.
        """
        found = await _or_http(revision_diff(files, ws, artifact_id, before, after))
        return answer(request, ws, found)

    @router.get(
        "/{artifact_id}/proposals/{proposal_id}/diff", responses=_refusals(404, 413, 422, 502, 504)
    )
    async def proposal_file_diff(
        request: Request,
        artifact_id: ArtifactPath,
        proposal_id: ProposalPath,
        ws: Workspace = current,
    ) -> Diff:
        """Return what a pending proposal would change in the file, against its base version.

        As the revision diff; the proposal's pages are served by its own page route.
        """
        found = await _or_http(proposal_diff(files, ws, artifact_id, proposal_id))
        return answer(request, ws, found)

    @router.get(
        "/{artifact_id}/proposals/{proposal_id}/pages/{page}",
        name="proposal_page",
        response_class=Response,
        responses={
            200: {
                "content": {"image/png": _BINARY},
                "headers": _ETAG,
                "description": "The page as a PNG",
            },
            304: {"headers": _ETAG, "description": "Not modified: the ETag matches"},
            **_refusals(404, 413, 422, 502, 504),
        },
    )
    async def proposal_page(
        request: Request,
        artifact_id: ArtifactPath,
        proposal_id: ProposalPath,
        page: PagePath,
        scale: Annotated[float, Query(ge=MIN_SCALE, le=MAX_SCALE, allow_inf_nan=False)] = 1.0,
        ws: Workspace = current,
    ) -> Response:
        """Return a page of the file a pending proposal would make, as a PNG, cached."""
        png = await _or_http(files.render_proposal(ws, artifact_id, proposal_id, page, scale=scale))
        etag = f'"{hashlib.sha256(png).hexdigest()}"'
        if _matches(request, etag):
            return Response(status_code=304, headers=_cache_headers(etag))
        return Response(png, media_type="image/png", headers=_cache_headers(etag))


# ─── helpers ──────────────────────────────────────────────────────────────────


async def _or_http[T](awaitable: Awaitable[T]) -> T:
    try:
        return await awaitable
    except Rejection as rejection:
        status = 413 if isinstance(rejection, FileTooLarge) else _STATUSES.get(rejection.code, 400)
        raise HTTPException(status_code=status, detail=rejection.payload()) from rejection
    except AppFailure as failure:
        detail = {"type": f"app_{failure.kind}", "message": failure.reason}
        raise HTTPException(status_code=_APP_STATUSES[failure.kind], detail=detail) from failure


def _media_type(request: Request) -> str | None:
    # A browser or a portal that knows no better sends application/octet-stream: the bytes
    # themselves decide, as with no type at all.
    value = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    return None if value in {"", "application/octet-stream"} else value


def content_disposition(name: str) -> str:
    """Return a ``Content-Disposition`` that saves a file as ``name`` (RFC 6266, RFC 5987).

    The name is cleaned first (:func:`~artifactr.files.core.manifests.saved_name`): no control or
    direction characters, at most 255 UTF-8 bytes, its extension kept. ``filename`` is an
    ASCII fallback, with anything else replaced by ``_``; ``filename*`` is the name itself, in
    UTF-8, percent-encoded.
    """
    name = saved_name(name)
    fallback = "".join(c if " " <= c <= "~" and c not in '"\\%' else "_" for c in name)
    encoded = quote(name.encode(), safe=_ATTR_CHARS)
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{encoded}"


def _cache_headers(etag: str) -> dict[str, str]:
    return {"ETag": etag, "Cache-Control": CACHE_CONTROL, "X-Content-Type-Options": "nosniff"}


def _file_headers(name: str, record: Blob) -> dict[str, str]:
    # Size, digest and type are the store's record of the bytes, never the manifest's claim.
    return {
        **_cache_headers(f'"{record.sha256}"'),
        "Content-Length": str(record.size),
        "Content-Disposition": content_disposition(name),
        "Accept-Ranges": "none",
    }


def _matches(request: Request, etag: str) -> bool:
    # If-None-Match compares weakly (RFC 9110 13.1.2): W/"x" matches "x".
    tags = {
        tag.strip().removeprefix("W/")
        for tag in request.headers.get("if-none-match", "").split(",")
    }
    return etag in tags or "*" in tags


async def _chained(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for chunk in rest:
        yield chunk
