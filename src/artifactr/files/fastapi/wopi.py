"""WOPI host: a browser editor (Collabora, OnlyOffice, Office for the web) edits a native file.

:func:`wopi_router` is mounted beside ``files_router``; an editor reaches it at
``/wopi/files/{artifact_id}`` (the ``WOPISrc``) with an ``access_token`` minted by
:func:`~artifactr.files.fastapi.wopi_tokens.mint_access_token` for one person and one file::

    settings = WopiSettings(secret=secret, discovery=DiscoveryCache(discovery_url))
    app.include_router(wopi_router(files, workspaces, settings))

Every request resolves the person from its token and opens the token's workspace as them, so
it passes the workspaces' ``authorize`` and ``hidden`` hooks and the switch as every other
route does: a hidden file is answered as a missing one (404), and a person who may only read
is told ``UserCanWrite: false`` and refused every lock operation, GetLock and PutFile (403,
nothing changed; ADR-0023). A token that is malformed,
forged, expired or for another file is 401. With discovery configured, a request's proof is
verified first (500 when it fails, as the spec asks). Nothing answered carries a token.

The operations (ADR-0016, on :mod:`~artifactr.files.native.editing`, ADR-0017):

- ``CheckFileInfo`` (``GET``), ``GetFile`` (``GET .../contents``);
- ``Lock``, ``RefreshLock``, ``Unlock``, ``UnlockAndRelock``, ``GetLock`` (``POST`` with
  ``X-WOPI-Override``): the lock is the editor session's check-out, 30 minutes, renewed by
  ``RefreshLock`` or ``Lock`` with the same string. A mismatch is 409 with the lock that holds
  the file in ``X-WOPI-Lock`` (empty when none does);
- ``PutFile`` (``POST .../contents``): a save under the lock (a revision as the person, or a
  proposal when the file moved on); without a lock 409, as for any file that is not empty;
- ``PutRelativeFile`` and every other operation the spec names: 501 (``UserCanNotWriteRelative``
  says so); an override the spec doesn't name: 400.

A save kept as a proposal (the file moved on, or its session was ended by someone) answers
every editor 409 with ``X-WOPI-LockFailureReason`` saying so, and the proposal in the body, so
the editor tells the person their bytes are not the head (ADR-0023). A refusal's
``X-WOPI-Lock`` shows a WOPI lock only, never a WebDAV token.

Collabora's own contract is kept: its ``X-COOL-WOPI-Timestamp`` (or ``X-LOOL-``) names the
``LastModifiedTime`` it loaded, and a save after someone else's revision is kept as a proposal
and answered 409 ``{"COOLStatusCode": 1010}``; a save answers ``{"LastModifiedTime": ...}``;
``IsModifiedByUser``, ``IsAutosave`` and ``IsExitSave`` go into the revision's summary.
``LastModifiedTime`` is when the version was made, as the workspace's log says, to the second,
with the version as its microseconds (ADR-0035): editors show it as the file's date, and it is
strictly increasing across versions (a later version is made no earlier, and its microseconds
are larger) and reads back as the version Collabora loaded. Where the person may not read the
log, it is the version as seconds after 2000, as it was before (ADR-0016).
"""

import base64
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Final
from urllib.parse import quote

from artifactr import UserActor
from artifactr.core import Forbidden, Rejection
from artifactr.workspace import Access, Workspace, Workspaces
from fastapi import APIRouter, Header, Path, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse

from artifactr.files.core.clock import Clock, rfc3339, utc_now
from artifactr.files.core.errors import AppFailure, FileTooLarge
from artifactr.files.core.leases import EDIT_ACTION, ArtifactBusy
from artifactr.files.core.manifests import DOCX, NativeFile
from artifactr.files.fastapi.http_answers import APP_STATUSES, STATUSES
from artifactr.files.fastapi.wopi_discovery import DiscoveryCache, ProofRefused, verify_proof
from artifactr.files.fastapi.wopi_tokens import (
    TOKEN_LIFETIME,
    AccessToken,
    AccessTokenRefused,
    TokenGrant,
    mint_access_token,
    read_access_token,
)
from artifactr.files.native import EDITOR_TTL, CheckedIn, NativeFiles
from artifactr.files.native.editing import LockMismatch

PREFIX: Final = "/wopi/files"
"""Where the router's routes are: a file's ``WOPISrc`` is ``<base>/wopi/files/<artifact id>``."""

STAMP_EPOCH: Final = datetime(2000, 1, 1, tzinfo=UTC)
"""Where version stamps without a time begin: version ``n`` is ``n`` seconds after it."""

STAMPED_VERSIONS: Final = 1_000_000
"""How many versions a stamp's microseconds tell apart: past them a stamp reads back as an older
version, so a save is kept as a proposal (never lost), and stamps within one second repeat."""

UNSUPPORTED: Final = frozenset(
    {
        "PUT_RELATIVE",
        "RENAME_FILE",
        "DELETE",
        "PUT_USER_INFO",
        "GET_SHARE_URL",
        "GET_RESTRICTED_LINK",
        "REVOKE_RESTRICTED_LINK",
        "READ_SECURE_STORE",
        "ADD_ACTIVITIES",
        "COBALT",
        "CHECK_CONTAINER_INFO",
        "CREATE_CHILD_CONTAINER",
        "CREATE_CHILD_FILE",
        "DELETE_CONTAINER",
        "ENUMERATE_ANCESTORS",
        "ENUMERATE_CHILDREN",
        "GET_ECOSYSTEM",
        "GET_ROOT_CONTAINER",
        "RENAME_CONTAINER",
    }
)
"""The operations the spec names that this host doesn't do: 501."""

FileIdPath = Annotated[str, Path(min_length=1, max_length=255)]
"""An artifact's id, as the ``WOPISrc`` names it."""

TokenQuery = Annotated[str, Query()]
"""The ``access_token`` query parameter."""


@dataclass(frozen=True)
class WopiSettings:
    """How the host is deployed: its secret, the editor's discovery, and its limits."""

    secret: str | bytes
    """The deployment's secret every token is signed with (32 bytes or more)."""
    discovery: DiscoveryCache | None = None
    """The editor's discovery: its actions' URLs and its proof keys. Without it, no proof is
    checked and the portal offers no editor."""
    post_message_origin: str | None = None
    """The editor's origin, for ``PostMessageOrigin`` (Collabora: ``https://<host>``)."""
    token_lifetime: timedelta = TOKEN_LIFETIME
    """How long a minted token lasts."""
    lock_ttl: timedelta = EDITOR_TTL
    """How long a lock lasts unless refreshed: WOPI's 30 minutes."""
    clock: Clock = utc_now
    """The current time, for tokens and proofs."""


@dataclass(frozen=True)
class EditorLaunch:
    """What the portal posts, into a new tab, to open a file in the editor."""

    action_url: str
    """The editor's action URL with the file's ``WOPISrc``: the form's ``action``."""
    fields: dict[str, str]
    """The form's fields: ``access_token`` and ``access_token_ttl``."""
    action: str
    """``edit`` or ``view``: what the person may do."""


def version_stamp(version: int, made: datetime | None = None) -> str:
    """Return a version's ``LastModifiedTime``: when it was ``made``, the version in microseconds.

    Strictly increasing across versions as their times are; without a time, the version as
    seconds after :data:`STAMP_EPOCH`, its microseconds the version too.
    """
    moment = STAMP_EPOCH + timedelta(seconds=version) if made is None else made
    second = moment.astimezone(UTC).replace(microsecond=0)
    return rfc3339(second + timedelta(microseconds=version % STAMPED_VERSIONS))


def stamped_version(stamp: str) -> int:
    """Return the version a ``LastModifiedTime`` stamps, or 0 for one this host didn't give."""
    try:
        moment = datetime.fromisoformat(stamp.strip())
    except ValueError:
        return 0
    return moment.microsecond if moment.tzinfo is not None else 0


def wopi_src(base_url: str, artifact_id: str) -> str:
    """Return a file's ``WOPISrc``: where an editor reaches it on this host."""
    return f"{base_url.rstrip('/')}{PREFIX}/{quote(artifact_id, safe='')}"


async def editor_launch(
    settings: WopiSettings, files: NativeFiles, ws: Workspace, artifact_id: str, *, base_url: str
) -> EditorLaunch | None:
    """Return how the portal opens a file in the editor for the handle's person, or None.

    None when no editor is configured, its discovery offers no action for a .docx, or the
    actor is not a person. A person who may edit gets the ``edit`` action, else ``view``.

    Raises:
        NotFound: If the file is missing or hidden.
        DiscoveryRefused: If the editor's discovery is refused and none was read before.
        OSError: If it can't be fetched and none was read before.
    """
    if settings.discovery is None or not isinstance(ws.actor, UserActor):
        return None
    discovery = await settings.discovery.get()
    await files.manifest(ws, artifact_id)
    action = "edit" if await may_write(files, ws, artifact_id) else "view"
    url = discovery.action_url(action) or discovery.action_url("view")
    if url is None:
        return None
    token = _mint(settings, ws, artifact_id)
    joiner = "" if url.endswith(("?", "&")) else ("&" if "?" in url else "?")
    source = quote(wopi_src(base_url, artifact_id), safe="")
    return EditorLaunch(
        action_url=f"{url}{joiner}WOPISrc={source}",
        fields={"access_token": token.token, "access_token_ttl": str(token.ttl)},
        action=action,
    )


def _mint(settings: WopiSettings, ws: Workspace, artifact_id: str) -> AccessToken:
    person = ws.actor
    assert isinstance(person, UserActor), "only people are given tokens"
    return mint_access_token(
        settings.secret,
        tenant_id=ws.tenant_id,
        workspace_id=ws.workspace_id,
        artifact_id=artifact_id,
        person=person,
        lifetime=settings.token_lifetime,
        clock=settings.clock,
    )


async def may_write(files: NativeFiles, ws: Workspace, artifact_id: str) -> bool:
    """Return whether the handle's actor may edit the file here: the app on, and edit allowed."""
    if not await files.enabled(ws):
        return False
    try:
        await ws.check(Access(action=EDIT_ACTION, artifact_id=artifact_id))
    except Forbidden:
        return False
    return True


class _Answer(Exception):
    """A WOPI answer raised from deep in a route: its status, headers and body."""

    def __init__(
        self, status: int, headers: dict[str, str] | None = None, body: Any = None
    ) -> None:
        super().__init__(status)
        self.response = (
            Response(status_code=status, headers=headers)
            if body is None
            else JSONResponse(body, status_code=status, headers=headers)
        )


def _refused(refusal: Rejection | AppFailure) -> _Answer:
    """Return the WOPI answer to a refusal or an app's failure."""
    if isinstance(refusal, AppFailure):
        body = {"detail": {"type": f"app_{refusal.kind}", "message": refusal.reason}}
        return _Answer(APP_STATUSES[refusal.kind], body=body)
    if isinstance(refusal, ArtifactBusy):
        lock = refusal.lock if isinstance(refusal, LockMismatch) else None
        reason = str(refusal).encode("ascii", "replace").decode()[:1024]
        headers = {"X-WOPI-Lock": lock or "", "X-WOPI-LockFailureReason": reason}
        return _Answer(409, headers, {"detail": refusal.payload()})
    if isinstance(refusal, AccessTokenRefused):
        return _Answer(401, body={"detail": refusal.payload()})
    if isinstance(refusal, ProofRefused):
        return _Answer(500, body={"detail": refusal.payload()})
    status = 413 if isinstance(refusal, FileTooLarge) else STATUSES.get(refusal.code, 400)
    if refusal.code == "validation_failed":
        status = 400  # a lock too long, empty or not ASCII: WOPI's bad request
    return _Answer(status, body={"detail": refusal.payload()})


async def _answered(work: Callable[[], Awaitable[Response]]) -> Response:
    try:
        return await work()
    except _Answer as answer:
        return answer.response
    except (Rejection, AppFailure) as refusal:
        return _refused(refusal).response


def _summary(request: Request) -> str | None:
    """Return a save's summary from Collabora's headers (``X-COOL-WOPI-*`` or ``X-LOOL-``)."""
    said: list[str] = []
    for flag, words in (
        ("IsAutosave", "autosave"),
        ("IsExitSave", "saved on closing"),
    ):
        if (_cool(request, flag) or "").lower() == "true":
            said.append(words)
    if (_cool(request, "IsModifiedByUser") or "").lower() == "false":
        said.append("not modified by the person")
    if not said:
        return None
    return "saved in the editor (" + ", ".join(said) + ")"


def _kept(saved: CheckedIn) -> str:
    """Return why a save was kept as a proposal, as ``X-WOPI-LockFailureReason`` says it."""
    said = f"not saved over the file: kept as proposal {saved.proposal_id} for review"
    if saved.ended_by is not None:
        who = saved.ended_by.display_name
        return f"{said}, since {who} ended the editing session".encode("ascii", "replace").decode()
    return f"{said}, since someone saved version {saved.version} first"


def _cool(request: Request, name: str) -> str | None:
    """Return Collabora's header ``name``, as ``X-COOL-WOPI-`` or its ``X-LOOL-WOPI-`` twin."""
    value = request.headers.get(f"x-cool-wopi-{name}") or request.headers.get(f"x-lool-wopi-{name}")
    return None if value is None else value.strip()


def wopi_router(files: NativeFiles, workspaces: Workspaces, settings: WopiSettings) -> APIRouter:
    """Return the WOPI host's router, under ``/wopi/files``.

    Args:
        files: The service every operation calls.
        workspaces: Opens each request's workspace as the token's person, asking ``authorize``
            and ``hidden``; the same one ``files`` was built for.
        settings: The secret, the editor's discovery and the limits.
    """
    router = APIRouter(prefix=PREFIX, include_in_schema=False)

    async def opened(
        request: Request, artifact_id: str, token: str
    ) -> tuple[Workspace, TokenGrant]:
        grant = read_access_token(
            settings.secret, token, artifact_id=artifact_id, clock=settings.clock
        )
        discovery = None if settings.discovery is None else await settings.discovery.get()
        if discovery is not None and discovery.proof is not None:
            verify_proof(
                discovery,
                access_token=token,
                url=str(request.url),
                timestamp=request.headers.get("x-wopi-timestamp"),
                proof=request.headers.get("x-wopi-proof"),
                proof_old=request.headers.get("x-wopi-proofold"),
                now=settings.clock(),
            )
        ws = await workspaces.open(grant.tenant_id, grant.workspace_id, actor=grant.person)
        return ws, grant

    async def stamp_of(ws: Workspace, artifact_id: str, version: int) -> str:
        """Return the version's ``LastModifiedTime``: when the log says it was made."""
        try:
            made = await files.history.made(ws, {artifact_id: version})
        except Forbidden:
            return version_stamp(version)  # the log is not theirs to read: no time
        return version_stamp(version, made.get(artifact_id, (None, None))[1])

    async def version_of(ws: Workspace, artifact_id: str) -> dict[str, str]:
        version, _ = await files.manifest(ws, artifact_id)
        return {"X-WOPI-ItemVersion": str(version)}

    @router.get("/{file_id}", name="wopi_check_file_info")
    async def check_file_info(
        request: Request, file_id: FileIdPath, access_token: TokenQuery = ""
    ) -> Response:
        async def work() -> Response:
            ws, grant = await opened(request, file_id, access_token)
            version, head = await files.manifest(ws, file_id)
            writable = await may_write(files, ws, file_id)
            info = _file_info(settings, ws, grant, version, head, writable)
            info["LastModifiedTime"] = await stamp_of(ws, file_id, version)
            return JSONResponse(info)

        return await _answered(work)

    @router.get("/{file_id}/contents", name="wopi_get_file")
    async def get_file(
        request: Request,
        file_id: FileIdPath,
        access_token: TokenQuery = "",
        max_size: Annotated[int | None, Header(alias="X-WOPI-MaxExpectedSize")] = None,
    ) -> Response:
        async def work() -> Response:
            ws, _ = await opened(request, file_id, access_token)
            version, head = await files.manifest(ws, file_id)
            if max_size is not None and head.content.size > max_size:
                raise _Answer(412)
            chunks = files.content(ws, file_id, version)
            first = await anext(aiter(chunks), b"")  # a damaged file is refused before 200

            async def body() -> AsyncIterator[bytes]:
                yield first
                async for chunk in chunks:
                    yield chunk

            headers = {
                "X-WOPI-ItemVersion": str(version),
                "Content-Length": str(head.content.size),
                "X-Content-Type-Options": "nosniff",
                "Cache-Control": "no-store",
            }
            return StreamingResponse(body(), media_type=DOCX, headers=headers)

        return await _answered(work)

    @router.post("/{file_id}/contents", name="wopi_put_file")
    async def put_file(
        request: Request,
        file_id: FileIdPath,
        access_token: TokenQuery = "",
        override: Annotated[str, Header(alias="X-WOPI-Override")] = "",
        lock: Annotated[str, Header(alias="X-WOPI-Lock")] = "",
    ) -> Response:
        async def work() -> Response:
            ws, _ = await opened(request, file_id, access_token)
            if override.strip().upper() != "PUT":
                raise _Answer(400, body={"detail": {"type": "unknown_override"}})
            if not lock:
                # Every native file is a package, never empty: PutFile needs the lock. A viewer
                # is refused (403) before any lock is shown, and a WebDAV token never is.
                current = await files.current_lock(ws, file_id, personal=False)
                raise _Answer(409, {"X-WOPI-Lock": current or ""})
            length = request.headers.get("content-length", "")
            if length.isdigit() and int(length) > files.max_size:
                await files.manifest(ws, file_id)  # a hidden file is still missing
                raise FileTooLarge(files.max_size)
            stamp = _cool(request, "Timestamp")
            loaded = None if stamp is None else stamped_version(stamp)
            saved = await files.save(
                ws, file_id, request.stream(), lock=lock, summary=_summary(request), loaded=loaded
            )
            headers = await version_of(ws, file_id)
            version = int(headers["X-WOPI-ItemVersion"])
            if saved.status == "proposed":
                # Kept, not lost, but not the head: every editor must tell the person so.
                # WOPI's PutFile answers 409 with a reason; Collabora reads its 1010.
                reason = _kept(saved)
                current = await files.current_lock(ws, file_id, personal=False)
                headers |= {"X-WOPI-Lock": current or "", "X-WOPI-LockFailureReason": reason}
                body: dict[str, Any] = {"proposal_id": saved.proposal_id, "reason": reason}
                if stamp is not None:
                    body["COOLStatusCode"] = 1010
                return JSONResponse(body, status_code=409, headers=headers)
            made = await stamp_of(ws, file_id, version)
            return JSONResponse({"LastModifiedTime": made}, headers=headers)

        return await _answered(work)

    @router.post("/{file_id}", name="wopi_file_operation")
    async def file_operation(
        request: Request,
        file_id: FileIdPath,
        access_token: TokenQuery = "",
        override: Annotated[str, Header(alias="X-WOPI-Override")] = "",
        lock: Annotated[str | None, Header(alias="X-WOPI-Lock")] = None,
        old_lock: Annotated[str | None, Header(alias="X-WOPI-OldLock")] = None,
    ) -> Response:
        async def work() -> Response:
            ws, _ = await opened(request, file_id, access_token)
            operation = override.strip().upper()
            if operation == "GET_LOCK":
                current = await files.current_lock(ws, file_id, personal=False)
                return Response(headers={"X-WOPI-Lock": current or ""})
            if operation in UNSUPPORTED:
                raise _Answer(501)
            if operation not in ("LOCK", "REFRESH_LOCK", "UNLOCK"):
                body = {"detail": {"type": "unknown_override", "override": operation[:64]}}
                raise _Answer(400, body=body)
            if lock is None:
                raise _Answer(400, body={"detail": {"type": "missing_lock"}})
            ttl = settings.lock_ttl
            # Each answers the head version it read first: nothing is read again (ADR-0034).
            if operation == "LOCK" and old_lock is not None:
                held = await files.relocked(ws, file_id, old=old_lock, new=lock, ttl=ttl)
            elif operation == "LOCK":
                held = await files.locked(ws, file_id, lock=lock, ttl=ttl)
            elif operation == "REFRESH_LOCK":
                held = await files.refreshed(ws, file_id, lock=lock, ttl=ttl)
            else:
                held = await files.unlocked(ws, file_id, lock=lock)
            return Response(headers={"X-WOPI-ItemVersion": str(held.version)})

        return await _answered(work)

    return router


def _file_info(
    settings: WopiSettings,
    ws: Workspace,
    grant: TokenGrant,
    version: int,
    head: NativeFile,
    writable: bool,
) -> dict[str, Any]:
    """Return CheckFileInfo's properties: every one a value, never null."""
    name = head.name
    extension = name[name.rfind(".") :] if "." in name else ""
    digest = base64.b64encode(bytes.fromhex(head.content.sha256)).decode()
    info: dict[str, Any] = {
        "BaseFileName": name,
        "OwnerId": f"workspace:{ws.workspace_id}",
        "Size": head.content.size,
        "UserId": grant.person.participant,
        "UserFriendlyName": grant.person.name or grant.person.id,
        "Version": str(version),
        "SHA256": digest,
        "LastModifiedTime": version_stamp(version),
        "UserCanWrite": writable,
        "ReadOnly": not writable,
        "SupportsLocks": True,
        "SupportsGetLock": True,
        "SupportsUpdate": True,
        "SupportsExtendedLockLength": True,
        "SupportsRename": False,
        "UserCanRename": False,
        "UserCanNotWriteRelative": True,
        "IsAnonymousUser": False,
    }
    if extension:
        info["FileExtension"] = extension
    if settings.post_message_origin is not None:
        info["PostMessageOrigin"] = settings.post_message_origin
    return info
