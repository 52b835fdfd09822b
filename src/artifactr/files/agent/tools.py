"""Native file tools: the agent's tools for native files, behind the app's switch (ADR-0006).

:func:`native_file_tools` is a pydantic-ai toolset over the run's
:class:`~artifactr.agent.Session`, beside the :class:`~artifactr.agent.ArtifactWorkspace`
capability: ``list_files``, ``read_native``, ``read_review``, ``find_commands``,
``edit_native`` and, with ``view=True``, ``view_page``::

    agent = Agent(
        model,
        deps_type=Session[Deps],
        capabilities=[ArtifactWorkspace(types=[WordDocument])],
        toolsets=[native_file_tools(files, view=True)],
    )

Each tool acts as ``ctx.deps.workspace`` through :class:`NativeFiles`, and adds the file it
reads or edits to the thread's focus. The toolset is offered only while the app is on in the
run's workspace. Wrong arguments are one ``ModelRetry`` naming each; a person's check-out is an
answer, not a retry; a rejection reaches the model as the capability gives it, within
:data:`MAX_RETRIES`; the app's timeout, crash or size limit fails the call with ``ToolFailed``,
not the run. The work and the words are :mod:`artifactr.files.agent.operations` and
:mod:`artifactr.files.agent.wording`, shared with the MCP tools.
"""

import contextlib
from collections.abc import Awaitable, Callable, Generator
from contextlib import contextmanager
from typing import Any, Final

from artifactr.agent import Session, describe_outcome
from artifactr.core import Forbidden, SetFocus
from pydantic_ai import (
    BinaryContent,
    FunctionToolset,
    ModelRetry,
    RunContext,
    ToolDefinition,
    ToolFailed,
)
from pydantic_ai.toolsets import AbstractToolset

from artifactr.files.agent import operations, wording
from artifactr.files.agent.operations import CallFailed, WrongArguments
from artifactr.files.agent.wording import MAX_COMMANDS, READ_CHARS, REVIEW_ITEMS
from artifactr.files.core.app_port import AppCommand
from artifactr.files.native import NativeFiles

__all__ = ["MAX_COMMANDS", "MAX_RETRIES", "READ_CHARS", "REVIEW_ITEMS", "native_file_tools"]

MAX_RETRIES: Final = 4
"""How many refusals in a row each tool takes before the run fails.

One busy file, a stale base and a refused command, met in a row, leave a retry to spare; a
model that keeps sending what is refused fails its run.
"""


def native_file_tools(files: NativeFiles, *, view: bool = False) -> AbstractToolset[Session[Any]]:
    """Return the agent's tools for native files, offered only while the app is on.

    The tools are a ``FunctionToolset`` (``list_files``, ``read_native``, ``read_review``,
    ``find_commands``,
    ``edit_native``, and ``view_page`` with ``view``), each allowed :data:`MAX_RETRIES` retries,
    wrapped by a prepare step that hides them all from a step where the app is off. Their
    descriptions are :mod:`~artifactr.files.agent.wording`'s.

    Args:
        files: The service every tool reads and edits through.
        view: Whether to offer ``view_page``, which shows the model a rendered page: only for
            a model that takes images.
    """
    toolset = FunctionToolset[Session[Any]](
        max_retries=MAX_RETRIES, docstring_format="google", require_parameter_descriptions=True
    )

    @toolset.tool
    @_worded(wording.FILES)
    async def list_files(ctx: RunContext[Session[Any]], start: int = 0) -> str:
        with _surfaced():
            return await operations.list_files(ctx.deps.workspace, files, start)

    @toolset.tool
    @_worded(wording.READ_NATIVE)
    async def read_native(ctx: RunContext[Session[Any]], artifact_id: str, start: int = 0) -> str:
        with _surfaced():
            return await operations.read_native(
                ctx.deps.workspace, files, artifact_id, start, follow=_follower(ctx)
            )

    @toolset.tool
    @_worded(wording.READ_REVIEW)
    async def read_review(ctx: RunContext[Session[Any]], artifact_id: str, start: int = 0) -> str:
        with _surfaced():
            return await operations.read_review(
                ctx.deps.workspace, files, artifact_id, start, follow=_follower(ctx)
            )

    @toolset.tool_plain
    @_worded(wording.FIND_COMMANDS)
    async def find_commands(query: str) -> str:
        with _surfaced():
            return await operations.find_commands(files, query)

    @toolset.tool
    @_worded(wording.EDIT_NATIVE)
    async def edit_native(
        ctx: RunContext[Session[Any]],
        artifact_id: str,
        base_version: int,
        commands: list[AppCommand],
        summary: str,
    ) -> str:
        with _surfaced():
            outcome = await operations.edit_native(
                ctx.deps.workspace,
                files,
                artifact_id,
                base_version=base_version,
                commands=commands,
                summary=summary,
                thread_id=ctx.deps.thread_id,
                follow=_follower(ctx),
            )
        return (
            outcome
            if isinstance(outcome, str)
            else outcome.answer(describe_outcome(outcome.outcome))
        )

    if view:

        @toolset.tool
        @_worded(wording.VIEW_PAGE)
        async def view_page(
            ctx: RunContext[Session[Any]], artifact_id: str, page: int
        ) -> list[str | BinaryContent]:
            with _surfaced():
                shown = await operations.view_page(
                    ctx.deps.workspace, files, artifact_id, page, follow=_follower(ctx)
                )
            return [shown.caption, BinaryContent(data=shown.png, media_type="image/png")]

    async def offered(
        ctx: RunContext[Session[Any]], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        return tool_defs if await files.enabled(ctx.deps.workspace) else []

    return toolset.prepared(offered)


# ─── helpers ──────────────────────────────────────────────────────────────────


def _worded[F: Callable[..., Awaitable[Any]]](words: wording.ToolWording) -> Callable[[F], F]:
    """Give a tool its shared description and parameters, as the docstring pydantic-ai reads."""

    def worded(tool: F) -> F:
        tool.__doc__ = words.docstring()
        return tool

    return worded


@contextmanager
def _surfaced() -> Generator[None]:
    """Turn wrong arguments into a retry and the app's failure into a failed call.

    A rejection goes on as it is: the ``ArtifactWorkspace`` capability turns it into a retry
    with its message, and a stale base's with "read the artifact again".
    """
    try:
        yield
    except WrongArguments as wrong:
        raise ModelRetry(str(wrong)) from wrong
    except CallFailed as failed:
        raise ToolFailed(str(failed)) from failed


def _follower(ctx: RunContext[Session[Any]]) -> operations.Follow:
    """Return how a tool adds a file to the thread's focus, so the agent is told of changes.

    Following is a courtesy, not the read: a run whose person may read the file but not change
    the thread's focus (grantr's ``viewer``) still reads it, unfollowed.
    """

    async def follow(artifact_id: str) -> None:
        ws = ctx.deps.workspace
        thread = await ws.thread(ctx.deps.thread_id)
        if artifact_id not in thread.focus:
            focus = SetFocus(thread_id=thread.id, artifact_ids=(*thread.focus, artifact_id))
            with contextlib.suppress(Forbidden):
                await ws.commit(focus)

    return follow
