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
  read are :class:`~artifactr.files.errors.ArtifactBusy` as it is; a stale base is artifactr's
  ``VersionConflict`` ("read the artifact again"); the app's refusal is
  :class:`~artifactr.files.errors.AppRefused`. The capability turns each into a retry with its
  message, which the tools' retry budget (:data:`MAX_RETRIES`) bounds.
- A timeout, a crash or a file too large fails the call, not the run: the tool raises
  pydantic-ai's ``ToolFailed``, which the model sees as a failed result, without retry
  instructions and without spending the budget, and which the capability records as an
  ``error``. Raising the app's failure as it is would fail the whole run, as the capability does
  with any exception that is not a rejection; retrying at once won't help either.

This is the only module of artifactr.files that imports ``artifactr.agent`` and pydantic-ai.
"""

import contextlib
import json
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final

from artifactr.agent import Session, describe_outcome
from artifactr.core import Artifact, Forbidden, NotFound, SetFocus
from artifactr.workspace import Workspace
from pydantic_ai import (
    BinaryContent,
    FunctionToolset,
    ModelRetry,
    RunContext,
    ToolDefinition,
    ToolFailed,
)
from pydantic_ai.toolsets import AbstractToolset

from artifactr.files.app import AppCommand
from artifactr.files.errors import AppFailure, AppRefused, ArtifactBusy
from artifactr.files.leases import ArtifactLease, scope_of
from artifactr.files.manifests import NativeFile
from artifactr.files.native import NativeFiles, Unchanged
from artifactr.files.visibility import visible

READ_CHARS: Final = 8_000
"""How many characters of a file's text ``read_native`` gives a call."""

REVIEW_ITEMS: Final = 50
"""How many comments and tracked changes ``read_review`` gives a call."""

MAX_COMMANDS: Final = 10
"""How many of the app's commands ``find_commands`` lists."""

MAX_RETRIES: Final = 4
"""How many refusals in a row each tool takes before the run fails.

One busy file, a stale base and a refused command, met in a row, leave a retry to spare; a
model that keeps sending what is refused fails its run.
"""

_FAILED: Final = {
    "timeout": "it ran out of time",
    "crashed": "it crashed",
    "too_large": "the file is too large for it",
}


@dataclass(frozen=True)
class _Head:
    """A native file's head, as the tools found it."""

    artifact_id: str
    version: int
    data: NativeFile


def native_file_tools(files: NativeFiles, *, view: bool = False) -> AbstractToolset[Session[Any]]:
    """Return the agent's tools for native files, offered only while the app is on.

    The tools are a ``FunctionToolset`` (``read_native``, ``read_review``, ``find_commands``,
    ``edit_native``, and ``view_page`` with ``view``), each allowed :data:`MAX_RETRIES` retries,
    wrapped by a prepare step that hides them all from a step where the app is off.

    Args:
        files: The service every tool reads and edits through.
        view: Whether to offer ``view_page``, which shows the model a rendered page: only for
            a model that takes images.
    """
    toolset = FunctionToolset[Session[Any]](
        max_retries=MAX_RETRIES, docstring_format="google", require_parameter_descriptions=True
    )

    @toolset.tool
    async def read_native(ctx: RunContext[Session[Any]], artifact_id: str, start: int = 0) -> str:
        """Read a native file's text, 8,000 characters a call, as the app reads it.

        The text is the body's words, one line a paragraph, without formatting or pictures.
        The answer names the file's version, the characters it holds, and where to read on.

        Args:
            artifact_id: The native file (a Word document) to read.
            start: The character to read from: 0 at first, then the start each answer gives,
                until it says the text has ended.
        """
        ws = ctx.deps.workspace
        problems: list[str] = []
        head = await _native(ws, files, artifact_id, problems)
        text = "" if head is None else await files.text(ws, artifact_id, head.version)
        _check_start(start, len(text), "characters", known=head is not None, problems=problems)
        if head is None or problems:
            raise _refusal("read_native", problems)
        await _follow(ctx, artifact_id)
        end = min(start + READ_CHARS, len(text))
        onward = (
            f"The text goes on: read on with start={end}."
            if end < len(text)
            else "That is the end of the text."
        )
        return (
            f"{_title(head)}: characters {start} to {end} of {len(text)}.\n\n"
            f"{text[start:end]}\n\n{onward}"
        )

    @toolset.tool
    async def read_review(ctx: RunContext[Session[Any]], artifact_id: str, start: int = 0) -> str:
        """Read a native file's comments and tracked changes, 50 a call, as the app gives them.

        Each line is one item as JSON: `kind` is `comment` or `change`, with the app's
        `id`, `author`, `date` and `text`; a change says whether it is an `insert` or a
        `delete`, and a comment may name the `anchor` text it is on.

        Args:
            artifact_id: The native file (a Word document) whose review to read.
            start: The item to read from: 0 at first, then the start each answer gives.
        """
        ws = ctx.deps.workspace
        problems: list[str] = []
        head = await _native(ws, files, artifact_id, problems)
        items = [] if head is None else await files.review(ws, artifact_id, head.version)
        _check_start(start, len(items), "items", known=head is not None, problems=problems)
        if head is None or problems:
            raise _refusal("read_review", problems)
        await _follow(ctx, artifact_id)
        comments = sum(item.kind == "comment" for item in items)
        end = min(start + REVIEW_ITEMS, len(items))
        listed = "".join(
            json.dumps(item.model_dump(mode="json", exclude_none=True), ensure_ascii=False) + "\n"
            for item in items[start:end]
        )
        onward = (
            f"The review goes on: read on with start={end}."
            if end < len(items)
            else "That is the end of the review."
        )
        return (
            f"{_title(head)}: items {start} to {end} of {len(items)} (comments: {comments}, "
            f"tracked changes: {len(items) - comments}).\n\n{listed}\n{onward}"
        )

    @toolset.tool_plain
    async def find_commands(query: str) -> str:
        """Find the app's commands whose id or description contains a word, ten at most.

        Each is listed with its parameters, which `edit_native` takes as
        `{"command": id, "params": {...}}`.

        Args:
            query: A word to look for, such as `replace`, `comment` or `style`; an empty
                query lists the catalog from its start.
        """
        with _app_failures("list its commands"):
            found = list(await files.app.commands(query))
        if not found:
            return f"No command matches {query!r}: try another word, or an empty query."
        lines = [
            f"- {spec.id} {spec.params or '(no parameters)'}: {spec.label}"
            + ("" if spec.mutates else " (does not change the file)")
            for spec in found[:MAX_COMMANDS]
        ]
        more = len(found) - MAX_COMMANDS
        rest = f"\n{more} more match: narrow the query to see them." if more > 0 else ""
        return f"Commands matching {query!r}: {len(found)}.\n" + "\n".join(lines) + rest

    @toolset.tool
    async def edit_native(
        ctx: RunContext[Session[Any]],
        artifact_id: str,
        base_version: int,
        commands: list[AppCommand],
        summary: str,
    ) -> str:
        """Edit a native file with one batch of the app's commands, run in order.

        The batch runs as one session of the app, on `base_version`, which must be the
        file's version now. If the app refuses a command, the batch changes nothing. Your edit
        may become a proposal for a person to review. If a person has the file checked out,
        you are told who and until when, and nothing is changed.

        Args:
            artifact_id: The native file (a Word document) to edit.
            base_version: The version you read, which the batch is based on.
            commands: The app's commands, in order, each `{"command": id, "params": {...}}`;
                `find_commands` lists them with their parameters.
            summary: What the change does, in a sentence, shown to people.
        """
        ws = ctx.deps.workspace
        problems: list[str] = []
        head = await _native(ws, files, artifact_id, problems)
        if commands:
            with _app_failures("list its commands"):
                known = {spec.id for spec in await files.app.commands("")}
            problems += [
                f"commands[{number}].command: {command.command!r} is not one of the app's "
                "commands; find_commands lists them"
                for number, command in enumerate(commands)
                if command.command not in known
            ]
        else:
            problems.append("commands: the batch is empty; send at least one command")
        if head is not None and problems and base_version != head.version:
            problems.append(
                f"base_version: {artifact_id} is at version {head.version}, not "
                f"{base_version}; read it again before you edit it"
            )
        if head is None or problems:
            raise _refusal("edit_native", problems)
        await _follow(ctx, artifact_id)
        try:
            with _app_failures(f"edit {artifact_id}"):
                outcome = await files.edit(
                    ws,
                    artifact_id,
                    base_version=base_version,
                    commands=commands,
                    summary=summary.strip() or None,
                    thread_id=ctx.deps.thread_id,
                )
        except ArtifactBusy as busy:
            if busy.lease is None or not busy.lease.holder.startswith("checkout:"):
                raise  # another agent's edit, or none by now: a retry, in seconds
            return await _checked_out(ws, files, busy.lease)
        if isinstance(outcome, Unchanged):
            return (
                f"Unchanged: the batch left {artifact_id} as it was, so no revision was made; "
                f"it is still at version {outcome.version}."
            )
        return describe_outcome(outcome)

    if view:

        @toolset.tool
        async def view_page(
            ctx: RunContext[Session[Any]], artifact_id: str, page: int
        ) -> list[str | BinaryContent]:
            """Look at one page of a native file, laid out and rendered by the app, as an image.

            Args:
                artifact_id: The native file (a Word document) to look at.
                page: The page, from 1; `read_artifact` says how many there are.
            """
            ws = ctx.deps.workspace
            problems: list[str] = []
            head = await _native(ws, files, artifact_id, problems)
            pages = None if head is None else head.data.pages
            if page < 1:
                problems.append(f"page: pages count from 1, not {page}")
            elif pages is not None and page > pages:
                problems.append(f"page: {artifact_id} has pages 1 to {pages}, not {page}")
            if head is None or problems:
                raise _refusal("view_page", problems)
            with _app_failures(f"render page {page} of {artifact_id}"):
                png = await files.render(ws, artifact_id, head.version, page)
            await _follow(ctx, artifact_id)
            of = "" if pages is None else f" of {pages}"
            return [
                f"{_title(head)}: page {page}{of}.",
                BinaryContent(data=png, media_type="image/png"),
            ]

    async def offered(
        ctx: RunContext[Session[Any]], tool_defs: list[ToolDefinition]
    ) -> list[ToolDefinition]:
        return tool_defs if await files.enabled(ctx.deps.workspace) else []

    return toolset.prepared(offered)


# ─── helpers ──────────────────────────────────────────────────────────────────


async def _native(
    ws: Workspace, files: NativeFiles, artifact_id: str, problems: list[str]
) -> _Head | None:
    """Return the native file's head, or None with what is wrong added to ``problems``."""
    try:
        artifact = await visible(ws, Artifact, artifact_id)
    except NotFound:
        problems.append(
            f"artifact_id: there is no artifact {artifact_id!r} here; list_artifacts lists them"
        )
        return None
    data = artifact.data
    if not isinstance(data, NativeFile) or files.key_of(artifact.kind) is None:
        problems.append(
            f"artifact_id: {artifact_id} is a {artifact.kind}, not a native file of "
            f"{files.app.name}'s; read_artifact reads it"
        )
        return None
    return _Head(artifact_id, artifact.version, data)


def _check_start(start: int, total: int, unit: str, *, known: bool, problems: list[str]) -> None:
    if start < 0:
        problems.append(f"start: {start} is before the start; begin at 0")
    elif known and start > total:
        problems.append(f"start: {start} is past the end, as there are {total} {unit}")


def _refusal(tool: str, problems: Sequence[str]) -> ModelRetry:
    listed = "\n".join(f"- {problem}" for problem in problems)
    return ModelRetry(f"{tool} did nothing, as some arguments are wrong:\n{listed}")


def _title(head: _Head) -> str:
    return f"{head.artifact_id} ({head.data.kind}, v{head.version}) {head.data.name!r}"


@contextmanager
def _app_failures(doing: str) -> Generator[None]:
    """Turn the app's timeout, crash or size failure into a failed call; its refusal stays."""
    try:
        yield
    except AppRefused:
        raise
    except AppFailure as failure:
        raise ToolFailed(
            f"The app could not {doing}: {_FAILED[failure.kind]} ({failure.reason}). Trying "
            "again at once won't help: tell the person, or try a smaller change later."
        ) from failure


async def _follow(ctx: RunContext[Session[Any]], artifact_id: str) -> None:
    """Add a file to the thread's focus, so the agent is told when others change it.

    Following is a courtesy, not the read: a run whose person may read the file but not change
    the thread's focus (grantr's ``viewer``) still reads it, unfollowed.
    """
    ws = ctx.deps.workspace
    thread = await ws.thread(ctx.deps.thread_id)
    if artifact_id not in thread.focus:
        focus = SetFocus(thread_id=thread.id, artifact_ids=(*thread.focus, artifact_id))
        with contextlib.suppress(Forbidden):
            await ws.commit(focus)


async def _checked_out(ws: Workspace, files: NativeFiles, lease: ArtifactLease) -> str:
    """Return the answer to an edit of a file a person has checked out."""
    checkout_id, _, participant = lease.holder.removeprefix("checkout:").partition(":")
    record = await files.checkouts.get(scope_of(ws), checkout_id)
    who = participant if record is None else f"{record.actor.display_name} ({participant})"
    until = lease.expires_at.isoformat(timespec="seconds")
    return (
        f"Not edited: {lease.artifact_id} is checked out by {who} until {until}, and nothing "
        "was changed. They are editing it in the app, and their check-in will change it. Don't "
        "retry now, and don't propose this change, which would be stale when they check it in. "
        "Plan again once it is checked in: read it then, and base your edit on that version. "
        "Tell the person what you meant to change."
    )
