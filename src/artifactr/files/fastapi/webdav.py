"""WebDAV class 2: desktop Word and LibreOffice open a file where it lives (RFC 4918, ADR-0018).

:func:`webdav_router` serves a collection per workspace, listing its native files by name, each
at a URL that ends in its file name (Word needs the extension last)::

    /dav/workspaces/{workspace_id}/{name}              the person resolve_actor names
    /dav/t/{token}/workspaces/{workspace_id}/{name}    the person a capability link names

Who is asking is decided one of two ways, and either way each request opens its workspace as
that person, so the ``authorize`` and ``hidden`` hooks and the switch decide as on every route
(a hidden file is answered exactly as a missing one): the application's ``resolve_actor``
(:func:`basic_actor` plugs an HTTP Basic password check into it, over TLS), or a capability
token in the path (:mod:`~artifactr.files.fastapi.capability`), which opens one file as one
person and is refused (401) when forged, expired, or read against another workspace or file.

The methods map onto the service's editing session (:mod:`artifactr.files.native.editing`):

- ``OPTIONS`` (``DAV: 1, 2``, ``MS-Author-Via: DAV``), ``PROPFIND`` at depth 0 and 1,
  ``GET``/``HEAD`` streamed with the content digest as a strong ``ETag``, ``Last-Modified``,
  and ``If-None-Match``/``If-Match``.
- ``LOCK`` (exclusive, write) is a check-out held by the person's editor, its
  ``opaquelocktoken:`` the lock the session records; ``Timeout: Second-N`` is its lease, within
  :data:`MIN_TIMEOUT` and :data:`MAX_TIMEOUT` (:data:`DEFAULT_TIMEOUT` when infinite or none).
  A ``LOCK`` with no body and an ``If:`` header naming the token refreshes it and keeps the
  token. A file held by anyone else (another editor, a person's check-out, an agent's edit) is
  ``423 Locked`` with the lock discovery; shared locks are refused (412). A token is used by
  the person who took the lock only (RFC 4918, 6.4): anyone else presenting it is 403.
- ``PUT`` under the lock is a save: streamed, screened, inspected, committed as the person, or
  kept as a proposal when the file moved on; equal to the head, nothing new. The lock stays.
  ``PUT`` with no lock is a check-out and save in one step, only with ``If-Match`` naming the
  head the client downloaded (428 without it, 412 when the file moved on), so it never
  overwrites a moved file (ADR-0018). ``UNLOCK`` ends the session, even one whose lease
  lapsed (a save under its token would take it up again).
- ``PROPPATCH`` of the ``Win32*`` properties Office writes after a save succeeds without storing
  them; any other property is refused (403). ``MKCOL``, ``COPY``, ``MOVE``, ``DELETE``,
  ``POST`` and a ``PUT`` or ``LOCK`` of a new name are refused with the reason: files are
  created by upload, and history is never deleted.

Request bodies are read hardened and bounded (:mod:`~artifactr.files.fastapi.dav_xml`); a token
is never logged (serve with the access log off, or filtered). :func:`office_links` gives the
portal its "Open in Word" and "Open in LibreOffice" links.
"""

import base64
import binascii
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from functools import partial
from typing import Final, TypeGuard
from urllib.parse import quote, urlsplit

from artifactr.core import (
    Actor,
    Forbidden,
    NotFound,
    Rejection,
)
from artifactr.fastapi import ResolveActor, Unauthorized
from artifactr.workspace import Workspace, Workspaces
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from starlette.requests import HTTPConnection

from artifactr.files.core.checkouts import parse_holder
from artifactr.files.core.clock import Clock, utc_now
from artifactr.files.core.errors import AppFailure, ContentDamaged, FileTooLarge
from artifactr.files.core.history import History, dav_name
from artifactr.files.core.leases import ArtifactBusy, ArtifactLease, scope_of
from artifactr.files.core.manifests import Blob, NativeFile
from artifactr.files.fastapi.capability import Capabilities
from artifactr.files.fastapi.dav_xml import (
    MAX_BODY,
    ActiveLock,
    Element,
    Propfind,
    dav,
    element,
    error,
    lockdiscovery,
    lockinfo_of,
    multistatus,
    propfind_of,
    proppatch_of,
    propstat,
    read_xml,
    response,
    serialized,
    supportedlock,
)
from artifactr.files.fastapi.http_answers import STATUSES
from artifactr.files.native import CheckedIn, NativeFiles
from artifactr.files.native.editing import personal_lock

DAV_PREFIX: Final = "/dav"
"""Where the router's paths start unless told otherwise."""

DEFAULT_TIMEOUT: Final = timedelta(hours=1)
"""A lock's lease when the client asks for none or an infinite one: what Word asks for."""

MIN_TIMEOUT: Final = timedelta(minutes=1)
"""The shortest lease a lock is given, whatever the client asks."""

MAX_TIMEOUT: Final = timedelta(hours=8)
"""The longest lease a lock is given, a check-out's: Word refreshes long before."""

OFFICE_NAMESPACE: Final = "urn:schemas-microsoft-com:"
"""The namespace of the ``Win32*`` properties Office writes after a save."""

FILE_METHODS: Final = "OPTIONS, GET, HEAD, PUT, PROPFIND, PROPPATCH, LOCK, UNLOCK"
"""What a file answers."""

COLLECTION_METHODS: Final = "OPTIONS, PROPFIND, PROPPATCH"
"""What a workspace's collection answers."""

BASIC_CHALLENGE: Final = 'Basic realm="artifactr.files", charset="UTF-8"'
"""The ``WWW-Authenticate`` challenge of a 401 on the routes ``resolve_actor`` answers."""

_METHODS: Final = [
    "OPTIONS",
    "GET",
    "HEAD",
    "PUT",
    "POST",
    "DELETE",
    "PROPFIND",
    "PROPPATCH",
    "MKCOL",
    "COPY",
    "MOVE",
    "LOCK",
    "UNLOCK",
]
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_XML: Final = "application/xml; charset=utf-8"
_TEXT: Final = "text/plain; charset=utf-8"
_IF_PART: Final = re.compile(r"\s*(?:<([^>]*)>|\[([^\]]*)\]|(\()|(\))|(not)\b)", re.IGNORECASE)
_SECOND: Final = re.compile(r"^second-(\d{1,10})$", re.IGNORECASE)
_STATUS: Final = {
    200: "200 OK",
    403: "403 Forbidden",
    404: "404 Not Found",
    424: "424 Failed Dependency",
}
_SOMEONE_ELSES: Final = (
    "the lock is someone else's: a lock's token is used by the person who took it"
)
_REFUSED: Final = {
    "MKCOL": "collections are not made here: a workspace is its one collection",
    "COPY": "files are not copied here: upload a copy as a new file",
    "MOVE": "files are not moved or renamed here",
    "DELETE": "history is never deleted: archive the file where you manage it",
    "POST": "POST is not a WebDAV method here",
}


class DavAnswer(Exception):
    """An answer a WebDAV route gives at once: a refusal, or a status with no more to do."""

    def __init__(
        self,
        status: int,
        reason: str,
        *,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.body = body
        self.headers = headers or {}

    def to_response(self) -> Response:
        """Return the answer: its XML body, or its reason as text."""
        if self.body is not None:
            return Response(self.body, self.status, self.headers, media_type=_XML)
        return Response(self.reason + "\n", self.status, self.headers, media_type=_TEXT)


@dataclass(frozen=True)
class OfficeLinks:
    """The links that open a file in a desktop app, as the portal offers them."""

    word: str
    """``ms-word:ofe|u|<url>`` (edit) or ``ms-word:ofv|u|<url>`` (view)."""
    libreoffice: str
    """``vnd.libreoffice.command:ofe|u|<url>`` (edit) or ``...:ofv|u|<url>`` (view)."""
    editing: bool
    """Whether they open it for editing; else read-only."""


def office_links(url: str, *, may_edit: bool) -> OfficeLinks:
    """Return the links that open a WebDAV URL in Word and LibreOffice.

    Office's URI schemes: ``ofe`` opens for editing, for a person who may edit the file;
    ``ofv`` opens read-only, for a viewer.
    """
    verb = "ofe" if may_edit else "ofv"
    return OfficeLinks(
        word=f"ms-word:{verb}|u|{url}",
        libreoffice=f"vnd.libreoffice.command:{verb}|u|{url}",
        editing=may_edit,
    )


def file_link(
    base_url: str,
    capabilities: Capabilities,
    ws: Workspace,
    artifact_id: str,
    name: str,
    *,
    prefix: str = DAV_PREFIX,
) -> str:
    """Return a capability link that opens one file as the handle's person, as a WebDAV URL.

    Raises:
        Forbidden: If the handle's actor is not a person: a link acts for one person.
    """
    actor = ws.actor
    if actor.kind != "user":
        raise Forbidden("a WebDAV link opens a file for a person")
    token = capabilities.mint(ws.tenant_id, ws.workspace_id, artifact_id, actor)
    workspace = quote(ws.workspace_id, safe="")
    return f"{base_url.rstrip('/')}{prefix}/t/{token}/workspaces/{workspace}/{_href_name(name)}"


BasicCheck = Callable[[str, str], Awaitable[tuple[str, Actor] | None]]
"""An application's password check: the tenant and actor for a user name and password, or None."""


def basic_actor(check: BasicCheck, *, require_tls: bool = True) -> ResolveActor:
    """Return a ``resolve_actor`` that reads HTTP Basic credentials and asks ``check``.

    The application owns the password check; this reads the ``Authorization`` header and, unless
    ``require_tls`` is off (tests on the loopback address), refuses it over plain HTTP, where a
    password would travel in the clear.
    """

    async def resolve(connection: HTTPConnection) -> tuple[str, Actor]:
        if require_tls and connection.url.scheme != "https":
            raise Unauthorized("a password is accepted over HTTPS only")
        scheme, _, encoded = connection.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "basic":
            raise Unauthorized("sign in with a user name and password")
        try:
            user, colon, password = base64.b64decode(encoded, validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            raise Unauthorized("the credentials are not readable") from None
        found = await check(user, password) if colon else None
        if found is None:
            raise Unauthorized("the user name or password is wrong")
        return found

    return resolve


@dataclass(frozen=True)
class _Target:
    ws: Workspace
    base: str
    only: str | None


@dataclass(frozen=True)
class _File:
    artifact_id: str
    name: str
    href: str


_Opener = Callable[[], Awaitable[_Target]]


class _If:
    """An ``If:`` header (RFC 4918 10.4): lists of state tokens and entity tags, per resource."""

    def __init__(self, header: str | None) -> None:
        self.lists: list[tuple[str | None, list[tuple[bool, str, str]]]] = []
        if header is not None:
            self._parse(header)

    def _parse(self, header: str) -> None:
        tag: str | None = None
        current: list[tuple[bool, str, str]] | None = None
        negate = pending = False
        position = 0
        while position < len(header.rstrip()):
            found = _IF_PART.match(header, position)
            if found is None:
                raise DavAnswer(400, "the If header is not one RFC 4918 can read")
            position = found.end()
            url, etag, opened, closed, negation = found.groups()
            if opened:
                current, pending = [], False
            elif closed and current is not None:
                self.lists.append((tag, current))
                current = None
            elif negation and current is not None:
                negate = True
            elif current is not None and (url is not None or etag is not None):
                kind = "token" if url is not None else "etag"
                current.append((negate, kind, url if url is not None else etag or ""))
                negate = False
            elif url is not None and current is None and not pending:
                tag, pending = url, True
            else:
                raise DavAnswer(400, "the If header is not one RFC 4918 can read")
        if current is not None or pending:
            raise DavAnswer(400, "the If header leaves a list open")

    @property
    def tokens(self) -> set[str]:
        """The state tokens it submits (those not under ``Not``)."""
        return {
            value
            for _, conditions in self.lists
            for negated, kind, value in conditions
            if kind == "token" and not negated
        }

    def holds(self, path: str, lock: str | None, etag: str | None) -> bool:
        """Return whether it holds for the resource at ``path`` with this lock and tag."""
        applicable = [
            conditions
            for tag, conditions in self.lists
            if tag is None or urlsplit(tag).path.rstrip("/") == path.rstrip("/")
        ]
        if not applicable:
            return True
        return any(
            all(
                negated != (value == (lock if kind == "token" else etag))
                for negated, kind, value in conditions
            )
            for conditions in applicable
        )


def webdav_router(
    files: NativeFiles,
    workspaces: Workspaces,
    *,
    resolve_actor: ResolveActor,
    capabilities: Capabilities | None = None,
    prefix: str = DAV_PREFIX,
    challenge: str | None = BASIC_CHALLENGE,
    clock: Clock = utc_now,
) -> APIRouter:
    """Return the WebDAV router: a collection per workspace, a file at each name.

    Args:
        files: The service every route calls.
        workspaces: Opens each request's workspace as its person.
        resolve_actor: Who is asking on the routes without a token (:func:`basic_actor`, or
            the application's own).
        capabilities: Reads the tokens of capability links; without it, only
            ``resolve_actor``'s routes answer.
        prefix: Where its paths start.
        challenge: The ``WWW-Authenticate`` of a 401 on ``resolve_actor``'s routes; None sends
            none.
        clock: The current time, for how long a lock has left; UTC now if omitted.
    """
    router = APIRouter(prefix=prefix)

    async def by_actor(request: Request, workspace_id: str) -> _Target:
        try:
            tenant_id, actor = await resolve_actor(request)
        except Unauthorized as refused:
            headers = {} if challenge is None else {"WWW-Authenticate": challenge}
            raise DavAnswer(401, str(refused) or "unauthorized", headers=headers) from None
        ws = await workspaces.open(tenant_id, workspace_id, actor=actor)
        base = f"{prefix}/workspaces/{quote(workspace_id, safe='')}/"
        return _Target(ws, base, None)

    async def by_token(token: str, workspace_id: str) -> _Target:
        if capabilities is None:
            raise DavAnswer(404, "capability links are not served here")
        try:
            capability = capabilities.read(token)
        except Unauthorized as refused:
            raise DavAnswer(401, str(refused)) from None
        if capability.workspace_id != workspace_id:
            raise DavAnswer(401, "the link is for another workspace")
        ws = await workspaces.open(capability.tenant_id, workspace_id, actor=capability.actor)
        base = f"{prefix}/t/{token}/workspaces/{quote(workspace_id, safe='')}/"
        return _Target(ws, base, capability.artifact_id)

    async def listed(target: _Target) -> tuple[list[_File], dict[str, tuple[int, NativeFile]]]:
        # The files the actor sees and their heads (one read of the workspace), each at its
        # name (one read of the names): a depth-1 listing shows them all (issue 41).
        found: list[_File] = []
        heads: dict[str, tuple[int, NativeFile]] = {}
        shown = await target.ws.artifacts(NativeFile)
        names = await files.history.names(target.ws)
        for artifact in shown:
            if target.only in (None, artifact.id):
                name = names.get(artifact.id, dav_name(artifact.data.name))
                found.append(_File(artifact.id, name, target.base + _href_name(name)))
                heads[artifact.id] = (artifact.version, artifact.data)
        return found, heads

    async def named(target: _Target, name: str) -> _File | None:
        # One row by the name's index, then the file read through the workspace, which decides
        # whether the actor sees it: a hidden file is answered as a missing one (issue 41).
        found = await files.history.named(target.ws, name)
        if found is None:
            return None
        artifact_id, own = found
        try:
            await target.ws.get(NativeFile, artifact_id)
        except NotFound:
            return None
        if target.only not in (None, artifact_id):
            raise DavAnswer(401, "the link is for another file")
        return _File(artifact_id, own, target.base + _href_name(own))

    # ─── locks as the service holds them ─────────────────────────────────────

    async def active(ws: Workspace, file: _File, lease: ArtifactLease) -> ActiveLock:
        token = None
        owner = "an agent's edit"
        kind, _, rest = lease.holder.partition(":")
        if kind == "checkout":
            checkout_id, _, participant = rest.partition(":")
            record = await files.checkouts.get(scope_of(ws), checkout_id)
            owner = participant
            if record is not None:
                owner = f"{record.actor.display_name} ({participant})"
                if record.actor.participant == ws.actor.participant and _token(record.lock):
                    token = record.lock
        seconds = int((lease.expires_at - clock()).total_seconds())
        return ActiveLock(owner=owner, seconds=seconds, root=file.href, token=token)

    async def session_of(ws: Workspace, file: _File, tokens: set[str]) -> str | None:
        # The token of the open session one of these names, live or lapsed, if it is the
        # person's own: a lock's token is used by the person who took it (RFC 4918, 6.4).
        if not tokens:
            return None
        for record in await files.checkouts.open_on(scope_of(ws), file.artifact_id):
            if _token(record.lock) and record.lock in tokens:
                if record.actor.participant != ws.actor.participant:
                    raise DavAnswer(403, _SOMEONE_ELSES)
                return record.lock
        return None

    async def resume(ws: Workspace, file: _File, token: str, ttl: timedelta) -> str:
        # The session renewed: its lease taken again even if it lapsed meanwhile, so its base
        # stays what it was (a stale save becomes a proposal).
        try:
            await files.lock(ws, file.artifact_id, lock=token, ttl=ttl)
        except ArtifactBusy as refusal:
            raise await busy(ws, file, refusal) from None
        return token

    async def own_token(ws: Workspace, file: _File) -> str | None:
        # The person's own WebDAV lock that holds the file: WebDAV never acts in a WOPI lock.
        current = await files.current_lock(ws, file.artifact_id)
        return current if _token(current) else None

    async def lock_holds(ws: Workspace, file: _File) -> bool:
        # Whether an editor's lock (anyone's) holds the file: its token is not shown, but a PUT
        # without it is told the file is locked (RFC 4918, 9.10.6).
        lease = await files.lease(ws, file.artifact_id)
        holder = None if lease is None else parse_holder(lease.holder)
        record = (
            None if holder is None else await files.checkouts.get(scope_of(ws), holder.checkout_id)
        )
        return record is not None and record.lock is not None

    async def locks_on(ws: Workspace, file: _File) -> tuple[ActiveLock, ...]:
        lease = await files.lease(ws, file.artifact_id)
        return () if lease is None else (await active(ws, file, lease),)

    async def busy(ws: Workspace, file: _File, refusal: ArtifactBusy) -> DavAnswer:
        locks = () if refusal.lease is None else (await active(ws, file, refusal.lease),)
        body = error(
            "no-conflicting-lock",
            str(refusal),
            element("href", file.href),
            lockdiscovery(locks),
        )
        return DavAnswer(423, str(refusal), body=body)

    # ─── the methods ─────────────────────────────────────────────────────────

    async def propfind(request: Request, target: _Target, file: _File | None) -> Response:
        asked = propfind_of(read_xml(await _small_body(request)))
        depth = request.headers.get("depth", "infinity").strip().lower()
        if depth not in ("0", "1", "infinity"):
            raise DavAnswer(400, "Depth is 0, 1 or infinity")
        if file is not None:
            head = await files.manifest(target.ws, file.artifact_id)
            return _multistatus(
                await file_responses(target.ws, [file], {file.artifact_id: head}, asked)
            )
        answers = [_collection_response(target, asked)]
        if depth != "0":
            found, heads = await listed(target)
            answers += await file_responses(target.ws, found, heads, asked)
        return _multistatus(answers)

    async def file_responses(
        ws: Workspace,
        found: list[_File],
        heads: dict[str, tuple[int, NativeFile]],
        asked: Propfind,
    ) -> list[Element]:
        # A constant number of statements for any number of files: the bytes' records, the
        # times and the live leases are each one read of them all (issue 41).
        scope = scope_of(ws)
        records = await files.blobs.stat_many(
            scope, [(aid, manifest.content.sha256) for aid, (_, manifest) in heads.items()]
        )
        times = await _times(
            files.history, ws, {aid: version for aid, (version, _) in heads.items()}
        )
        leases = await files.leases.live(scope) if found else {}
        answers: list[Element] = []
        for file in found:
            version, manifest = heads[file.artifact_id]
            record = _checked(file.artifact_id, version, manifest.content, records)
            lease = leases.get(file.artifact_id)
            locks = () if lease is None else (await active(ws, file, lease),)
            answers.append(
                file_response(file, manifest, record, times[file.artifact_id], locks, asked)
            )
        return answers

    def file_response(
        file: _File,
        manifest: NativeFile,
        record: Blob,
        times: tuple[datetime, datetime],
        locks: tuple[ActiveLock, ...],
        asked: Propfind,
    ) -> Element:
        created, modified = times
        values: dict[str, Element] = {
            "resourcetype": element("resourcetype"),
            "displayname": element("displayname", manifest.name),
            "getcontentlength": element("getcontentlength", str(record.size)),
            "getcontenttype": element("getcontenttype", record.media_type),
            "getetag": element("getetag", f'"{record.sha256}"'),
            "getlastmodified": element("getlastmodified", format_datetime(modified, usegmt=True)),
            "creationdate": element("creationdate", _rfc3339(created)),
            "supportedlock": supportedlock(),
            "lockdiscovery": lockdiscovery(locks),
        }
        return _props(file.href, values, asked)

    async def get(request: Request, target: _Target, file: _File, head: bool) -> Response:
        ws = target.ws
        version, _, record = await files.stored(ws, file.artifact_id)
        _, modified = (await _times(files.history, ws, {file.artifact_id: version}))[
            file.artifact_id
        ]
        etag = f'"{record.sha256}"'
        headers = {
            "ETag": etag,
            "Last-Modified": format_datetime(modified, usegmt=True),
        }
        if not _if_match(request, etag):
            raise DavAnswer(412, "the file is not at the version If-Match names", headers=headers)
        if _none_match(request, etag):
            return Response(status_code=304, headers=headers)
        headers["Content-Length"] = str(record.size)
        if head:
            return Response(headers=headers, media_type=record.media_type)
        chunks = files.blobs.read(scope_of(ws), file.artifact_id, record.sha256)
        first = await anext(chunks, b"")
        return StreamingResponse(
            _chained(first, chunks), media_type=record.media_type, headers=headers
        )

    async def lock(request: Request, target: _Target, file: _File | None) -> Response:
        ws = target.ws
        root = read_xml(await _small_body(request))
        if file is None:
            raise DavAnswer(403, "a lock names a file that exists: files are created by upload")
        ttl = _timeout(request.headers.get("timeout"))
        conditions = _If(request.headers.get("if"))
        if root is None:
            if not conditions.tokens:
                raise DavAnswer(400, "a LOCK refresh names its lock in an If header")
            token = await session_of(ws, file, conditions.tokens)
            if token is None:
                raise DavAnswer(
                    412,
                    "the If header names no lock held on this file",
                    body=error("lock-token-matches-request-uri", "no such lock on this file"),
                )
            await resume(ws, file, token, ttl)
            return _lock_answer(await locks_on(ws, file), None)
        info = lockinfo_of(root)
        if not info.exclusive or not info.write:
            reason = "shared locks are refused: a file has one editor at a time"
            raise DavAnswer(412, reason, body=error("lock-scope-unsupported", reason))
        token = f"opaquelocktoken:{uuid.uuid4()}"
        try:
            await files.lock(ws, file.artifact_id, lock=token, ttl=ttl)
        except ArtifactBusy as refusal:
            raise await busy(ws, file, refusal) from None
        return _lock_answer(await locks_on(ws, file), token)

    async def unlock(request: Request, target: _Target, file: _File) -> Response:
        ws = target.ws
        token = request.headers.get("lock-token", "").strip().removeprefix("<").removesuffix(">")
        if not token:
            raise DavAnswer(400, "UNLOCK names its lock in a Lock-Token header")
        mine = await session_of(ws, file, {token})
        current = await own_token(ws, file)
        if current != token and mine is not None:
            # The person's own session whose lease lapsed, no other lock having taken the file
            # since: taken up again to be ended, as a save under its token would take it up.
            current = await resume(ws, file, mine, MIN_TIMEOUT)
        if current != token:
            raise DavAnswer(
                409,
                "the Lock-Token names no lock held on this file",
                body=error("lock-token-matches-request-uri", "no such lock on this file"),
            )
        await files.unlock(ws, file.artifact_id, lock=token)
        return Response(status_code=204)

    async def put(request: Request, target: _Target, file: _File | None) -> Response:
        ws = target.ws
        if file is None:
            raise DavAnswer(403, "a new name is not created here: upload new files on the page")
        _, manifest = await files.manifest(ws, file.artifact_id)
        etag = f'"{manifest.content.sha256}"'
        conditions = _If(request.headers.get("if"))
        mine = await session_of(ws, file, conditions.tokens)
        current = await own_token(ws, file)
        if current is None and mine is not None:
            current = await resume(ws, file, mine, DEFAULT_TIMEOUT)
        if not conditions.holds(request.url.path, current, etag):
            raise DavAnswer(412, "the If header does not hold for this file")
        summary = "saved over WebDAV"
        if current is not None or await lock_holds(ws, file):
            if current is None or current not in conditions.tokens:
                raise DavAnswer(
                    423,
                    "the file is locked: send the lock's token in an If header",
                    body=error(
                        "lock-token-submitted",
                        "the file is locked",
                        element("href", file.href),
                        lockdiscovery(await locks_on(ws, file)),
                    ),
                )
            outcome = await files.save(
                ws, file.artifact_id, request.stream(), lock=current, summary=summary
            )
        else:
            outcome = await one_step(request, ws, file, summary)
        headers = {"X-Artifactr-Outcome": outcome.status}
        if outcome.proposal_id is not None:
            headers["X-Artifactr-Proposal"] = outcome.proposal_id
        if outcome.status != "proposed":
            _, head = await files.manifest(ws, file.artifact_id)
            headers["ETag"] = f'"{head.content.sha256}"'
        return Response(status_code=204, headers=headers)

    async def one_step(request: Request, ws: Workspace, file: _File, summary: str) -> CheckedIn:
        # A PUT with no lock: a check-out and a save in one step, only against the head the
        # client names in If-Match, checked once the lease is held (ADR-0018).
        if request.headers.get("if-match") is None:
            raise DavAnswer(
                428,
                "lock the file first (WebDAV LOCK), or send If-Match with the ETag you "
                "downloaded: a PUT with neither could overwrite someone else's revision",
            )
        token = f"opaquelocktoken:{uuid.uuid4()}"
        try:
            await files.lock(ws, file.artifact_id, lock=token, ttl=DEFAULT_TIMEOUT)
        except ArtifactBusy as refusal:
            raise await busy(ws, file, refusal) from None
        try:
            _, head = await files.manifest(ws, file.artifact_id)
            if not _if_match(request, f'"{head.content.sha256}"'):
                raise DavAnswer(
                    412, "the file moved on since the version If-Match names: nothing was stored"
                )
            return await files.save(
                ws, file.artifact_id, request.stream(), lock=token, summary=summary
            )
        finally:
            await files.unlock(ws, file.artifact_id, lock=token)

    async def proppatch(request: Request, target: _Target, file: _File | None) -> Response:
        names = proppatch_of(read_xml(await _small_body(request)))
        href = target.base if file is None else file.href
        refused = [name for name in names if not name.startswith(f"{{{OFFICE_NAMESPACE}}}")]
        if file is None:
            refused = list(names)
        kept = [element(name) for name in names if name not in refused]
        statuses: list[Element] = []
        if refused:
            statuses.append(propstat([element(name) for name in refused], _STATUS[403]))
            if kept:
                statuses.append(propstat(kept, _STATUS[424]))
        elif kept:
            statuses.append(propstat(kept, _STATUS[200]))
        return _multistatus([response(href, *statuses)])

    # ─── the routes ──────────────────────────────────────────────────────────

    async def on_file(request: Request, target_of: _Opener, name: str) -> Response:
        method = request.method
        if method == "OPTIONS":
            return _options(FILE_METHODS)
        if method in _REFUSED:
            return _refused(method, FILE_METHODS)
        target = await target_of()
        file = await named(target, name)
        if method == "PUT":
            return await put(request, target, file)
        if method == "LOCK":
            return await lock(request, target, file)
        if file is None:
            raise NotFound("file", name)
        if method == "PROPFIND":
            return await propfind(request, target, file)
        if method == "PROPPATCH":
            return await proppatch(request, target, file)
        if method == "UNLOCK":
            return await unlock(request, target, file)
        return await get(request, target, file, head=method == "HEAD")

    async def on_collection(request: Request, target_of: _Opener) -> Response:
        method = request.method
        if method == "OPTIONS":
            return _options(COLLECTION_METHODS)
        if method in _REFUSED:
            return _refused(method, COLLECTION_METHODS)
        target = await target_of()
        if method == "PROPFIND":
            return await propfind(request, target, None)
        if method == "PROPPATCH":
            return await proppatch(request, target, None)
        raise DavAnswer(
            405,
            f"{method} is not answered on a workspace's collection",
            headers={"Allow": COLLECTION_METHODS},
        )

    async def file_route(request: Request, workspace_id: str, name: str) -> Response:
        return await _answered(on_file(request, partial(by_actor, request, workspace_id), name))

    async def collection_route(request: Request, workspace_id: str) -> Response:
        return await _answered(on_collection(request, partial(by_actor, request, workspace_id)))

    async def token_file_route(
        request: Request, token: str, workspace_id: str, name: str
    ) -> Response:
        return await _answered(on_file(request, partial(by_token, token, workspace_id), name))

    async def token_collection_route(request: Request, token: str, workspace_id: str) -> Response:
        return await _answered(on_collection(request, partial(by_token, token, workspace_id)))

    async def root_route(request: Request) -> Response:
        if request.method == "OPTIONS":
            return _options("OPTIONS")
        return Response("nothing here: open a workspace's collection\n", 404, media_type=_TEXT)

    add = router.add_api_route
    for path, route in (
        ("/", root_route),
        ("/workspaces/{workspace_id}", collection_route),
        ("/workspaces/{workspace_id}/", collection_route),
        ("/workspaces/{workspace_id}/{name}", file_route),
        ("/workspaces/{workspace_id}/{name}/", file_route),
        ("/t/{token}/workspaces/{workspace_id}", token_collection_route),
        ("/t/{token}/workspaces/{workspace_id}/", token_collection_route),
        ("/t/{token}/workspaces/{workspace_id}/{name}", token_file_route),
        ("/t/{token}/workspaces/{workspace_id}/{name}/", token_file_route),
    ):
        add(path, route, methods=_METHODS, include_in_schema=False)
    return router


# ─── helpers ──────────────────────────────────────────────────────────────────


async def _answered(answer: Awaitable[Response]) -> Response:
    """Return a route's answer, or its refusal as WebDAV answers one."""
    try:
        return await answer
    except DavAnswer as refusal:
        return refusal.to_response()
    except Rejection as rejection:
        return DavAnswer(dav_status(rejection), str(rejection)).to_response()
    except AppFailure as failure:
        status = 504 if failure.kind == "timeout" else 502
        return DavAnswer(status, f"the app could not read the file: {failure.reason}").to_response()


def dav_status(rejection: Rejection) -> int:
    """Return the HTTP status WebDAV answers a refusal with.

    As the files router answers (:data:`~artifactr.files.fastapi.http_answers.STATUSES`), but a
    file someone holds is ``423 Locked``, and a body too large ``413``.
    """
    if isinstance(rejection, ArtifactBusy):
        return 423
    if isinstance(rejection, FileTooLarge):
        return 413
    return STATUSES.get(rejection.code, 400)


def _options(methods: str) -> Response:
    return Response(
        status_code=200,
        headers={
            "DAV": "1, 2",
            "MS-Author-Via": "DAV",
            "Allow": methods,
            "Accept-Ranges": "none",
        },
    )


def _refused(method: str, methods: str) -> Response:
    status = 405 if method in ("MKCOL", "POST") else 403
    headers = {"Allow": methods} if status == 405 else {}
    return DavAnswer(status, _REFUSED[method], headers=headers).to_response()


def _multistatus(responses: list[Element]) -> Response:
    return Response(multistatus(responses), status_code=207, media_type=_XML)


def _lock_answer(locks: tuple[ActiveLock, ...], token: str | None) -> Response:
    body = serialized(element("prop", None, lockdiscovery(locks)))
    headers = {} if token is None else {"Lock-Token": f"<{token}>"}
    return Response(body, status_code=200, headers=headers, media_type=_XML)


def _props(href: str, values: dict[str, Element], asked: Propfind) -> Element:
    if asked.kind == "allprop":
        return response(href, propstat(list(values.values()), _STATUS[200]))
    if asked.kind == "propname":
        return response(href, propstat([element(name) for name in values], _STATUS[200]))
    found = [values[name[len(dav("")) :]] for name in asked.names if _ours(name, values)]
    missing = [element(name) for name in asked.names if not _ours(name, values)]
    statuses = [propstat(found, _STATUS[200])] if found else []
    if missing:
        statuses.append(propstat(missing, _STATUS[404]))
    return response(href, *statuses)


def _ours(name: str, values: dict[str, Element]) -> bool:
    return name.startswith(dav("")) and name[len(dav("")) :] in values


def _collection_response(target: _Target, asked: Propfind) -> Element:
    values = {
        "resourcetype": element("resourcetype", None, element("collection")),
        "displayname": element("displayname", target.ws.workspace_id),
        "supportedlock": element("supportedlock"),
        "lockdiscovery": element("lockdiscovery"),
    }
    return _props(target.base, values, asked)


async def _times(
    history: History, ws: Workspace, heads: dict[str, int]
) -> dict[str, tuple[datetime, datetime]]:
    """Return when each file was created and when its head was made, exact at any age.

    The history reads just these files' creations and heads (ADR-0026). A person who may not
    read the log is told a fixed time.
    """
    try:
        made = await history.made(ws, heads)
    except Forbidden:
        made = {}
    return {artifact_id: made.get(artifact_id, (_EPOCH, _EPOCH)) for artifact_id in heads}


def _checked(
    artifact_id: str, version: int, blob: Blob, records: dict[tuple[str, str], Blob]
) -> Blob:
    # As a download's read of one file (ADR-0013): the store's record, or the damage named.
    record = records.get((artifact_id, blob.sha256))
    if record is None:
        raise ContentDamaged(artifact_id, version, blob.sha256, "missing")
    if record.size != blob.size:
        raise ContentDamaged(artifact_id, version, blob.sha256, "size")
    return record


def _token(lock: str | None) -> TypeGuard[str]:
    """Return whether a lock is a WebDAV token, the only kind WebDAV shows or acts under."""
    return lock is not None and personal_lock(lock)


def _rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _tags(header: str) -> set[str]:
    return {tag.strip().removeprefix("W/") for tag in header.split(",")}


def _if_match(request: Request, etag: str) -> bool:
    header = request.headers.get("if-match")
    if header is None:
        return True
    tags = _tags(header)
    return etag in tags or "*" in tags


def _none_match(request: Request, etag: str) -> bool:
    header = request.headers.get("if-none-match")
    if header is None:
        return False
    tags = _tags(header)
    return etag in tags or "*" in tags


async def _chained(first: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    yield first
    async for chunk in rest:
        yield chunk


async def _small_body(request: Request) -> bytes:
    """Return a WebDAV request body of at most :data:`MAX_BODY` bytes."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise DavAnswer(413, f"a WebDAV request body has at most {MAX_BODY} bytes")
    return bytes(body)


def _timeout(header: str | None) -> timedelta:
    """Return a lock's lease for a ``Timeout`` header, within the bounds."""
    for part in (header or "").split(","):
        found = _SECOND.match(part.strip())
        if found is not None:
            asked = timedelta(seconds=int(found.group(1)))
            return min(max(asked, MIN_TIMEOUT), MAX_TIMEOUT)
    return DEFAULT_TIMEOUT


def _href_name(name: str) -> str:
    return quote(name, safe="")
