"""Diffs over HTTP: what changed between two revisions, or in a pending proposal (ADR-0011).

:func:`add_diff_routes` adds three routes to the files router: a revision's diff
(``/{artifact_id}/diff?from=&to=``), a pending proposal's against its base
(``/{artifact_id}/proposals/{proposal_id}/diff``), and the pages of the file a proposal would
make, which a proposal's diff links as the revisions' diffs link the router's own page route.
Each answers :func:`~artifactr.files.native.diff.revision_diff` or
:func:`~artifactr.files.native.diff.proposal_diff` as the caller, with each differing page's two
render URLs at :data:`~artifactr.files.native.diff.DIFF_SCALE`.
"""

from typing import Annotated, Any
from urllib.parse import quote

from artifactr.workspace import Workspace
from fastapi import APIRouter, Path, Query, Request, Response
from pydantic import BaseModel, ConfigDict

from artifactr.files.fastapi.http_answers import (
    ID_PATTERN,
    MAX_INT,
    ArtifactPath,
    PagePath,
    ScaleQuery,
    cached_png,
    or_http,
    png_responses,
    refusals,
)
from artifactr.files.native import NativeFiles
from artifactr.files.native.diff import (
    DIFF_SCALE,
    FileDiff,
    ReviewDiff,
    TextDiff,
    proposal_diff,
    revision_diff,
)
from artifactr.files.native.regions import Region

ProposalPath = Annotated[str, Path(min_length=1, max_length=255, pattern=ID_PATTERN)]
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
    region: Region | None = None
    """Where the two renders differ, in their pixels, if it was measured."""


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


def add_diff_routes(router: APIRouter, files: NativeFiles, current: Any) -> None:
    """Add the diff routes to the files router, under its prefix.

    Args:
        router: The files router.
        files: The service.
        current: The dependency that opens the request's workspace as its actor.
    """

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
                    request,
                    ws,
                    found.artifact_id,
                    found.before_version,
                    changed.before_page or changed.page,
                )
                if changed.before
                else None,
                after_url=after(changed.page) if changed.after else None,
                region=changed.region,
            )
            for changed in found.pages
        ]
        return Diff(
            **found.model_dump(exclude={"pages", "text", "review"}),
            text=found.text,
            review=found.review,
            pages=pages,
        )

    @router.get("/{artifact_id}/diff", responses=refusals(404, 413, 422, 502, 504))
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
        found = await or_http(revision_diff(files, ws, artifact_id, before, after))
        return answer(request, ws, found)

    @router.get(
        "/{artifact_id}/proposals/{proposal_id}/diff", responses=refusals(404, 413, 422, 502, 504)
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
        found = await or_http(proposal_diff(files, ws, artifact_id, proposal_id))
        return answer(request, ws, found)

    @router.get(
        "/{artifact_id}/proposals/{proposal_id}/pages/{page}",
        name="proposal_page",
        response_class=Response,
        responses=png_responses(404, 413, 422, 502, 504),
    )
    async def proposal_page(
        request: Request,
        artifact_id: ArtifactPath,
        proposal_id: ProposalPath,
        page: PagePath,
        scale: ScaleQuery = 1.0,
        ws: Workspace = current,
    ) -> Response:
        """Return a page of the file a pending proposal would make, as a PNG, cached."""
        png = await or_http(files.render_proposal(ws, artifact_id, proposal_id, page, scale=scale))
        return cached_png(request, png)
