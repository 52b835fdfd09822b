"""Native file tools: the agent's tools for native files, behind the app's switch (ADR-0006).

:func:`native_file_tools` is a pydantic-ai toolset over the run's
:class:`~artifactr.agent.Session`, as artifactr's ``artifact_tools`` is. It sits beside the
:class:`~artifactr.agent.ArtifactWorkspace` capability, whose generic tools list and read the
manifest (name, pages, outline), and gives the agent the file itself: its words
(``read_native``), its review (``read_review``), the app's commands (``find_commands``), an edit
by a batch of them (``edit_native``) and, with ``view=True``, a look at a page (``view_page``)::

    agent = Agent(
        model,
        deps_type=Session[Deps],
        capabilities=[ArtifactWorkspace(types=[WordDocument])],
        toolsets=[native_file_tools(files, view=True)],
    )

Each tool acts as ``ctx.deps.workspace``, the run's agent, through :class:`NativeFiles`, so
access, hiding, write policy and the switch are decided there. A tool that reads or edits a file
adds it to the thread's focus, so the agent is told when others change it, a check-in included.

The toolset is offered only while the app is on in the run's workspace: its prepare step asks
:meth:`NativeFiles.enabled` once a step, and a model where the app is off never sees the tools.

How each refusal reaches the model:

- Arguments the model got wrong (not a native file, a bad ``start`` or ``page``, an empty
  batch, a command the app's catalog lacks) are a ``ModelRetry`` naming every wrong argument at
  once, as ADR-0078's tools do, since the capability gives a core refusal back with its message
  alone.
- A person's check-out is an answer, not a retry: ``edit_native`` returns who has the file and
  until when, and tells the agent to plan again once it is checked in, rather than queue a
  proposal that would be stale when it arrives.
- Another agent's edit, which holds the file for seconds, and a lease that ended before it was
  read are :class:`~artifactr.files.core.errors.ArtifactBusy` as it is; a stale base is artifactr's
  ``VersionConflict`` ("read the artifact again"); the app's refusal is
  :class:`~artifactr.files.core.errors.AppRefused`. The capability turns each into a retry with its
  message, which the tools' retry budget (:data:`MAX_RETRIES`) bounds.
- A timeout, a crash or a file too large fails the call, not the run: the tool raises
  pydantic-ai's ``ToolFailed``, which the model sees as a failed result, without retry
  instructions and without spending the budget, and which the capability records as an
  ``error``. Raising the app's failure as it is would fail the whole run, as the capability does
  with any exception that is not a rejection; retrying at once won't help either.

The tools' work and words are :mod:`artifactr.files.agent.operations` and
:mod:`artifactr.files.agent.wording`, which the MCP server's tools (:mod:`artifactr.files.mcp`)
share (ADR-0012): this module only turns their answers and refusals into pydantic-ai's.

Of the library's modules, only this one imports pydantic-ai (the demo and ``serve`` aside).
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

    The tools are a ``FunctionToolset`` (``read_native``, ``read_review``, ``find_commands``,
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
        return outcome if isinstance(outcome, str) else describe_outcome(outcome)

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
