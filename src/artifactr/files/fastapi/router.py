"""Files router: upload, check-out, check-in and downloads of native files over HTTP (RFC-0003).

:func:`files_router` is a FastAPI router mounted beside artifactr's ``artifactr_router``, with the
same ``resolve_actor`` convention: it returns the request's tenant and actor, or raises
:class:`~artifactr.fastapi.Unauthorized` (401). Each request opens its workspace through
:meth:`Workspaces.open <artifactr.workspace.Workspaces.open>` as that actor, so every call passes
the workspaces' ``authorize`` and ``hidden`` hooks, and the switch (ADR-0006)::

    app.include_router(artifactr_router(workspaces, runner, resolve_actor=resolve_actor))
    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))

Every route names an artifact, and a revision where it serves bytes, never a bare digest. Bytes
are served only once the artifact resolved through the workspace, so a hidden artifact is
answered exactly as a missing one. Uploads and check-ins take the file as the raw body or as a
``multipart/form-data`` form (:mod:`~artifactr.files.fastapi.bodies`) and stream it into
:class:`~artifactr.files.native.NativeFiles`, which hashes it as it arrives and spools it to
disk, so memory stays flat at any size. Downloads stream too, with the content digest as a
strong ``ETag``. Refusals answer as :func:`~artifactr.files.fastapi.http_answers.or_http` says;
the diff routes are :mod:`~artifactr.files.fastapi.diffs`'.
"""

from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Annotated, Any, Final, Literal
from urllib.parse import quote

from artifactr.core import Actor, Applied, NotFound, Proposed
from artifactr.fastapi import ResolveActor, Unauthorized
from artifactr.workspace import Workspace, Workspaces
from fastapi import APIRouter, Depends, HTTPException, Path, Query, Request, Response
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict

from artifactr.files.core.checkouts import Checkout, State
from artifactr.files.core.leases import scope_of
from artifactr.files.core.manifests import DOCX, PPTX, XLSX, Blob, saved_name
from artifactr.files.fastapi.bodies import FORM, OCTETS, read_body
from artifactr.files.fastapi.diffs import add_diff_routes
from artifactr.files.fastapi.http_answers import (
    BINARY,
    ETAG,
    ID_PATTERN,
    MAX_INT,
    ArtifactPath,
    PagePath,
    ScaleQuery,
    cache_headers,
    cached_png,
    matches,
    or_http,
    png_responses,
    refusals,
)
from artifactr.files.native import CheckedIn, NativeFiles

SUMMARY: Final = 1_000
"""The most characters of a check-in's summary."""

WorkspacePath = Annotated[str, Path(min_length=1, max_length=255)]
"""A workspace's id in a path."""

CheckoutPath = Annotated[str, Path(min_length=1, max_length=255, pattern=ID_PATTERN)]
"""A check-out's id in a path (``co_<hex>``)."""

VersionPath = Annotated[int, Path(ge=1, le=MAX_INT)]
"""A revision's version in a path, from 1."""

_FILE: Final = {
    **ETAG,
    "Content-Disposition": {
        "description": "Saves the file under its name (RFC 6266)",
        "schema": {"type": "string"},
    },
}
# RFC 5987's attr-char, less the alphanumerics quote() keeps anyway.
_ATTR_CHARS: Final = "!#$&+-.^_`|~"


def _body(description: str, **fields: dict[str, Any]) -> dict[str, Any]:
    file = {**BINARY["schema"], "description": "The file, in a part with a filename"}
    form = {"type": "object", "properties": {**fields, "file": file}, "required": ["file"]}
    content = {
        DOCX: BINARY,
        XLSX: BINARY,
        PPTX: BINARY,
        OCTETS: BINARY,
        FORM: {"schema": form},
    }
    return {"requestBody": {"required": True, "description": description, "content": content}}


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
    router = APIRouter(prefix="/workspaces/{workspace_id}/files", responses=refusals(401, 403))

    async def open_workspace(request: Request, workspace_id: WorkspacePath) -> Workspace:
        try:
            tenant_id, actor = await resolve_actor(request)
        except Unauthorized as error:
            raise HTTPException(status_code=401, detail=str(error) or "unauthorized") from error
        return await or_http(workspaces.open(tenant_id, workspace_id, actor=actor))

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
            **refusals(400, 403, 413, 415, 422, 502, 503, 504),
        },
        openapi_extra=_body(
            "The file: the raw body, streamed, whose Content-Type is its media type (or "
            "application/octet-stream, or none: the bytes decide); or a multipart/form-data "
            "form with one file part, whose filename names the file when name doesn't."
        ),
    )
    async def upload_file(
        request: Request,
        response: Response,
        name: Annotated[str | None, Query(min_length=1, max_length=255)] = None,
        ws: Workspace = current,
    ) -> Uploaded:
        """Create a native file from the request's body, named ``name`` or the form's filename.

        A person's upload creates it (201, with a ``Location`` to download it); an agent's is a
        proposal (202). A file with neither name is refused (422).
        """
        outcome = await or_http(upload_from(request, files, ws, name))
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
                "content": {DOCX: BINARY, XLSX: BINARY, PPTX: BINARY},
                "headers": _FILE,
                "description": "The revision's bytes",
            },
            304: {"headers": ETAG, "description": "Not modified: the ETag matches"},
            **refusals(404, 409, 422),
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
        _, manifest, record = await or_http(files.stored(ws, artifact_id, version))
        headers = _file_headers(manifest.name, record)
        if matches(request, headers["ETag"]):
            return Response(status_code=304, headers=cache_headers(headers["ETag"]))
        chunks = files.blobs.read(scope_of(ws), artifact_id, record.sha256)
        first = await or_http(anext(chunks, b""))
        return StreamingResponse(
            _chained(first, chunks), media_type=record.media_type, headers=headers
        )

    @router.head(
        "/{artifact_id}/versions/{version}/content",
        response_class=Response,
        responses={
            200: {"headers": _FILE, "description": "The revision's headers, without its bytes"},
            304: {"headers": ETAG, "description": "Not modified: the ETag matches"},
            **refusals(404, 409, 422),
        },
    )
    async def file_headers(
        request: Request,
        artifact_id: ArtifactPath,
        version: VersionPath,
        ws: Workspace = current,
    ) -> Response:
        """Answer as the download would, without its bytes: its size, type and ``ETag``."""
        _, manifest, record = await or_http(files.stored(ws, artifact_id, version))
        headers = _file_headers(manifest.name, record)
        if matches(request, headers["ETag"]):
            return Response(status_code=304, headers=cache_headers(headers["ETag"]))
        return Response(media_type=record.media_type, headers=headers)

    @router.get(
        "/{artifact_id}/versions/{version}/pages/{page}",
        response_class=Response,
        responses=png_responses(404, 409, 413, 422, 502, 504),
    )
    async def file_page(
        request: Request,
        artifact_id: ArtifactPath,
        version: VersionPath,
        page: PagePath,
        scale: ScaleQuery = 1.0,
        ws: Workspace = current,
    ) -> Response:
        """Return a page of a revision as a PNG, rendered once and then cached.

        ``scale`` is pixels per point (1 is 72 dpi), rounded to the nearest 0.05. A page past
        the last is refused (422).
        """
        png = await or_http(files.render(ws, artifact_id, version, page, scale=scale))
        return cached_png(request, png)

    @router.get("/{artifact_id}/lease", responses=refusals(404, 422))
    async def file_lease(artifact_id: ArtifactPath, ws: Workspace = current) -> LeaseState:
        """Return who holds the file and until when, or a null lease if it is free."""
        lease = await or_http(files.lease(ws, artifact_id))
        holder = None if lease is None else Holder(holder=lease.holder, expires_at=lease.expires_at)
        return LeaseState(artifact_id=artifact_id, lease=holder)

    @router.post("/{artifact_id}/checkouts", responses=refusals(404, 409, 422))
    async def check_out(
        request: Request, artifact_id: ArtifactPath, ws: Workspace = current
    ) -> CheckoutState:
        """Check the head out to the caller, exclusively, until it expires or is checked in.

        The answer names the version to download and edit. If someone holds the file, it is
        refused (409) with the lease: who holds it and until when.
        """
        record = await or_http(files.check_out(ws, artifact_id))
        return state(request, ws, record)

    @router.get("/{artifact_id}/checkouts/{checkout_id}", responses=refusals(404, 422))
    async def get_checkout(
        request: Request,
        artifact_id: ArtifactPath,
        checkout_id: CheckoutPath,
        ws: Workspace = current,
    ) -> CheckoutState:
        """Return one of the caller's check-outs of the file."""
        record = await or_http(own_checkout(ws, artifact_id, checkout_id))
        return state(request, ws, record)

    @router.post("/{artifact_id}/checkouts/{checkout_id}/extend", responses=refusals(404, 409, 422))
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

        return state(request, ws, await or_http(extend()))

    @router.delete(
        "/{artifact_id}/checkouts/{checkout_id}",
        status_code=204,
        response_class=Response,
        responses=refusals(404, 422),
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

        await or_http(discard())
        return Response(status_code=204)

    @router.post(
        "/{artifact_id}/checkouts/{checkout_id}/check-in",
        responses={
            202: {
                "model": CheckedIn,
                "description": "Kept as a proposal: the check-in was stale, or its check-out "
                "was discarded",
            },
            **refusals(400, 404, 409, 413, 415, 422, 502, 503, 504),
        },
        openapi_extra=_body(
            "The edited file: the raw body, streamed, or a multipart/form-data form with one "
            "file part, and a summary field before it when the query has none.",
            summary={"type": "string", "maxLength": SUMMARY},
        ),
    )
    async def check_in(
        request: Request,
        response: Response,
        artifact_id: ArtifactPath,
        checkout_id: CheckoutPath,
        summary: Annotated[str | None, Query(max_length=SUMMARY)] = None,
        ws: Workspace = current,
    ) -> CheckedIn:
        """Check the file in from the request's body, against the check-out's base.

        Applied: a new version. Unchanged: the upload equals the head, nothing was made.
        Proposed (202): the check-out lapsed and someone committed meanwhile, or it was
        discarded (``ended_by`` and ``ended_at`` say by whom and when), so it was kept as a
        proposal against the head. A retry with the same file, at once or later, answers
        exactly what the first did; with another file it is refused (409).
        """

        async def checked_in() -> CheckedIn:
            await own_checkout(ws, artifact_id, checkout_id)
            body = await read_body(request, fields={"summary": SUMMARY}, accept=files.formats)
            said = summary or body.fields.get("summary")
            return await files.check_in(ws, checkout_id, body.chunks, summary=said)

        outcome = await or_http(checked_in())
        if outcome.status == "proposed":
            response.status_code = 202
        return outcome

    add_diff_routes(router, files, current)
    return router


# ─── helpers ──────────────────────────────────────────────────────────────────


async def upload_from(
    request: Request,
    files: NativeFiles,
    ws: Workspace,
    name: str | None = None,
    *,
    passing: Callable[[AsyncIterator[bytes]], AsyncIterator[bytes]] | None = None,
) -> Applied | Proposed:
    """Upload the file a request sends, raw or in a form, as the files router and portal do.

    It is named ``name`` or the form's filename; its kind is read from its content, and a type
    the request declares must agree with it. ``passing`` sees the file's bytes on their way
    (the portal counts them, to tell an empty file from a bad one).

    Raises:
        Rejection: As :func:`~artifactr.files.fastapi.bodies.read_body` and
            :meth:`NativeFiles.upload <artifactr.files.native.upload.Upload.upload>` refuse.
        AppFailure: If the app can't read it.
    """
    body = await read_body(request, accept=files.formats)
    named = name or body.filename or ""
    chunks = body.chunks if passing is None else passing(body.chunks)
    return await files.upload(ws, named, chunks, media_type=body.media_type)


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


def _file_headers(name: str, record: Blob) -> dict[str, str]:
    # Size, digest and type are the store's record of the bytes, never the manifest's claim.
    return {
        **cache_headers(f'"{record.sha256}"'),
        "Content-Length": str(record.size),
        "Content-Disposition": content_disposition(name),
        "Accept-Ranges": "none",
    }


async def _chained(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for chunk in rest:
        yield chunk
