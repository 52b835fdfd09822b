"""Portal: the page people check native files out and in through, server-rendered (ADR-0011).

:func:`portal_router` is the files router's reference client for people, as RFC-0003's portalr
would be: plain HTML forms rendered from autoescaped Jinja2 templates shipped in the package
(``templates/``), a static stylesheet (``static/portal.css``), no script and no third-party
asset, under a strict Content Security Policy (:data:`CONTENT_SECURITY_POLICY`), so it works
without JavaScript (ADR-0020). It calls :class:`~artifactr.files.native.NativeFiles` and
:mod:`artifactr.files.native.diff` as the caller, through the same ``resolve_actor`` as the
routers, and links the files router's own routes for bytes (downloads and page renders), so it
must be included in the same app::

    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    app.include_router(portal_router(files, workspaces, resolve_actor=resolve_actor, people=people))

What a person sees, under ``/portal/workspaces/{workspace_id}/files``: the workspace's files;
for one file its name, size, outline, the lease's holder and expiry, page previews that open
full size, its history (who, when and the summary of each revision, and its diff: changed
words, a workbook's changed cells and sheets or a deck's changed slides in tables, differing
pages side by side with the changed region marked) and its pending proposals
(who, when, what they wrote; an outdated one said so, with no Accept that can only fail, and a
stale check-in's with the revisions accepting it would undo); check-out (which downloads the
file), extend, discard, ending someone else's check-out after a confirmation (for whoever may,
ADR-0006), and check-in by a file-upload form, streamed into the service as the files router
streams one (:func:`~artifactr.files.fastapi.bodies.read_body`). Every form answers with a
redirect to a page that says the outcome in words (post/redirect/get: the notice travels in a
signed, short-lived cookie), so a refresh never posts again and a repeated post is harmless.
A refusal says what the person did wrong and what to do, keeps the API's technical reason
beside it, and keeps the summary they typed. Times are said as a person reads them ("in 8
hours", the exact time in ``time_zone`` beside or in a title), RFC 3339 in ``datetime``.

An optional :data:`EditorLinks` provider adds buttons that open the file in an editor (the file
page's ``editor_actions`` block).

Who the caller is comes from ``resolve_actor``; the page offers ``people`` to choose from and
keeps the choice in the :data:`PERSON_COOKIE` cookie, which the application's ``resolve_actor``
reads. That is a choice, not authentication, and the page says so.
"""

import base64
import hashlib
import hmac
import json
import re
import secrets
import zlib
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Mapping,
    Sequence,
)
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, tzinfo
from importlib.resources import files as package_files
from typing import Annotated, Any, Final, Literal
from urllib.parse import quote, urlencode

from artifactr.core import (
    Actor,
    EditArtifact,
    Forbidden,
    NotFound,
    Proposal,
    Proposed,
    Rejection,
    RespondToProposal,
    Revision,
    UserActor,
)
from artifactr.fastapi import STATUS_CODES, ResolveActor, Unauthorized
from artifactr.workspace import Access, Workspace, Workspaces
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from jinja2 import Environment, PackageLoader, StrictUndefined
from pydantic import BaseModel, ConfigDict
from starlette.templating import Jinja2Templates

from artifactr.files.core.clock import rfc3339, utc_now
from artifactr.files.core.errors import AppFailure, UnsafeFile
from artifactr.files.core.formats import kind_name
from artifactr.files.core.history import Dates, Decision
from artifactr.files.core.leases import ArtifactBusy, scope_of
from artifactr.files.core.manifests import Blob, NativeFile, Presentation, Spreadsheet
from artifactr.files.fastapi.bodies import FormRefused, read_body
from artifactr.files.fastapi.portal_words import (
    MAY_NOT_DECIDE,
    Piece,
    Refusal,
    changed_words,
    exact,
    for_people,
    kind_rows,
    kinds_taken,
    relative,
    upload_refusal,
    why_not_decide,
)
from artifactr.files.fastapi.router import SUMMARY, upload_from
from artifactr.files.native import CheckedIn, NativeFiles
from artifactr.files.native.diff import DiffLimits, FileDiff, TextDiff, proposal_diff, revision_diff
from artifactr.files.native.editing import personal_lock

PERSON_COOKIE: Final = "artifactr_person"
"""The cookie that keeps the chosen person's id."""

NOTICE_COOKIE: Final = "artifactr_notice"
"""The cookie that carries a form's outcome to the page it redirects to, signed, read once."""

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
"""The page's own origin only: its stylesheet, its forms and the router's renders; no script."""

PREVIEW_SCALE: Final = 0.3
"""The scale of the page previews on a file's page."""

FULL_SCALE: Final = 1.0
"""The scale a page opens at, full size."""

MAX_PREVIEWS: Final = 12
"""How many pages a file's page previews."""

FILES_PAGE: Final = 50
"""How many files the file list shows a page (issue 41)."""

HISTORY_PAGE: Final = 50
"""How many versions a file's page shows of its history a page, newest first (issue 41)."""

DECIDED_PAGE: Final = 20
"""How many of a file's decided proposals its page shows, newest first."""

MAX_KEPT_SUMMARY: Final = 1_000
"""The most of a refused check-in's summary the notice keeps, in characters."""

EDIT: Final = "artifactr:edit_artifact"
RESPOND: Final = "artifactr:respond_to_proposal"
ARCHIVE: Final = "artifactr:archive_artifact"
CREATE: Final = "artifactr:create_artifact"

_HEADERS: Final = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class Person(BaseModel):
    """Someone the page offers to act as."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Their user id: what ``resolve_actor`` makes a :class:`~artifactr.UserActor` of."""
    name: str
    """Their name."""
    role: str = ""
    """What they may do, in words (``"editor"``)."""


@dataclass(frozen=True)
class EditorLink:
    """A button on a file's page that opens the file in an editor.

    ``get`` is a link to ``url``; ``post`` is a form that posts ``fields`` to it (an editor that
    takes an access token in a form, as WOPI's do). The page's CSP allows forms to its own origin
    only, so a post goes to a route of the application that hands over to the editor.
    """

    label: str
    """What the button says (``"Edit in the browser"``)."""
    url: str
    """Where it goes: a link's target, or a form's action."""
    method: Literal["get", "post"] = "get"
    """How: a link, or a form."""
    fields: tuple[tuple[str, str], ...] = ()
    """A form's hidden fields, in order; none for a link."""
    target: str | None = None
    """The browsing context it opens in (``"_blank"``); the page itself if None."""


EditorLinks = Callable[[Workspace, str, NativeFile], Awaitable[Sequence[EditorLink]]]
"""Returns the editor buttons for a file (its id and head manifest) and the workspace's actor."""


def _headers(form_origins: Sequence[str]) -> dict[str, str]:
    """Return the page's headers, its CSP letting forms post to ``form_origins`` too."""
    for origin in form_origins:
        if not re.fullmatch(r"https?://[A-Za-z0-9.\-\[\]:]+", origin):
            raise ValueError(f"{origin!r} is not an origin (scheme://host[:port])")
    extra = "".join(f" {origin}" for origin in form_origins)
    policy = CONTENT_SECURITY_POLICY.replace("form-action 'self'", f"form-action 'self'{extra}")
    return {**_HEADERS, "Content-Security-Policy": policy}


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 / 1024:.1f} MiB"


class _Shown(Exception):
    """A page to show instead of what the route was about to do: raised, then answered."""

    def __init__(self, response: Response) -> None:
        super().__init__("shown")
        self.response = response


class _PortalRoute(APIRoute):
    """A route that answers the page a :class:`_Shown` carries, from its handler or a dependency."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def shown(request: Request) -> Response:
            try:
                return await handler(request)
            except _Shown as page:
                return page.response

        return shown


class _Environment(Environment):
    """Jinja2's environment, its filters typed."""

    filters: dict[str, Callable[..., object]]


@dataclass(frozen=True)
class _Said:
    """A notice at the top of a page: how it went (its style), in words, and what goes with it."""

    kind: str
    """``applied``, ``info``, ``proposed`` or ``refused``."""
    message: str
    link: tuple[str, str] | None = None
    """A link after the words: where, and what it says."""
    refresh: str = ""
    """Where the page sends the browser at once (a check-out's download), if anywhere."""
    technical: str = ""
    """A refusal's reason as the API gives it."""
    summary: str = ""
    """The summary a refused check-in carried, to fill the form again."""


@dataclass(frozen=True)
class _Dated:
    """Who did something, when, and what they wrote about it."""

    by: str
    at: datetime | None
    summary: str


# ─── the router ───────────────────────────────────────────────────────────────


def portal_router(
    files: NativeFiles,
    workspaces: Workspaces,
    *,
    resolve_actor: ResolveActor,
    people: Sequence[Person],
    workspace_ids: Sequence[str],
    limits: DiffLimits | None = None,
    editor_links: EditorLinks | None = None,
    clock: Callable[[], datetime] = utc_now,
    time_zone: tzinfo = UTC,
    secret: bytes | None = None,
    form_origins: Sequence[str] = (),
) -> APIRouter:
    """Return the portal's routes, under ``/portal``: the pages people use.

    Args:
        files: The service it calls.
        workspaces: Opens each request's workspace as its actor.
        resolve_actor: Names the caller, as the routers' does; a caller it refuses sees only
            the choice of person.
        people: Whom the page offers to act as.
        workspace_ids: The workspaces its first page lists.
        limits: The bounds of the diffs it shows; the defaults if None.
        editor_links: The buttons that open a file in an editor, on its page; none if None.
        clock: What "now" is, for times said as "in 8 hours".
        time_zone: The zone exact times are said in.
        secret: Signs the notice a form's redirect carries; a random one if None, so processes
            that share the page's traffic must share one.
        form_origins: Other origins its forms may post to (a WOPI editor's, which an
            ``editor_links`` form opens in a new tab); its own only if empty.
    """
    router = APIRouter(prefix="/portal", include_in_schema=False, route_class=_PortalRoute)
    headers = _headers(form_origins)
    names = {f"user:{person.id}": person.name for person in people}
    key = secret or secrets.token_bytes(32)
    stylesheet_text = (
        package_files("artifactr.files.fastapi").joinpath("static/portal.css").read_text()
    )
    environment = _Environment(
        loader=PackageLoader("artifactr.files.fastapi", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )

    def from_now(moment: datetime) -> str:
        return relative(moment, clock())

    def in_zone(moment: datetime) -> str:
        return exact(moment, time_zone)

    def in_zone_long(moment: datetime) -> str:
        return exact(moment, time_zone, long=True)

    environment.filters.update(
        rfc3339=rfc3339, size=_size, relative=from_now, exact=in_zone, exact_long=in_zone_long
    )
    templates = Jinja2Templates(env=environment)

    def name_of(actor: Actor | str) -> str:
        participant = actor if isinstance(actor, str) else actor.participant
        fallback = participant if isinstance(actor, str) else actor.display_name
        return names.get(participant, fallback)

    def at(moment: datetime) -> str:
        """Say a time to come in a notice: exact, then how far it is from now."""
        return f"{exact(moment, time_zone)} ({relative(moment, clock())})"

    def since(moment: datetime) -> str:
        """Say a time past in a notice: how long ago, then exact."""
        return f"{relative(moment, clock())} ({exact(moment, time_zone)})"

    # ─── answering ────────────────────────────────────────────────────────────

    def render(
        request: Request,
        template: str,
        context: Mapping[str, object],
        actor: Actor | None,
        *,
        status: int = 200,
    ) -> HTMLResponse:
        current = actor.id if isinstance(actor, UserActor) else None
        carried = _unseal(key, request.cookies.get(NOTICE_COOKIE, ""))
        full: dict[str, object] = {
            "people": people,
            "current": current,
            "back": _here(request),
            "said": carried,
            "actor": actor,
            **context,
        }
        said = full["said"]
        full["refresh"] = said.refresh if isinstance(said, _Said) else ""
        response = templates.TemplateResponse(
            request, template, full, status_code=status, headers=headers
        )
        if NOTICE_COOKIE in request.cookies:
            response.delete_cookie(NOTICE_COOKIE, path="/portal")
        return response

    def redirect(to: str, said: _Said) -> RedirectResponse:
        response = RedirectResponse(to, status_code=303)
        response.set_cookie(
            NOTICE_COOKIE,
            _seal(key, said),
            max_age=300,
            path="/portal",
            httponly=True,
            samesite="strict",
        )
        return response

    def message(
        request: Request,
        actor: Actor | None,
        heading: str,
        *,
        said: _Said | None = None,
        text: str = "",
        status: int = 200,
    ) -> HTMLResponse:
        context = {"title": heading, "heading": heading, "said": said, "text": text}
        return render(request, "message.html", context, actor, status=status)

    def refused(
        request: Request, actor: Actor | None, problem: Rejection | AppFailure
    ) -> HTMLResponse:
        status = 502 if isinstance(problem, AppFailure) else STATUS_CODES.get(problem.code, 400)
        said = refusal(problem)
        return message(request, actor, "That didn't work", said=said, status=status)

    def refusal(problem: Rejection | AppFailure, *, summary: str = "") -> _Said:
        said = for_people(problem)
        return _Said("refused", said.words, technical=said.technical, summary=summary)

    async def who(request: Request) -> tuple[str, Actor] | None:
        try:
            return await resolve_actor(request)
        except Unauthorized:
            return None

    async def opened(request: Request, workspace_id: Annotated[str, Path()]) -> Workspace:
        """Open the request's workspace as its caller, or show who-are-you or the refusal."""
        caller = await who(request)
        if caller is None:
            text = "Choose a person above to see the files."
            raise _Shown(message(request, None, "Who are you?", text=text, status=401))
        tenant_id, actor = caller
        try:
            return await workspaces.open(tenant_id, workspace_id, actor=actor)
        except Rejection as rejection:
            raise _Shown(refused(request, actor, rejection)) from rejection

    current = Depends(opened)

    def urls(request: Request, ws: Workspace) -> "_Urls":
        return _Urls(request, ws.workspace_id)

    async def may(ws: Workspace, action: str, artifact_id: str) -> bool:
        try:
            await ws.check(Access(action=action, artifact_id=artifact_id))
        except Rejection:
            return False
        return True

    def history(
        revisions: Sequence[Revision], known: Dates, accepted: Sequence[Decision] = ()
    ) -> list[dict[str, Any]]:
        authors = {decision.proposal_id: decision.proposed_by for decision in accepted}
        rows: list[dict[str, Any]] = []
        for revision in revisions:
            moment, summary = known.versions.get(revision.version, (None, ""))
            by = name_of(revision.actor)
            author = authors.get(revision.proposal_id or "")
            if author is not None:
                # Accepted from a proposal: the revision is the acceptor's, the words its author's.
                by = f"written by {name_of(author)}, accepted by {by}"
            rows.append(
                {
                    "version": revision.version,
                    "dated": _Dated(by, moment, summary),
                    "sha256": _content_digest(revision.data),
                }
            )
        return rows

    def why_not(me: Actor, proposal: Proposal, responder: bool) -> str:
        """Return why ``me`` may not decide ``proposal``: the workspace's or artifactr's rule."""
        return why_not_decide(me, proposal) if responder else MAY_NOT_DECIDE

    def decided_row(decision: Decision) -> dict[str, object]:
        by = name_of(decision.decided_by)
        outcome = (
            f"accepted by {by} as version {decision.version}"
            if decision.decision == "accept"
            else f"rejected by {by}"
        )
        return {"decision": decision, "by": name_of(decision.proposed_by), "outcome": outcome}

    def dated(proposal: Proposal, known: Dates) -> _Dated:
        change = proposal.change
        summary = change.summary if isinstance(change, EditArtifact) else ""
        moment = known.proposals.get(proposal.id)
        return _Dated(name_of(proposal.proposed_by), moment, summary or "")

    # ─── pages ────────────────────────────────────────────────────────────────

    @router.get("/portal.css", name="portal_stylesheet")
    async def stylesheet() -> Response:
        return Response(stylesheet_text, media_type="text/css", headers=headers)

    @router.get("", name="portal_home")
    async def home(request: Request) -> Response:
        caller = await who(request)
        actor = None if caller is None else caller[1]
        listed = [(ws, _Urls(request, ws).files()) for ws in workspace_ids]
        context = {"title": "Workspaces", "workspaces": listed}
        return render(request, "home.html", context, actor)

    @router.post("/person", name="portal_person")
    async def choose_person(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=4)
        person, back = str(form.get("person", "")), str(form.get("back", ""))
        home = request.url_for("portal_home").path
        target = back if back.startswith(home) and "//" not in back else home
        response = RedirectResponse(target, status_code=303)
        if person in {p.id for p in people}:
            response.set_cookie(PERSON_COOKIE, person, httponly=True, samesite="strict")
        else:
            response.delete_cookie(PERSON_COOKIE)
        return response

    @router.get("/workspaces/{workspace_id}/files", name="portal_files")
    async def file_list(
        request: Request,
        ws: Workspace = current,
        start: Annotated[int, Query(ge=0)] = 0,
    ) -> Response:
        # A page of the files, their count, and the workspace's live leases, whatever it holds.
        page = await files.history.files(ws, start=start, limit=FILES_PAGE)
        shown = page.files
        leases = await files.leases.live(scope_of(ws)) if shown else {}
        link = urls(request, ws)
        rows: list[dict[str, object]] = []
        for artifact in shown:
            lease = leases.get(artifact.id)
            held = "free" if lease is None else f"held by {name_of(_participant(lease.holder))}"
            rows.append(
                {
                    "href": link.file(artifact.id),
                    "name": artifact.data.name,
                    "size": _size(artifact.data.content.size),
                    "version": artifact.version,
                    "held": held,
                }
            )
        later = start + FILES_PAGE
        context = {
            "title": f"Files in {ws.workspace_id}",
            "workspace_id": ws.workspace_id,
            "rows": rows,
            "shown": f"files {start + 1}-{start + len(rows)} of {page.total}" if rows else "",
            "earlier": link.files(max(start - FILES_PAGE, 0)) if start else "",
            "later": link.files(later) if later < page.total else "",
            "total": page.total,
            "first": link.files(),
            **upload_context(request, ws, await may_add(ws)),
        }
        return render(request, "files.html", context, ws.actor)

    @router.get("/workspaces/{workspace_id}/files/{artifact_id}", name="portal_file")
    async def one_file(
        request: Request,
        artifact_id: str,
        ws: Workspace = current,
        before: Annotated[int | None, Query(ge=2)] = None,
    ) -> Response:
        try:
            context = await file_context(request, ws, artifact_id, before)
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        return render(request, "file.html", context, ws.actor)

    async def file_context(
        request: Request, ws: Workspace, artifact_id: str, before: int | None = None
    ) -> dict[str, object]:
        version, manifest = await files.manifest(ws, artifact_id)
        lease = await files.lease(ws, artifact_id)
        editor = await may(ws, EDIT, artifact_id)
        mine = lease is not None and _participant(lease.holder) == ws.actor.participant
        lapsed = [] if not editor or mine else await files.open_checkouts(ws, artifact_id)
        pending = await files.history.pending(ws, artifact_id)
        links = [] if editor_links is None else list(await editor_links(ws, artifact_id, manifest))
        revisions = await files.history.page(ws, artifact_id, before=before, limit=HISTORY_PAGE)
        known = await files.history.dates(
            ws, artifact_id, [r.version for r in revisions], [p.id for p in pending]
        )
        from_proposals = [r.proposal_id for r in revisions if r.proposal_id is not None]
        accepted = await files.history.decisions(ws, artifact_id, from_proposals)
        decided = await files.history.decisions(ws, artifact_id, limit=DECIDED_PAGE)
        oldest = revisions[-1].version  # a file has its first version; ``before`` is 2 or more
        link = urls(request, ws)
        ends = lease is not None and not mine and editor and await may(ws, ARCHIVE, artifact_id)
        session = None if lease is None else await editor_session(ws, lease.holder)
        broken = await files.ended_by_others(ws, artifact_id) if editor else []
        responder = bool(pending) and await may(ws, RESPOND, artifact_id)
        return {
            "session": session,
            "broken": broken[0] if broken else None,
            "title": manifest.name,
            "link": urls(request, ws),
            "artifact_id": artifact_id,
            "version": version,
            "file": manifest,
            "lease": lease,
            "holder": None if lease is None else name_of(_participant(lease.holder)),
            "mine": mine,
            "checkout_id": _checkout_of(lease.holder) if lease else "",
            "ends": ends,
            "editor": editor,
            "lapsed": lapsed[0] if lapsed else None,
            "summary_max": SUMMARY,
            "previews": range(1, min(manifest.pages or 0, MAX_PREVIEWS) + 1),
            "preview_scale": PREVIEW_SCALE,
            "full_scale": FULL_SCALE,
            "revisions": history(revisions, known, accepted),
            "decided": [decided_row(decision) for decision in decided],
            "older": link.file(artifact_id, before=oldest) if oldest > 1 else "",
            "newest": link.file(artifact_id) if before is not None else "",
            "proposals": [
                {
                    "proposal": proposal,
                    "dated": dated(proposal, known),
                    "outdated": _base_of(proposal) != version,
                    "why": why_not(ws.actor, proposal, responder),
                }
                for proposal in pending
            ],
            "editor_links": links,
        }

    async def editor_session(ws: Workspace, holder: str) -> str | None:
        """Return which editor holds a file under a check-out's lease, if an editor's lock does.

        A WebDAV token is a desktop editor's (Word or LibreOffice), any other lock the browser
        editor's (WOPI): the page says so, and what ending it does to unsaved edits.
        """
        record = await files.checkouts.get(scope_of(ws), _checkout_of(holder))
        if record is None or record.lock is None:
            return None
        return "a desktop editor" if personal_lock(record.lock) else "the browser editor"

    async def made_since(
        ws: Workspace, artifact_id: str, made_on: str, head: int
    ) -> tuple[list[Revision], int]:
        # The versions a stale check-in would undo, from one page of the newest: the page
        # shows at most that many (issue 41), and a base older than them is said as unknown.
        page = await files.history.page(ws, artifact_id, before=head + 1, limit=HISTORY_PAGE)
        made_from = max((r.version for r in page if _content_digest(r.data) == made_on), default=0)
        return [r for r in page if r.version > made_from], made_from

    def diff_context(link: "_Urls", found: FileDiff, manifest: NativeFile) -> dict[str, object]:
        return {
            "link": link,
            "found": found,
            "marked": _marked(found.text),
            "full": FULL_SCALE,
            "workbook": isinstance(manifest, Spreadsheet),
            "unit": "slide" if isinstance(manifest, Presentation) else "page",
            "rows": None if found.changes is None else kind_rows(found.changes),
        }

    @router.get("/workspaces/{workspace_id}/files/{artifact_id}/diff", name="portal_diff")
    async def diff_page(
        request: Request,
        artifact_id: str,
        before: Annotated[int, Query(alias="from")],
        after: Annotated[int, Query(alias="to")],
        ws: Workspace = current,
    ) -> Response:
        try:
            _, manifest = await files.manifest(ws, artifact_id)
            found = await revision_diff(files, ws, artifact_id, before, after, limits=limits)
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        context = {
            "title": f"{manifest.name}: version {before} to {after}",
            "back_label": manifest.name,
            **diff_context(urls(request, ws), found, manifest),
        }
        return render(request, "diff.html", context, ws.actor)

    @router.get(
        "/workspaces/{workspace_id}/files/{artifact_id}/proposals/{proposal_id}",
        name="portal_proposal",
    )
    async def proposal_page(
        request: Request, artifact_id: str, proposal_id: str, ws: Workspace = current
    ) -> Response:
        try:
            version, manifest = await files.manifest(ws, artifact_id)
            found = await proposal_diff(files, ws, artifact_id, proposal_id, limits=limits)
            proposal = await ws.proposal(proposal_id)
            _, base, after = await files.proposed(ws, artifact_id, proposal_id)
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        made_on = after.provenance.base
        made_from = found.before_version
        since: list[Revision] = []
        if made_on is not None and made_on != base.content.sha256:
            # A stale check-in: the file it replaces the head with was edited from an older
            # version, so accepting it undoes what changed since (ADR-0004). The history is
            # read back a page at a time to that version: what the page shows, no further.
            since, made_from = await made_since(ws, artifact_id, made_on, version)
        known = await files.history.dates(
            ws, artifact_id, [r.version for r in since], [proposal_id]
        )
        undone = list(reversed(history(since, known)))
        context = {
            "title": f"{manifest.name}: proposed on version {found.before_version}",
            "back_label": manifest.name,
            "proposal": proposal,
            "dated": dated(proposal, known),
            "outdated": found.before_version != version,
            "head": version,
            "mine": proposal.proposed_by.participant == ws.actor.participant,
            "undone": undone,
            "made_from": made_from,
            "why": why_not(ws.actor, proposal, await may(ws, RESPOND, artifact_id)),
            **diff_context(urls(request, ws), found, manifest),
        }
        return render(request, "proposal.html", context, ws.actor)

    @router.get(
        "/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/end",
        name="portal_end",
    )
    async def end_page(
        request: Request, artifact_id: str, checkout_id: str, ws: Workspace = current
    ) -> Response:
        link = urls(request, ws)
        try:
            await files.lease(ws, artifact_id)  # the file is visible to the caller
        except Rejection as problem:
            return refused(request, ws.actor, problem)
        record = await files.checkouts.get(scope_of(ws), checkout_id)
        if record is None or record.artifact_id != artifact_id or record.state != "open":
            said = _Said("info", "That check-out has ended already: the page shows who has it.")
            return redirect(link.file(artifact_id), said)
        lease = await files.lease(ws, artifact_id)
        holding = lease is not None and lease.holder == record.holder
        context = {
            "session": await editor_session(ws, record.holder),
            "title": f"End {name_of(record.actor)}'s check-out?",
            "holder": name_of(record.actor),
            "record": record,
            "until": lease.expires_at if lease is not None and holding else record.expires_at,
            "action": f"{link.checkout(artifact_id, checkout_id)}/end",
            "back_to": link.file(artifact_id),
        }
        return render(request, "end.html", context, ws.actor)

    # ─── actions ──────────────────────────────────────────────────────────────

    async def acting(
        request: Request,
        ws: Workspace,
        artifact_id: str,
        action: Callable[[], Awaitable[_Said]],
    ) -> Response:
        """Do a form's action as the caller, then send the browser to the file with the notice.

        A refusal is the notice instead: said for a person, the technical reason beside it.
        """
        try:
            said = await action()
        except (Rejection, AppFailure) as problem:
            said = refusal(problem)
        return redirect(urls(request, ws).file(artifact_id), said)

    async def may_add(ws: Workspace) -> bool:
        """Whether the caller may add files to the workspace: the upload form's condition."""
        try:
            await ws.check(Access(action=CREATE))
        except Rejection:
            return False
        return True

    def upload_context(request: Request, ws: Workspace, allowed: bool) -> dict[str, object]:
        """Return what the file list's upload form needs: none of it for whoever may not add."""
        if not allowed:
            return {"upload": None}
        link = urls(request, ws)
        return {"upload": {"action": link.files(), "kinds": kinds_taken(files.formats)}}

    @router.post("/workspaces/{workspace_id}/files", name="portal_upload")
    async def upload(request: Request, ws: Workspace = current) -> Response:
        """Add the file a person chose on the file list: named by it, its kind read from it.

        The files router's own upload (:func:`~artifactr.files.fastapi.router.upload_from`), so
        it is refused as the router refuses it, said for a person on the file list.
        """
        link = urls(request, ws)
        received = _Counted()
        try:
            outcome = await upload_from(request, files, ws, passing=received.count)
        except (Rejection, AppFailure) as problem:
            said = upload_refusal(problem, files.formats)
            if isinstance(problem, FormRefused) and problem.problem == "no_file":
                said = Refusal("Choose a file to add, then Upload.", said.technical)
            elif isinstance(problem, UnsafeFile) and received.size == 0:
                said = Refusal(
                    "The file you chose is empty: nothing was added. Choose the file again.",
                    said.technical,
                )
            return redirect(link.files(), _Said("refused", said.words, technical=said.technical))
        if isinstance(outcome, Proposed):
            said = _Said("proposed", "Kept as a proposal: someone decides whether to add it.")
            return redirect(link.files(), said)
        _, manifest = await files.manifest(ws, outcome.artifact_id)
        said = _Said(
            "applied",
            f"Added {manifest.name}, {kind_name(manifest.content.media_type)}, as version 1.",
        )
        return redirect(link.file(outcome.artifact_id), said)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/check-out")
    async def check_out(request: Request, artifact_id: str, ws: Workspace = current) -> Response:
        link = urls(request, ws)

        async def checked_out() -> _Said:
            try:
                record = await files.check_out(ws, artifact_id)
            except ArtifactBusy:
                mine = await files.open_checkouts(ws, artifact_id)
                lease = await files.lease(ws, artifact_id)
                if not mine or lease is None or lease.holder != mine[0].holder:
                    raise
                # The same form posted again: the check-out it made stands.
                download = link.download(artifact_id, mine[0].base_version)
                return _Said(
                    "info",
                    "You have this file checked out already, yours until "
                    f"{at(lease.expires_at)}: nothing was done again.",
                    link=(download, "Download it again"),
                )
            download = link.download(artifact_id, record.base_version)
            return _Said(
                "applied",
                f"Checked out version {record.base_version}, yours until "
                f"{at(record.expires_at)}. Your download starts by itself; edit the file, then "
                "check it in below.",
                link=(download, "Download it again"),
                refresh=download,
            )

        return await acting(request, ws, artifact_id, checked_out)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/extend")
    async def extend(
        request: Request, artifact_id: str, checkout_id: str, ws: Workspace = current
    ) -> Response:
        async def extended() -> _Said:
            record = await files.extend(ws, checkout_id)
            return _Said("applied", f"Extended: yours until {at(record.expires_at)}.")

        return await acting(request, ws, artifact_id, extended)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/discard")
    async def discard(
        request: Request, artifact_id: str, checkout_id: str, ws: Workspace = current
    ) -> Response:
        async def discarded() -> _Said:
            await files.discard(ws, checkout_id)
            free = await files.lease(ws, artifact_id) is None
            said = "and the file is free." if free else "and someone else has it checked out."
            return _Said("applied", f"Discarded: nothing was checked in, {said}")

        return await acting(request, ws, artifact_id, discarded)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/end")
    async def end(
        request: Request, artifact_id: str, checkout_id: str, ws: Workspace = current
    ) -> Response:
        async def ended() -> _Said:
            record = await files.checkouts.get(scope_of(ws), checkout_id)
            await files.discard(ws, checkout_id)
            holder = "the" if record is None else f"{name_of(record.actor)}'s"
            free = await files.lease(ws, artifact_id) is None
            said = "the file is free." if free else "someone else has it checked out now."
            return _Said("applied", f"You ended {holder} check-out: {said}")

        return await acting(request, ws, artifact_id, ended)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/check-in")
    async def check_in(
        request: Request, artifact_id: str, checkout_id: str, ws: Workspace = current
    ) -> Response:
        link = urls(request, ws)
        received = _Counted()
        summary = ""
        try:
            # Streamed as the files router streams it: the summary field comes before the file.
            body = await read_body(request, fields={"summary": SUMMARY})
            summary = body.fields.get("summary") or ""
            outcome = await files.check_in(
                ws, checkout_id, received.count(body.chunks), summary=summary or None
            )
        except (Rejection, AppFailure) as problem:
            if isinstance(problem, FormRefused):
                summary = problem.fields.get("summary", summary)
            kept = summary[:MAX_KEPT_SUMMARY]
            said = refusal(problem, summary=kept)
            if isinstance(problem, FormRefused) and problem.problem == "no_file":
                said = _Said("refused", "Choose the edited file to check in.", summary=kept)
            elif isinstance(problem, UnsafeFile) and received.size == 0:
                said = _Said(
                    "refused",
                    "The file you chose is empty: nothing was checked in. Choose the document "
                    "you saved after editing it.",
                    technical=said.technical,
                    summary=kept,
                )
            return redirect(link.file(artifact_id), said)
        said = checked_in(link, outcome, ws.actor)
        if outcome.status != "applied":
            return redirect(link.file(artifact_id), said)
        return redirect(link.diff(artifact_id, outcome.version - 1, outcome.version), said)

    def checked_in(link: "_Urls", outcome: CheckedIn, me: Actor) -> _Said:
        if outcome.status == "applied":
            return _Said("applied", f"Applied: your check-in is version {outcome.version}.")
        ended = ""
        if outcome.ended_by is not None and outcome.ended_at is not None:
            mine = outcome.ended_by.participant == me.participant
            by = "you" if mine else name_of(outcome.ended_by)
            ended = f"Your check-out was ended by {by} {since(outcome.ended_at)}, so "
        if outcome.status == "unchanged":
            return _Said(
                "info",
                f"{ended}Unchanged: the file you uploaded is version {outcome.version} as it is, "
                "so nothing new was made, and the file is free.",
            )
        proposal = link.proposal(outcome.artifact_id, outcome.proposal_id or "")
        if ended:
            return _Said(
                "proposed",
                f"{ended}your check-in was kept as a proposal on version {outcome.version}: "
                "someone else decides whether to accept it.",
                link=(proposal, "See what it changes"),
            )
        return _Said(
            "proposed",
            f"Kept as a proposal: the file moved on to version {outcome.version} since you "
            "checked it out, so your check-in waits for someone to accept it.",
            link=(proposal, "See what it changes"),
        )

    @router.post(
        "/workspaces/{workspace_id}/files/{artifact_id}/proposals/{proposal_id}/{decision}"
    )
    async def decide(
        request: Request,
        artifact_id: str,
        proposal_id: str,
        decision: Literal["accept", "reject"],
        ws: Workspace = current,
    ) -> Response:
        async def decided() -> _Said:
            try:
                await files.proposed(ws, artifact_id, proposal_id)
            except NotFound:
                done = [p for p in await ws.proposals(status=None) if p.id == proposal_id]
                if not done or done[0].artifact_id != artifact_id:
                    raise
                # Decided already, by this form posted again or by someone else.
                return _Said("info", f"This proposal was {done[0].status} already.")
            try:
                outcome = await ws.commit(
                    RespondToProposal(proposal_id=proposal_id, decision=decision)
                )
            except Forbidden as problem:
                why = why_not_decide(ws.actor, await ws.proposal(proposal_id))
                if not why:
                    raise
                # The author rule, in the words the page shows where Accept would be.
                said = f"{why[0].upper()}{why[1:]}. Nothing was decided."
                return _Said("refused", said, technical=for_people(problem).technical)
            return _Said(
                "applied",
                f"Accepted: the file is now version {outcome.model_dump().get('version')}."
                if decision == "accept"
                else "Rejected: the file is as it was.",
            )

        return await acting(request, ws, artifact_id, decided)

    return router


# ─── helpers ──────────────────────────────────────────────────────────────────


class _Counted:
    """Counts the bytes of a stream as it passes, to tell an empty upload from a bad one."""

    def __init__(self) -> None:
        self.size = 0

    async def count(self, chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
        async for chunk in chunks:
            self.size += len(chunk)
            yield chunk


def _seal(key: bytes, said: _Said) -> str:
    payload = base64.urlsafe_b64encode(zlib.compress(json.dumps(asdict(said)).encode())).decode()
    return f"{payload}.{_mac(key, payload)}"


def _unseal(key: bytes, value: str) -> _Said | None:
    """Return the notice a cookie carries, or None if it is missing, forged or malformed."""
    payload, _, mac = value.partition(".")
    if not payload or not hmac.compare_digest(mac, _mac(key, payload)):
        return None
    found = json.loads(zlib.decompress(base64.urlsafe_b64decode(payload)))
    link = found.pop("link")
    return _Said(**found, link=None if link is None else (link[0], link[1]))


def _mac(key: bytes, payload: str) -> str:
    return hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()


def _marked(text: TextDiff) -> list[list[tuple[str, list[Piece]]]]:
    """Return each hunk's lines in pieces, the words that differ marked changed.

    A removed paragraph and the one added in its place are compared word by word.
    """
    hunks: list[list[tuple[str, list[Piece]]]] = []
    for hunk in text.hunks:
        lines = [(line.op, [Piece(line.text, False)]) for line in hunk.lines]
        at = 0
        while at < len(lines):
            removed = at
            while removed < len(lines) and hunk.lines[removed].op == "removed":
                removed += 1
            added = removed
            while added < len(lines) and hunk.lines[added].op == "added":
                added += 1
            for pair in range(min(removed - at, added - removed)):
                old, new = at + pair, removed + pair
                left, right = changed_words(hunk.lines[old].text, hunk.lines[new].text)
                lines[old], lines[new] = ("removed", left), ("added", right)
            at = max(added, at + 1)
        hunks.append(lines)
    return hunks


def _base_of(proposal: Proposal) -> int | None:
    change = proposal.change
    return change.base_version if isinstance(change, EditArtifact) else None


def _content_digest(data: Mapping[str, object]) -> str:
    return Blob.model_validate(data.get("content")).sha256


class _Urls:
    """Where each page and each of the files router's routes is, for one workspace."""

    def __init__(self, request: Request, workspace_id: str) -> None:
        self._request = request
        self._workspace = workspace_id

    def _path(self, name: str, **params: str) -> str:
        quoted = {key: quote(value, safe="") for key, value in params.items()}
        return self._request.url_for(
            name, workspace_id=quote(self._workspace, safe=""), **quoted
        ).path

    def files(self, start: int = 0) -> str:
        path = self._path("portal_files")
        return f"{path}?{urlencode({'start': start})}" if start else path

    def file(self, artifact_id: str, *, before: int | None = None) -> str:
        path = self._path("portal_file", artifact_id=artifact_id)
        return f"{path}?{urlencode({'before': before})}" if before is not None else path

    def action(self, artifact_id: str, action: str) -> str:
        return f"{self.file(artifact_id)}/{action}"

    def checkout(self, artifact_id: str, checkout_id: str) -> str:
        return f"{self.file(artifact_id)}/checkouts/{quote(checkout_id, safe='')}"

    def diff(self, artifact_id: str, before: int, after: int) -> str:
        query = urlencode({"from": before, "to": after})
        return f"{self._path('portal_diff', artifact_id=artifact_id)}?{query}"

    def proposal(self, artifact_id: str, proposal_id: str) -> str:
        return self._path("portal_proposal", artifact_id=artifact_id, proposal_id=proposal_id)

    def download(self, artifact_id: str, version: int) -> str:
        return self._path("download_file", artifact_id=artifact_id, version=str(version))

    def page(self, artifact_id: str, version: int, page: int, scale: float = 0.5) -> str:
        path = self._path(
            "file_page", artifact_id=artifact_id, version=str(version), page=str(page)
        )
        return f"{path}?scale={scale}"

    def proposal_page(
        self, artifact_id: str, proposal_id: str, page: int, scale: float = 0.5
    ) -> str:
        path = self._path(
            "proposal_page", artifact_id=artifact_id, proposal_id=proposal_id, page=str(page)
        )
        return f"{path}?scale={scale}"


def _here(request: Request) -> str:
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


def _participant(holder: str) -> str:
    """Return who holds a lease: ``checkout:<id>:<participant>``'s participant, or the holder."""
    kind, _, rest = holder.partition(":")
    return rest.partition(":")[2] if kind == "checkout" else holder


def _checkout_of(holder: str) -> str:
    return holder.split(":", 2)[1]
