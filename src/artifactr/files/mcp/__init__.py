"""Native files over MCP: the native file tools on artifactr's MCP server (ADR-0012).

:func:`add_native_file_tools` adds the six tools of :mod:`artifactr.files.agent.tools`
(``list_files``, ``read_native``, ``read_review``, ``find_commands``, ``edit_native``,
``view_page``) to an :class:`~artifactr.mcp.ArtifactrMcp`::

    server = ArtifactrMcp(workspaces, runner, resolve=resolve_client)
    add_native_file_tools(server, files, workspaces=workspaces, resolve=resolve_client)

Each takes a ``workspace_id`` first and acts as the client's
:class:`~artifactr.core.ExternalAgentActor` there, so access, hiding and write policy are decided
as on every surface, in the toolset's words. Every refusal is a tool error (``isError``): the
switch (asked at each call, since an MCP client may use any workspace), wrong arguments (all
named at once), the app's failure, and any rejection; a person's check-out is an answer instead.
An MCP client has no thread, so the tools follow no file, and a proposal's answer says how to
learn its decision (read the file again: its version moves) and who decides it (not the person
the client acts for). Needs the ``mcp`` extra.
"""

from collections.abc import Generator
from contextlib import contextmanager
from typing import Annotated, Any, Final

from artifactr.agent import describe_outcome
from artifactr.core import Applied, ExternalAgentActor, Rejection
from artifactr.mcp import ArtifactrMcp, ResolveClient
from artifactr.workspace import Workspace, Workspaces
from mcp.server.mcpserver import Context, Image
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from artifactr.files.agent import operations, wording
from artifactr.files.agent.operations import CallFailed, WrongArguments
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.errors import NotEnabled
from artifactr.files.native import NativeFiles

_READS: Final = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
"""What a client is told of the reading tools: they change nothing."""

_EDITS: Final = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
"""What a client is told of ``edit_native``: it adds a revision or a proposal, and loses none."""

_Context = Context[Any, Any]
"""The SDK's context of one call, which it finds by its class: not a ``type`` alias."""


async def _nothing(artifact_id: str) -> None:
    """Follow nothing: an MCP client has no thread whose focus a file could join."""


def add_native_file_tools(
    server: ArtifactrMcp,
    files: NativeFiles,
    *,
    workspaces: Workspaces,
    resolve: ResolveClient,
    view: bool = True,
) -> None:
    """Add the native file tools to an MCP server, refused wherever the app is off.

    Call it once, beside the server's construction, with the ``workspaces`` and ``resolve`` the
    server was given: each call resolves its client and opens the workspace it names as that
    client, as the server's own tools do.

    Args:
        server: The MCP server to add ``read_native``, ``read_review``, ``find_commands``,
            ``edit_native`` and ``view_page`` to.
        files: The service every tool reads and edits through.
        workspaces: Opens the workspace a call names, as the client.
        resolve: Authenticates each call: the client's tenant and actor.
        view: Whether to add ``view_page``, whose answer is an image.
    """

    async def client(ctx: _Context, workspace_id: str) -> tuple[Workspace, ExternalAgentActor]:
        """Open the workspace as the call's client, refused while the app is off there."""
        tenant_id, actor = await resolve(ctx)
        ws = await workspaces.open(tenant_id, workspace_id, actor=actor)
        if not await files.enabled(ws):
            raise NotEnabled(files.key)
        return ws, actor

    async def opened(ctx: _Context, workspace_id: str) -> Workspace:
        return (await client(ctx, workspace_id))[0]

    words = wording.FILES

    async def list_files(
        workspace_id: Annotated[str, Field(description=wording.WORKSPACE_ID)],
        ctx: _Context,
        start: Annotated[int, Field(description=words.params["start"])] = 0,
    ) -> str:
        with _answered():
            ws = await opened(ctx, workspace_id)
            return await operations.list_files(ws, files, start)

    _add(server, list_files, words, _READS)
    words = wording.READ_NATIVE

    async def read_native(
        workspace_id: Annotated[str, Field(description=wording.WORKSPACE_ID)],
        artifact_id: Annotated[str, Field(description=words.params["artifact_id"])],
        ctx: _Context,
        start: Annotated[int, Field(description=words.params["start"])] = 0,
    ) -> str:
        with _answered():
            ws = await opened(ctx, workspace_id)
            return await operations.read_native(ws, files, artifact_id, start, follow=_nothing)

    _add(server, read_native, words, _READS)
    words = wording.READ_REVIEW

    async def read_review(
        workspace_id: Annotated[str, Field(description=wording.WORKSPACE_ID)],
        artifact_id: Annotated[str, Field(description=words.params["artifact_id"])],
        ctx: _Context,
        start: Annotated[int, Field(description=words.params["start"])] = 0,
    ) -> str:
        with _answered():
            ws = await opened(ctx, workspace_id)
            return await operations.read_review(ws, files, artifact_id, start, follow=_nothing)

    _add(server, read_review, words, _READS)
    words = wording.FIND_COMMANDS

    async def find_commands(
        workspace_id: Annotated[str, Field(description=wording.WORKSPACE_ID)],
        query: Annotated[str, Field(description=words.params["query"])],
        ctx: _Context,
    ) -> str:
        with _answered():
            await opened(ctx, workspace_id)
            return await operations.find_commands(files, query)

    _add(server, find_commands, words, _READS)
    words = wording.EDIT_NATIVE

    async def edit_native(
        workspace_id: Annotated[str, Field(description=wording.WORKSPACE_ID)],
        artifact_id: Annotated[str, Field(description=words.params["artifact_id"])],
        base_version: Annotated[int, Field(description=words.params["base_version"])],
        commands: Annotated[list[AppCommand], Field(description=words.params["commands"])],
        summary: Annotated[str, Field(description=words.params["summary"])],
        ctx: _Context,
    ) -> str:
        with _answered():
            ws, actor = await client(ctx, workspace_id)
            outcome = await operations.edit_native(
                ws,
                files,
                artifact_id,
                base_version=base_version,
                commands=commands,
                summary=summary,
                thread_id=None,
                follow=_nothing,
            )
        if isinstance(outcome, str):
            return outcome
        done = outcome.outcome
        if isinstance(done, Applied):
            return outcome.answer(describe_outcome(done))
        person = actor.on_behalf_of
        acts_for = None if person is None else person.display_name
        return outcome.answer(
            wording.proposed_over_mcp(done.proposal_id, artifact_id, base_version, acts_for)
        )

    _add(server, edit_native, words, _EDITS)
    if not view:
        return
    words = wording.VIEW_PAGE

    async def view_page(
        workspace_id: Annotated[str, Field(description=wording.WORKSPACE_ID)],
        artifact_id: Annotated[str, Field(description=words.params["artifact_id"])],
        page: Annotated[int, Field(description=words.params["page"])],
        ctx: _Context,
    ) -> list[str | Image]:
        with _answered():
            ws = await opened(ctx, workspace_id)
            shown = await operations.view_page(ws, files, artifact_id, page, follow=_nothing)
        return [shown.caption, Image(data=shown.png, format="png")]

    _add(server, view_page, words, _READS)


def _add(
    server: ArtifactrMcp, tool: Any, words: wording.ToolWording, hints: ToolAnnotations
) -> None:
    server.server.add_tool(tool, name=words.name, description=words.description, annotations=hints)


@contextmanager
def _answered() -> Generator[None]:
    """Turn every refusal and failure into a tool error, in the toolset's words."""
    try:
        yield
    except (WrongArguments, CallFailed) as refused:
        raise ToolError(str(refused)) from refused
    except Rejection as rejection:
        raise ToolError(wording.refusal(rejection)) from rejection
