"""Portal: the page people check native files out and in through, server-rendered (ADR-0011).

It is one module past the line budget (issue 18) because it is one concept read top to bottom:
each route renders one page a person sees, beside the closures that build that page's HTML, so
splitting the HTML from the routes would split each page in two.

:func:`portal_router` is the files router's reference client for people, as RFC-0003's portalr
would be: plain HTML forms, no framework, no script and no third-party asset, under a strict
Content Security Policy (:data:`CONTENT_SECURITY_POLICY`), so it works without JavaScript. It
calls :class:`~artifactr.files.native.NativeFiles` and :mod:`artifactr.files.native.diff` as the
caller, through the same ``resolve_actor`` as the routers, and links the files router's own
routes for bytes (downloads and page renders), so it must be included in the same app::

    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    app.include_router(portal_router(files, workspaces, resolve_actor=resolve_actor, people=people))

What a person sees, under ``/portal/workspaces/{workspace_id}/files``: the workspace's files;
for one file its name, size, outline, the lease's holder and expiry, page previews, its history
with each revision's diff (changed text, differing pages side by side) and its pending
proposals, with accept and reject for a person who may; check-out (which downloads the file and
shows the expiry), extend, discard, and check-in by a file-upload form, streamed into the
service as the files router streams one (:func:`~artifactr.files.fastapi.bodies.read_body`),
whose outcome is said in words: applied, unchanged, or kept as a proposal because the file
moved on. Times are RFC 3339 in UTC, as every answer gives them.

Who the caller is comes from ``resolve_actor``; the page offers ``people`` to choose from and
keeps the choice in the :data:`PERSON_COOKIE` cookie, which the application's ``resolve_actor``
reads. That is a choice, not authentication, and the page says so.
"""

import html
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Final, Literal
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
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, ConfigDict

from artifactr.files.core.clock import rfc3339
from artifactr.files.core.errors import AppFailure
from artifactr.files.core.manifests import NativeFile
from artifactr.files.fastapi.bodies import FormRefused, read_body
from artifactr.files.fastapi.router import SUMMARY
from artifactr.files.native import CheckedIn, NativeFiles
from artifactr.files.native.diff import DiffLimits, FileDiff, proposal_diff, revision_diff
from fastapi import APIRouter, Path, Query, Request

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

STYLESHEET: Final = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
header { background: #1d2330; color: #fff; padding: .6em 1.2em; display: flex;
  align-items: center; justify-content: space-between; flex-wrap: wrap; gap: .6em; }
header a { color: #fff; text-decoration: none; font-weight: 600; }
header form { margin: 0; }
header small { color: #c6cbd6; }
main { padding: 1em 1.4em; max-width: 74em; }
h1 { font-size: 1.5em; margin: .2em 0 .6em; }
h2 { font-size: 1.15em; margin: 1.4em 0 .5em; border-bottom: 1px solid #d9dde5; }
table { border-collapse: collapse; background: #fff; }
th, td { text-align: left; padding: .35em .8em; border-bottom: 1px solid #e3e6ec; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; }
dt { color: #5b6475; } dd { margin: 0; }
pre { background: #fff; padding: .5em; border: 1px solid #e3e6ec; white-space: pre-wrap; }
.notice { padding: .7em 1em; border-radius: 4px; margin: .6em 0 1em; font-weight: 600; }
.applied { background: #e3f4e6; border: 1px solid #7cc08a; }
.proposed, .held { background: #fff4dc; border: 1px solid #e0b453; }
.refused { background: #fbe4e4; border: 1px solid #d57b7b; }
.info { background: #e6eefb; border: 1px solid #8aa7dc; }
.actions form { display: inline-block; margin: 0 .5em .5em 0; }
button, .button { font: inherit; padding: .35em .9em; border-radius: 4px; cursor: pointer;
  border: 1px solid #2f5fb3; background: #2f5fb3; color: #fff; text-decoration: none; }
button.quiet { background: #fff; color: #2f5fb3; }
.pages { display: flex; flex-wrap: wrap; gap: .6em; }
.pages figure { margin: 0; text-align: center; }
.pages img, .side img { border: 1px solid #c9ced8; background: #fff; }
.side { display: flex; gap: 1em; margin-bottom: 1em; }
.side figure { margin: 0; } .side figcaption { color: #5b6475; }
.missing { width: 180px; height: 250px; border: 1px dashed #c9ced8; display: flex;
  align-items: center; justify-content: center; color: #5b6475; }
.hunk { background: #fff; border: 1px solid #e3e6ec; margin-bottom: .8em; }
.hunk div { padding: .1em .6em; white-space: pre-wrap; }
.hunk .at { color: #5b6475; background: #f0f2f6; }
.removed { background: #fde8e8; } .removed::before { content: "- "; }
.added { background: #e3f4e6; } .added::before { content: "+ "; }
.same::before { content: "  "; }
.muted { color: #5b6475; }
"""
"""The page's stylesheet, served from its own origin."""


class Person(BaseModel):
    """Someone the page offers to act as."""

    model_config = ConfigDict(frozen=True)

    id: str
    """Their user id: what ``resolve_actor`` makes a :class:`~artifactr.UserActor` of."""
    name: str
    """Their name."""
    role: str = ""
    """What they may do, in words (``"editor"``)."""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KiB"
    return f"{size / 1024 / 1024:.1f} MiB"


# ─── the router ───────────────────────────────────────────────────────────────


def portal_router(
    files: NativeFiles,
    workspaces: Workspaces,
    *,
    resolve_actor: ResolveActor,
    people: Sequence[Person],
    workspace_ids: Sequence[str],
    limits: DiffLimits | None = None,
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
    """
    router = APIRouter(prefix="/portal", include_in_schema=False)
    names = {f"user:{person.id}": person.name for person in people}

    def name_of(participant: str) -> str:
        return names.get(participant, participant)

    def chooser(request: Request, current: str | None, back: str) -> str:
        options = "".join(
            f'<option value="{_e(p.id)}"{" selected" if p.id == current else ""}>'
            f"{_e(p.name)} ({_e(p.role)})</option>"
            for p in people
        )
        return (
            f'<form method="post" action="{_e(request.url_for("portal_person").path)}">'
            f'<label><small>You are</small> <select name="person">'
            f'<option value=""{"" if current else " selected"}>nobody</option>{options}</select>'
            f'</label> <input type="hidden" name="back" value="{_e(back)}">'
            '<button class="quiet" type="submit">Switch</button> '
            "<small>(a choice, not authentication: anyone may pick anyone)</small></form>"
        )

    def page(
        request: Request,
        title: str,
        body: str,
        actor: Actor | None,
        *,
        status: int = 200,
        refresh: str = "",
        back: str = "",
    ) -> HTMLResponse:
        current = actor.id if isinstance(actor, UserActor) else None
        head = (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{_e(title)} · artifactr.files</title>"
            f'<link rel="stylesheet" href="{_e(request.url_for("portal_stylesheet").path)}">'
            # A check-out's download starts by itself, with no script, and the page stays.
            + (f'<meta http-equiv="refresh" content="0; url={_e(refresh)}">' if refresh else "")
            + "</head><body>"
        )
        home = request.url_for("portal_home").path
        switch = chooser(request, current, back or _here(request))
        bar = f'<header><a href="{_e(home)}">artifactr.files</a>{switch}</header>'
        return HTMLResponse(
            f"{head}{bar}<main>{body}</main></body></html>", status_code=status, headers=_HEADERS
        )

    async def who(request: Request) -> tuple[str, Actor] | None:
        try:
            return await resolve_actor(request)
        except Unauthorized:
            return None

    async def open_as(request: Request, workspace_id: str) -> Workspace | HTMLResponse:
        caller = await who(request)
        if caller is None:
            body = "<h1>Who are you?</h1><p>Choose a person above to see the files.</p>"
            return page(request, "Who are you?", body, None, status=401)
        tenant_id, actor = caller
        try:
            return await workspaces.open(tenant_id, workspace_id, actor=actor)
        except Rejection as rejection:
            return refused(request, actor, rejection)

    def refused(
        request: Request, actor: Actor | None, problem: Rejection | AppFailure
    ) -> HTMLResponse:
        if isinstance(problem, AppFailure):
            status, message = 502, f"The app failed ({problem.kind}): {problem.reason}"
        else:
            status, message = STATUS_CODES.get(problem.code, 400), str(problem)
        body = f'<h1>That didn\'t work</h1><p class="notice refused">{_e(message)}</p>'
        return page(request, "Refused", body, actor, status=status)

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
        return Response(STYLESHEET, media_type="text/css", headers=_HEADERS)

    @router.get("", name="portal_home")
    async def home(request: Request) -> Response:
        caller = await who(request)
        actor = None if caller is None else caller[1]
        body = "<h1>Workspaces</h1><ul>"
        body += "".join(
            f'<li><a href="{_e(_Urls(request, ws).files())}">{_e(ws)}</a></li>'
            for ws in workspace_ids
        )
        body += "</ul>"
        if caller is None:
            body += "<p>Choose a person above to see the files.</p>"
        return page(request, "Workspaces", body, actor)

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
    async def file_list(request: Request, workspace_id: Annotated[str, Path()]) -> Response:
        ws = await open_as(request, workspace_id)
        if isinstance(ws, HTMLResponse):
            return ws
        rows: list[str] = []
        for artifact in await ws.artifacts(NativeFile):
            lease = await files.lease(ws, artifact.id)
            held = "free" if lease is None else f"held by {name_of(_participant(lease.holder))}"
            link = urls(request, ws).file(artifact.id)
            rows.append(
                f'<tr><td><a href="{_e(link)}">{_e(artifact.data.name)}</a></td>'
                f"<td>{_e(_size(artifact.data.content.size))}</td>"
                f"<td>{artifact.version}</td><td>{_e(held)}</td></tr>"
            )
        table = (
            "<table><tr><th>Name</th><th>Size</th><th>Version</th><th>Lease</th></tr>"
            + "".join(rows)
            + "</table>"
            if rows
            else "<p>No files yet.</p>"
        )
        body = f"<h1>Files in {_e(workspace_id)}</h1>{table}"
        return page(request, f"Files in {workspace_id}", body, ws.actor)

    async def acting(
        request: Request,
        workspace_id: str,
        artifact_id: str,
        action: Callable[[Workspace], Awaitable[tuple[str, str]]],
    ) -> Response:
        """Do a form's action as the caller, then show the file with its notice.

        ``action`` returns the notice and where the page sends the browser next ("" for
        nowhere); a refusal is the notice instead.
        """
        ws = await open_as(request, workspace_id)
        if isinstance(ws, HTMLResponse):
            return ws
        try:
            notice, refresh = await action(ws)
        except Rejection as rejection:
            return await file_page(request, ws, artifact_id, _notice("refused", str(rejection)))
        return await file_page(request, ws, artifact_id, notice, refresh=refresh)

    async def file_page(
        request: Request, ws: Workspace, artifact_id: str, notice: str = "", refresh: str = ""
    ) -> Response:
        try:
            body = await _file_body(request, ws, artifact_id)
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        back = urls(request, ws).file(artifact_id)
        return page(request, "File", notice + body, ws.actor, refresh=refresh, back=back)

    async def _file_body(request: Request, ws: Workspace, artifact_id: str) -> str:
        version, manifest = await files.manifest(ws, artifact_id)
        link = urls(request, ws)
        lease = await files.lease(ws, artifact_id)
        me = ws.actor.participant
        editor = await may(ws, EDIT, artifact_id)
        mine = lease is not None and _participant(lease.holder) == me
        parts = [f"<h1>{_e(manifest.name)}</h1><dl>"]
        parts.append(f"<dt>Size</dt><dd>{_e(_size(manifest.content.size))}</dd>")
        parts.append(f"<dt>Version</dt><dd>{version}</dd>")
        pages = manifest.pages
        parts.append(f"<dt>Pages</dt><dd>{'unknown' if pages is None else pages}</dd>")
        if lease is None:
            parts.append("<dt>Lease</dt><dd>free: no one has it checked out</dd>")
        else:
            holder = name_of(_participant(lease.holder))
            parts.append(
                f"<dt>Lease</dt><dd>checked out by <strong>{_e(holder)}</strong> until "
                f"<strong>{_e(rfc3339(lease.expires_at))}</strong></dd>"
            )
        parts.append("</dl>")
        download = link.download(artifact_id, version)
        parts.append('<div class="actions">')
        parts.append(f'<a class="button" href="{_e(download)}">Download version {version}</a> ')
        if not editor:
            parts.append('<p class="muted">You may read this file, not check it out.</p>')
        elif lease is None:
            parts.append(_button(link.action(artifact_id, "check-out"), "Check out"))
        elif mine:
            checkout_id = _checkout_of(lease.holder)
            base = link.checkout(artifact_id, checkout_id)
            parts.append(_button(f"{base}/extend", "Extend by 8 hours", quiet=True))
            parts.append(_button(f"{base}/discard", "Discard the check-out", quiet=True))
            parts.append(_check_in_form(base))
        else:
            parts.append(
                '<p class="notice held">Someone else has it checked out: you may check it out '
                "once they check it in or their lease lapses.</p>"
            )
        lapsed = [] if not editor or mine else await files.open_checkouts(ws, artifact_id)
        if lapsed:
            # The lease lapsed, the check-out did not: its edit can still come in (ADR-0004).
            base = link.checkout(artifact_id, lapsed[0].id)
            parts.append(
                f'<p class="notice held">Your check-out of version {lapsed[0].base_version} '
                f"lapsed at <strong>{_e(rfc3339(lapsed[0].expires_at))}</strong>. Check in your "
                "edited file all the same: it is applied if no one has changed the file since, "
                "or kept as a proposal for review if someone has. Or discard it.</p>"
            )
            parts.append(_button(f"{base}/discard", "Discard the check-out", quiet=True))
            parts.append(_check_in_form(base))
        parts.append("</div>")
        parts.append("<h2>Outline</h2>")
        parts.append(f"<pre>{_e(manifest.outline)}</pre>" if manifest.outline else "<p>None.</p>")
        parts.append("<h2>Pages</h2><div class=pages>")
        for number in range(1, min(pages or 0, MAX_PREVIEWS) + 1):
            src = link.page(artifact_id, version, number, PREVIEW_SCALE)
            parts.append(
                f'<figure><img src="{_e(src)}" alt="page {number}" width="179">'
                f"<figcaption>{number}</figcaption></figure>"
            )
        parts.append("</div>")
        parts.append(await _history(ws, artifact_id, link))
        parts.append(await _proposals(ws, artifact_id, link))
        return "".join(parts)

    async def _history(ws: Workspace, artifact_id: str, link: "_Urls") -> str:
        rows: list[str] = []
        for revision in reversed(await ws.revisions(artifact_id)):
            number = revision.version
            diff = (
                f'<a href="{_e(link.diff(artifact_id, number - 1, number))}">changes</a>'
                if number > 1
                else '<span class="muted">first version</span>'
            )
            download = link.download(artifact_id, number)
            rows.append(
                f"<tr><td>{number}</td><td>{_e(revision.actor.display_name)}</td>"
                f'<td>{diff}</td><td><a href="{_e(download)}">download</a></td></tr>'
            )
        header = "<tr><th>Version</th><th>By</th><th>Diff</th><th>File</th></tr>"
        return f"<h2>History</h2><table>{header}{''.join(rows)}</table>"

    async def _proposals(ws: Workspace, artifact_id: str, link: "_Urls") -> str:
        pending = [p for p in await ws.proposals() if p.artifact_id == artifact_id]
        if not pending:
            return "<h2>Pending proposals</h2><p>None.</p>"
        responder = await may(ws, RESPOND, artifact_id)
        rows = [
            f"<tr><td>{_e(proposal.proposed_by.display_name)}</td>"
            f"<td>{_e(_why(proposal))}</td>"
            f'<td><a href="{_e(link.proposal(artifact_id, proposal.id))}">changes</a></td>'
            f"<td>{_decide(link, artifact_id, proposal, ws.actor, responder)}</td></tr>"
            for proposal in pending
        ]
        header = "<tr><th>By</th><th>Why</th><th>Diff</th><th></th></tr>"
        return f"<h2>Pending proposals</h2><table>{header}{''.join(rows)}</table>"

    def diff_body(link: "_Urls", found: FileDiff, title: str, intro: str = "") -> str:
        parts = [f"<h1>{_e(title)}</h1>", intro]
        parts.append(
            f"<p>Pages: {_e(found.before_pages)} before, {_e(found.after_pages)} after; "
            f"{found.pages_compared} compared.</p>"
        )
        parts.append("<h2>Changed text</h2>")
        if not found.text.hunks:
            parts.append("<p>No text changed.</p>")
        for hunk in found.text.hunks:
            parts.append(
                '<div class="hunk"><div class="at">'
                f"paragraphs {hunk.before_start}-{hunk.before_start + hunk.before_count - 1} "
                f"before, {hunk.after_start}-{hunk.after_start + hunk.after_count - 1} after"
                "</div>"
            )
            parts += [f'<div class="{line.op}">{_e(line.text)}</div>' for line in hunk.lines]
            parts.append("</div>")
        if found.text.truncated:
            parts.append('<p class="notice info">The text diff was cut at its size cap.</p>')
        parts.append("<h2>Comments and tracked changes</h2>")
        review = found.review
        items = [
            *(f"<li>added {_e(item.kind)}: {_e(item.text)}</li>" for item in review.added),
            *(f"<li>removed {_e(item.kind)}: {_e(item.text)}</li>" for item in review.removed),
            *(
                f"<li>changed {_e(c.after.kind)}: {_e(c.before.text)} → {_e(c.after.text)}</li>"
                for c in review.changed
            ),
        ]
        parts.append(f"<ul>{''.join(items)}</ul>" if items else "<p>None changed.</p>")
        parts.append("<h2>Pages that differ</h2>")
        if not found.pages:
            parts.append("<p>No page looks different.</p>")
        after_label = (
            "proposed" if found.after_version is None else f"version {found.after_version}"
        )
        for changed in found.pages:
            before = (
                _figure(
                    link.page(found.artifact_id, found.before_version, changed.page),
                    f"page {changed.page}, version {found.before_version}",
                )
                if changed.before
                else '<div class="missing">no such page</div>'
            )
            after_src = (
                link.proposal_page(found.artifact_id, found.proposal_id or "", changed.page)
                if found.after_version is None
                else link.page(found.artifact_id, found.after_version, changed.page)
            )
            after = (
                _figure(after_src, f"page {changed.page}, {after_label}")
                if changed.after
                else '<div class="missing">no such page</div>'
            )
            parts.append(f'<div class="side">{before}{after}</div>')
        return "".join(parts)

    @router.get("/workspaces/{workspace_id}/files/{artifact_id}", name="portal_file")
    async def one_file(request: Request, workspace_id: str, artifact_id: str) -> Response:
        ws = await open_as(request, workspace_id)
        if isinstance(ws, HTMLResponse):
            return ws
        return await file_page(request, ws, artifact_id)

    @router.get("/workspaces/{workspace_id}/files/{artifact_id}/diff", name="portal_diff")
    async def diff_page(
        request: Request,
        workspace_id: str,
        artifact_id: str,
        before: Annotated[int, Query(alias="from")],
        after: Annotated[int, Query(alias="to")],
    ) -> Response:
        ws = await open_as(request, workspace_id)
        if isinstance(ws, HTMLResponse):
            return ws
        link = urls(request, ws)
        try:
            _, manifest = await files.manifest(ws, artifact_id)
            found = await revision_diff(files, ws, artifact_id, before, after, limits=limits)
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        title = f"{manifest.name}: version {before} to {after}"
        back = f'<p><a href="{_e(link.file(artifact_id))}">← {_e(manifest.name)}</a></p>'
        return page(request, title, back + diff_body(link, found, title), ws.actor)

    @router.get(
        "/workspaces/{workspace_id}/files/{artifact_id}/proposals/{proposal_id}",
        name="portal_proposal",
    )
    async def proposal_page(
        request: Request, workspace_id: str, artifact_id: str, proposal_id: str
    ) -> Response:
        ws = await open_as(request, workspace_id)
        if isinstance(ws, HTMLResponse):
            return ws
        link = urls(request, ws)
        try:
            _, manifest = await files.manifest(ws, artifact_id)
            found = await proposal_diff(files, ws, artifact_id, proposal_id, limits=limits)
            proposal = await ws.proposal(proposal_id)
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        responder = await may(ws, RESPOND, artifact_id)
        title = f"{manifest.name}: proposed on version {found.before_version}"
        back = f'<p><a href="{_e(link.file(artifact_id))}">← {_e(manifest.name)}</a></p>'
        intro = (
            f"<p>Proposed by {_e(proposal.proposed_by.display_name)}: {_e(_why(proposal))}</p>"
            f'<div class="actions">{_decide(link, artifact_id, proposal, ws.actor, responder)}'
            "</div>"
        )
        return page(request, title, back + diff_body(link, found, title, intro), ws.actor)

    # ─── actions ──────────────────────────────────────────────────────────────

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/check-out")
    async def check_out(request: Request, workspace_id: str, artifact_id: str) -> Response:
        async def checked_out(ws: Workspace) -> tuple[str, str]:
            record = await files.check_out(ws, artifact_id)
            download = urls(request, ws).download(artifact_id, record.base_version)
            notice = _notice(
                "applied",
                f"Checked out version {record.base_version} until {rfc3339(record.expires_at)}. "
                "Your download starts by itself; edit the file, then check it in below.",
                link=(download, "Download it again"),
            )
            return notice, download

        return await acting(request, workspace_id, artifact_id, checked_out)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/extend")
    async def extend(
        request: Request, workspace_id: str, artifact_id: str, checkout_id: str
    ) -> Response:
        async def extended(ws: Workspace) -> tuple[str, str]:
            record = await files.extend(ws, checkout_id)
            return _notice("applied", f"Extended: yours until {rfc3339(record.expires_at)}."), ""

        return await acting(request, workspace_id, artifact_id, extended)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/discard")
    async def discard(
        request: Request, workspace_id: str, artifact_id: str, checkout_id: str
    ) -> Response:
        async def discarded(ws: Workspace) -> tuple[str, str]:
            await files.discard(ws, checkout_id)
            free = await files.lease(ws, artifact_id) is None
            said = "and the file is free." if free else "and someone else has it checked out."
            return _notice("applied", f"Discarded: nothing was checked in, {said}"), ""

        return await acting(request, workspace_id, artifact_id, discarded)

    @router.post("/workspaces/{workspace_id}/files/{artifact_id}/checkouts/{checkout_id}/check-in")
    async def check_in(
        request: Request, workspace_id: str, artifact_id: str, checkout_id: str
    ) -> Response:
        ws = await open_as(request, workspace_id)
        if isinstance(ws, HTMLResponse):
            return ws
        link = urls(request, ws)
        try:
            # Streamed as the files router streams it: the summary field comes before the file.
            body = await read_body(request, fields={"summary": SUMMARY})
            summary = body.fields.get("summary") or None
            outcome = await files.check_in(ws, checkout_id, body.chunks, summary=summary)
        except (Rejection, AppFailure) as problem:
            return await file_page(request, ws, artifact_id, _notice("refused", _said(problem)))
        notice = _checked_in(link, outcome)
        if outcome.status != "applied":
            return await file_page(request, ws, artifact_id, notice)
        try:
            found = await revision_diff(
                files, ws, artifact_id, outcome.version - 1, outcome.version, limits=limits
            )
        except (Rejection, AppFailure) as problem:
            return refused(request, ws.actor, problem)
        title = f"Version {outcome.version - 1} to {outcome.version}"
        back = f'<p><a href="{_e(link.file(artifact_id))}">← back to the file</a></p>'
        body = notice + back + diff_body(link, found, title)
        return page(request, title, body, ws.actor, back=link.file(artifact_id))

    @router.post(
        "/workspaces/{workspace_id}/files/{artifact_id}/proposals/{proposal_id}/{decision}"
    )
    async def decide(
        request: Request,
        workspace_id: str,
        artifact_id: str,
        proposal_id: str,
        decision: Literal["accept", "reject"],
    ) -> Response:
        async def decided(ws: Workspace) -> tuple[str, str]:
            await files.proposed(ws, artifact_id, proposal_id)
            outcome = await ws.commit(RespondToProposal(proposal_id=proposal_id, decision=decision))
            words = (
                f"Accepted: the file is now version {outcome.model_dump().get('version')}."
                if decision == "accept"
                else "Rejected: the file is as it was."
            )
            return _notice("applied", words), ""

        return await acting(request, workspace_id, artifact_id, decided)

    return router


# ─── helpers ──────────────────────────────────────────────────────────────────


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


def _check_in_form(base: str) -> str:
    """Return the form that checks a file in to the check-out at ``base``."""
    return (
        f'<form method="post" action="{_e(base)}/check-in" enctype="multipart/form-data">'
        f'<label>Summary <input type="text" name="summary" maxlength="{SUMMARY}"></label> '
        '<label>Your edited file <input type="file" name="file" required></label> '
        '<button type="submit">Check in</button></form>'
    )


def _checkout_of(holder: str) -> str:
    return holder.split(":", 2)[1]


def _button(action: str, label: str, *, quiet: bool = False) -> str:
    style = ' class="quiet"' if quiet else ""
    return f'<form method="post" action="{_e(action)}"><button{style}>{_e(label)}</button></form>'


def _notice(kind: str, message: str, *, link: tuple[str, str] | None = None) -> str:
    more = "" if link is None else f' <a href="{_e(link[0])}">{_e(link[1])}</a>'
    return f'<p class="notice {kind}" role="status">{_e(message)}{more}</p>'


def _figure(src: str, caption: str) -> str:
    return (
        f'<figure><img src="{_e(src)}" alt="{_e(caption)}" width="298">'
        f"<figcaption>{_e(caption)}</figcaption></figure>"
    )


def _decide(
    link: _Urls, artifact_id: str, proposal: Proposal, actor: Actor, responder: bool
) -> str:
    if not responder:
        return '<span class="muted">you may not decide</span>'
    if proposal.proposed_by.participant == actor.participant:
        return '<span class="muted">yours: someone else decides</span>'
    base = f"{link.proposal(artifact_id, proposal.id)}"
    return _button(f"{base}/accept", "Accept") + _button(f"{base}/reject", "Reject", quiet=True)


def _checked_in(link: _Urls, outcome: CheckedIn) -> str:
    if outcome.status == "applied":
        return _notice("applied", f"Applied: your check-in is version {outcome.version}.")
    if outcome.status == "unchanged":
        return _notice(
            "info",
            f"Unchanged: the file you uploaded is version {outcome.version} as it is, so "
            "nothing new was made, and the file is free.",
        )
    return _notice(
        "proposed",
        f"Kept as a proposal: the file moved on to version {outcome.version} since you "
        "checked it out, so your check-in waits for someone to accept it.",
        link=(link.proposal(outcome.artifact_id, outcome.proposal_id or ""), "See what it changes"),
    )


def _said(problem: Rejection | AppFailure) -> str:
    if isinstance(problem, FormRefused) and problem.problem == "no_file":
        return "Choose the edited file to check in."
    return str(problem) if isinstance(problem, Rejection) else problem.reason
