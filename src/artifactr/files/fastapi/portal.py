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
for one file its name, size, outline, the lease's holder and expiry, page previews, its history
with each revision's diff (changed text, differing pages side by side) and its pending
proposals, with accept and reject for a person who may; check-out (which downloads the file and
shows the expiry), extend, discard, and check-in by a file-upload form, streamed into the
service as the files router streams one (:func:`~artifactr.files.fastapi.bodies.read_body`),
whose outcome is said in words: applied, unchanged, or kept as a proposal because the file
moved on. An optional :data:`EditorLinks` provider adds buttons that open the file in an editor
(the file page's ``editor_actions`` block).

Who the caller is comes from ``resolve_actor``; the page offers ``people`` to choose from and
keeps the choice in the :data:`PERSON_COOKIE` cookie, which the application's ``resolve_actor``
reads. That is a choice, not authentication, and the page says so.
"""

from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from importlib.resources import files as package_files
from typing import Annotated, Any, Final, Literal
from urllib.parse import quote, urlencode

from artifactr.core import (
    Actor,
    EditArtifact,
    Proposal,
    Rejection,
    RespondToProposal,
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

from artifactr.files.core.clock import rfc3339
from artifactr.files.core.errors import AppFailure
from artifactr.files.core.manifests import NativeFile
from artifactr.files.fastapi.bodies import FormRefused, read_body
from artifactr.files.fastapi.router import SUMMARY
from artifactr.files.native import CheckedIn, NativeFiles
from artifactr.files.native.diff import DiffLimits, proposal_diff, revision_diff

PERSON_COOKIE: Final = "artifactr_person"
"""The cookie that keeps the chosen person's id."""

CONTENT_SECURITY_POLICY: Final = (
    "default-src 'self'; script-src 'none'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
"""The page's own origin only: its stylesheet, its forms and the router's renders; no script."""

PREVIEW_SCALE: Final = 0.3
"""The scale of the page previews on a file's page."""

MAX_PREVIEWS: Final = 12
"""How many pages a file's page previews."""

EDIT: Final = "artifactr:edit_artifact"
RESPOND: Final = "artifactr:respond_to_proposal"

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


def _templates() -> Jinja2Templates:
    environment = _Environment(
        loader=PackageLoader("artifactr.files.fastapi", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters.update(rfc3339=rfc3339, size=_size, why=_why)
    return Jinja2Templates(env=environment)


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
    """
    router = APIRouter(prefix="/portal", include_in_schema=False, route_class=_PortalRoute)
    names = {f"user:{person.id}": person.name for person in people}
    templates = _templates()
    stylesheet_text = (
        package_files("artifactr.files.fastapi").joinpath("static/portal.css").read_text()
    )

    def name_of(participant: str) -> str:
        return names.get(participant, participant)

    def render(
        request: Request,
        template: str,
        context: Mapping[str, object],
        actor: Actor | None,
        *,
        status: int = 200,
    ) -> HTMLResponse:
        current = actor.id if isinstance(actor, UserActor) else None
        full: dict[str, object] = {
            "people": people,
            "current": current,
            "back": _here(request),
            "refresh": "",
            "said": None,
            "actor": actor,
            **context,
        }
        return templates.TemplateResponse(
            request, template, full, status_code=status, headers=_HEADERS
        )

    def message(
        request: Request,
        actor: Actor | None,
        heading: str,
        *,
        said: "_Said | None" = None,
        text: str = "",
        status: int = 200,
    ) -> HTMLResponse:
        context = {"title": heading, "heading": heading, "said": said, "text": text}
        return render(request, "message.html", context, actor, status=status)

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

    def refused(
        request: Request, actor: Actor | None, problem: Rejection | AppFailure
    ) -> HTMLResponse:
        if isinstance(problem, AppFailure):
            status, words = 502, f"The app failed ({problem.kind}): {problem.reason}"
        else:
            status, words = STATUS_CODES.get(problem.code, 400), str(problem)
        said = _Said("refused", words)
        return message(request, actor, "That didn't work", said=said, status=status)

    def urls(request: Request, ws: Workspace) -> "_Urls":
        return _Urls(request, ws.workspace_id)

    async def may(ws: Workspace, action: str, artifact_id: str) -> bool:
        try:
            await ws.check(Access(action=action, artifact_id=artifact_id))
        except Rejection:
            return False
        return True

    # ─── pages ────────────────────────────────────────────────────────────────

    @router.get("/portal.css", name="portal_stylesheet")
    async def stylesheet() -> Response:
        return Response(stylesheet_text, media_type="text/css", headers=_HEADERS)

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
    async def file_list(request: Request, ws: Workspace = current) -> Response:
        rows: list[dict[str, object]] = []
        for artifact in await ws.artifacts(NativeFile):
            lease = await files.lease(ws, artifact.id)
            held = "free" if lease is None else f"held by {name_of(_participant(lease.holder))}"
            rows.append(
                {
                    "href": urls(request, ws).file(artifact.id),
                    "name": artifact.data.name,
                    "size": _size(artifact.data.content.size),
                    "version": artifact.version,
                    "held": held,
                }
            )
        title = f"Files in {ws.workspace_id}"
        context = {"title": title, "workspace_id": ws.workspace_id, "rows": rows}
        return render(request, "files.html", context, ws.actor)

    async def acting(
        request: Request,
        ws: Workspace,
        artifact_id: str,
        action: Callable[[], Awaitable[tuple["_Said", str]]],
    ) -> Response:
        """Do a form's action as the caller, then show the file with its notice.

        ``action`` returns the notice and where the page sends the browser next ("" for
        nowhere); a refusal is the notice instead.
        """
        try:
            said, refresh = await action()
        except Rejection as rejection:
            return await file_page(request, ws, artifact_id, _Said("refused", str(rejection)))
        return await file_page(request, ws, artifact_id, said, refresh=refresh)

    async def file_page(
        request: Request,
        ws: Workspace,
        artifact_id: str,
        said: "_Said | None" = None,
        refresh: str = "",
    ) -> Response:
        try:
            context = await file_context(request, ws, artifact_id)
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        context.update(said=said, refresh=refresh, back=urls(request, ws).file(artifact_id))
        return render(request, "file.html", context, ws.actor)

    async def file_context(request: Request, ws: Workspace, artifact_id: str) -> dict[str, object]:
        version, manifest = await files.manifest(ws, artifact_id)
        lease = await files.lease(ws, artifact_id)
        editor = await may(ws, EDIT, artifact_id)
        mine = lease is not None and _participant(lease.holder) == ws.actor.participant
        lapsed = [] if not editor or mine else await files.open_checkouts(ws, artifact_id)
        pending = [p for p in await ws.proposals() if p.artifact_id == artifact_id]
        links = [] if editor_links is None else list(await editor_links(ws, artifact_id, manifest))
        return {
            "title": "File",
            "link": urls(request, ws),
            "artifact_id": artifact_id,
            "version": version,
            "file": manifest,
            "lease": lease,
            "holder": None if lease is None else name_of(_participant(lease.holder)),
            "mine": mine,
            "checkout_id": _checkout_of(lease.holder) if mine and lease else "",
            "editor": editor,
            "lapsed": lapsed[0] if lapsed else None,
            "summary_max": SUMMARY,
            "previews": range(1, min(manifest.pages or 0, MAX_PREVIEWS) + 1),
            "preview_scale": PREVIEW_SCALE,
            "revisions": list(reversed(await ws.revisions(artifact_id))),
            "proposals": pending,
            "responder": bool(pending) and await may(ws, RESPOND, artifact_id),
            "editor_links": links,
        }

    @router.get("/workspaces/{workspace_id}/files/{artifact_id}", name="portal_file")
    async def one_file(request: Request, artifact_id: str, ws: Workspace = current) -> Response:
        return await file_page(request, ws, artifact_id)

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
            "link": urls(request, ws),
            "found": found,
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
            _, manifest = await files.manifest(ws, artifact_id)
            found = await proposal_diff(files, ws, artifact_id, proposal_id, limits=limits)
            proposal = await ws.proposal(proposal_id)
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        context = {
            "title": f"{manifest.name}: proposed on version {found.before_version}",
            "back_label": manifest.name,
            "link": urls(request, ws),
            "found": found,
            "proposal": proposal,
            "responder": await may(ws, RESPOND, artifact_id),
        }
        return render(request, "proposal.html", context, ws.actor)

    # ─── actions ──────────────────────────────────────────────────────────────

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/check-out")
    async def check_out(request: Request, artifact_id: str, ws: Workspace = current) -> Response:
        async def checked_out() -> tuple[_Said, str]:
            record = await files.check_out(ws, artifact_id)
            download = urls(request, ws).download(artifact_id, record.base_version)
            said = _Said(
                "applied",
                f"Checked out version {record.base_version} until {rfc3339(record.expires_at)}. "
                "Your download starts by itself; edit the file, then check it in below.",
                link=(download, "Download it again"),
            )
            return said, download

        return await acting(request, ws, artifact_id, checked_out)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/extend")
    async def extend(
        request: Request, artifact_id: str, checkout_id: str, ws: Workspace = current
    ) -> Response:
        async def extended() -> tuple[_Said, str]:
            record = await files.extend(ws, checkout_id)
            return _Said("applied", f"Extended: yours until {rfc3339(record.expires_at)}."), ""

        return await acting(request, ws, artifact_id, extended)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/discard")
    async def discard(
        request: Request, artifact_id: str, checkout_id: str, ws: Workspace = current
    ) -> Response:
        async def discarded() -> tuple[_Said, str]:
            await files.discard(ws, checkout_id)
            free = await files.lease(ws, artifact_id) is None
            said = "and the file is free." if free else "and someone else has it checked out."
            return _Said("applied", f"Discarded: nothing was checked in, {said}"), ""

        return await acting(request, ws, artifact_id, discarded)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/check-in")
    async def check_in(
        request: Request, artifact_id: str, checkout_id: str, ws: Workspace = current
    ) -> Response:
        link = urls(request, ws)
        try:
            # Streamed as the files router streams it: the summary field comes before the file.
            body = await read_body(request, fields={"summary": SUMMARY})
            summary = body.fields.get("summary") or None
            outcome = await files.check_in(ws, checkout_id, body.chunks, summary=summary)
        except (Rejection, AppFailure) as problem:
            return await file_page(request, ws, artifact_id, _Said("refused", _said(problem)))
        said = _checked_in(link, outcome)
        if outcome.status != "applied":
            return await file_page(request, ws, artifact_id, said)
        try:
            found = await revision_diff(
                files, ws, artifact_id, outcome.version - 1, outcome.version, limits=limits
            )
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        context = {
            "title": f"Version {outcome.version - 1} to {outcome.version}",
            "back_label": "back to the file",
            "link": link,
            "found": found,
            "said": said,
            "back": link.file(artifact_id),
        }
        return render(request, "diff.html", context, ws.actor)

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
        async def decided() -> tuple[_Said, str]:
            await files.proposed(ws, artifact_id, proposal_id)
            outcome = await ws.commit(RespondToProposal(proposal_id=proposal_id, decision=decision))
            words = (
                f"Accepted: the file is now version {outcome.model_dump().get('version')}."
                if decision == "accept"
                else "Rejected: the file is as it was."
            )
            return _Said("applied", words), ""

        return await acting(request, ws, artifact_id, decided)

    return router


# ─── helpers ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class _Said:
    """A notice at the top of a page: how it went (its style), in words, and a link."""

    kind: str
    message: str
    link: tuple[str, str] | None = None


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

    def files(self) -> str:
        return self._path("portal_files")

    def file(self, artifact_id: str) -> str:
        return self._path("portal_file", artifact_id=artifact_id)

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

    def proposal_page(self, artifact_id: str, proposal_id: str, page: int) -> str:
        path = self._path(
            "proposal_page", artifact_id=artifact_id, proposal_id=proposal_id, page=str(page)
        )
        return f"{path}?scale=0.5"


def _why(proposal: Proposal) -> str:
    change = proposal.change
    summary = change.summary if isinstance(change, EditArtifact) else None
    return proposal.rationale or summary or "no reason given"


def _here(request: Request) -> str:
    return request.url.path + (f"?{request.url.query}" if request.url.query else "")


def _participant(holder: str) -> str:
    """Return who holds a lease: ``checkout:<id>:<participant>``'s participant, or the holder."""
    kind, _, rest = holder.partition(":")
    return rest.partition(":")[2] if kind == "checkout" else holder


def _checkout_of(holder: str) -> str:
    return holder.split(":", 2)[1]


def _checked_in(link: _Urls, outcome: CheckedIn) -> _Said:
    if outcome.status == "applied":
        return _Said("applied", f"Applied: your check-in is version {outcome.version}.")
    if outcome.status == "unchanged":
        return _Said(
            "info",
            f"Unchanged: the file you uploaded is version {outcome.version} as it is, so "
            "nothing new was made, and the file is free.",
        )
    return _Said(
        "proposed",
        f"Kept as a proposal: the file moved on to version {outcome.version} since you "
        "checked it out, so your check-in waits for someone to accept it.",
        link=(link.proposal(outcome.artifact_id, outcome.proposal_id or ""), "See what it changes"),
    )


def _said(problem: Rejection | AppFailure) -> str:
    if isinstance(problem, FormRefused) and problem.problem == "no_file":
        return "Choose the edited file to check in."
    return str(problem) if isinstance(problem, Rejection) else problem.reason
