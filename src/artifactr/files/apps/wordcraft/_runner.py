"""WordCraft's job runner: one stateless call to ``wordcraft-cli mcp`` over stdio (RFC-0003).

:func:`run_job`, shared by :class:`~artifactr.files.apps.wordcraft.Subprocess` and the worker
service, runs one App call in a process of its own:

1. It refuses first, before any process starts: a file over the size limit or refused by the zip
   screen (unless the caller screened it already), a command that could reach the file system
   (``file.*``, ``insert.picture``, exports, a parameter naming a path), an author that reads
   as a flag.
2. The process starts in a fresh, empty directory, in a process group of its own.
3. The MCP SDK's client opens the file from bytes, runs the batch (stopping at the first error),
   saves inside the directory, opens the saved file again and reads it, so an edit's inspection
   is of the file as saved.
4. Whatever happened, the process group is killed, every process of it is waited for until it
   is gone (one that outlives the kill is a crash), and the directory is wiped.

Each failure is typed: ``refused``, ``timeout``, ``crashed`` or ``too_large``.
"""

import base64
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Final, Literal, overload

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import get_default_environment
from mcp.types import CallToolResult, ImageContent, TextContent
from pydantic import Base64Bytes, BaseModel, ConfigDict, JsonValue, TypeAdapter, ValidationError

from artifactr.files.apps.jobs import (
    DEFAULT_LIMITS,
    ApplyJob,
    CommandsJob,
    InspectJob,
    Limits,
    RenderJob,
)
from artifactr.files.apps.wordcraft._process import Script, converse
from artifactr.files.core.app_port import (
    EDIT_DEADLINE,
    About,
    AppCommand,
    CommandSpec,
    Edited,
    Inspection,
    ReviewItem,
    Source,
)
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTimeout, AppTooLarge, UnsafeFile
from artifactr.files.core.fingerprint import fingerprint

SOURCE: Final = "in.docx"
"""The name the file is opened under; WordCraft reads its format from it, and nothing from disk."""

SAVED: Final = "out.docx"
"""The name the app saves to, inside the job's directory."""

_PATH_WORDS: Final = frozenset(
    {"path", "paths", "file", "files", "filename", "src", "href", "dir", "directory", "folder"}
)
"""A parameter whose name has one of these words (``path``, ``imagePath``, ``src_dir``) names a
path, if its value is text."""

_WORD: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+")
"""A word of a parameter's name, in camelCase, snake_case or kebab-case."""

_PATH_VALUE: Final = re.compile(r"^(?:/|\\\\|[a-z]:[/\\])|(?:^|[/\\])\.\.(?:[/\\]|$)", re.I)
"""Text that looks like an absolute path (POSIX, UNC or a drive's) or climbs with ``..``."""

_CHANGE_KINDS: Final[Mapping[str, Literal["insert", "delete"]]] = {
    "insert": "insert",
    "delete": "delete",
}
"""WordCraft's kinds of tracked change that the port names; any other is kept unnamed."""

_HEADING: Final = re.compile(r"^(?:heading ?([1-9])|title)$", re.I)
"""A paragraph style that belongs in the outline, with its level (a title is level 1)."""


# ─── the job ──────────────────────────────────────────────────────────────────


@overload
async def run_job(
    command: Sequence[str],
    job: ApplyJob,
    source: Source,
    *,
    deadline: float = ...,
    env: Mapping[str, str] | None = ...,
    limits: Limits = ...,
    build: str | None = ...,
    screened: str | None = ...,
) -> Edited: ...
@overload
async def run_job(
    command: Sequence[str],
    job: InspectJob,
    source: Source,
    *,
    deadline: float = ...,
    env: Mapping[str, str] | None = ...,
    limits: Limits = ...,
    build: str | None = ...,
    screened: str | None = ...,
) -> Inspection: ...
@overload
async def run_job(
    command: Sequence[str],
    job: RenderJob,
    source: Source,
    *,
    deadline: float = ...,
    env: Mapping[str, str] | None = ...,
    limits: Limits = ...,
    build: str | None = ...,
    screened: str | None = ...,
) -> bytes: ...
@overload
async def run_job(
    command: Sequence[str],
    job: CommandsJob,
    source: Source = ...,
    *,
    deadline: float = ...,
    env: Mapping[str, str] | None = ...,
    limits: Limits = ...,
    build: str | None = ...,
    screened: str | None = ...,
) -> tuple[CommandSpec, ...]: ...
async def run_job(
    command: Sequence[str],
    job: ApplyJob | InspectJob | RenderJob | CommandsJob,
    source: Source = b"",
    *,
    deadline: float = EDIT_DEADLINE,
    env: Mapping[str, str] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    build: str | None = None,
    screened: str | None = None,
) -> Edited | Inspection | bytes | tuple[CommandSpec, ...]:
    """Return what one job gives, run by a fresh ``<command> mcp`` in an empty directory.

    Args:
        command: The program and its first arguments (``["wordcraft-cli"]``); ``mcp`` and
            ``--author`` follow them.
        job: What to do.
        source: The file: its bytes, or a binary file read from its start (ignored when listing
            commands).
        deadline: Seconds the whole job may take, start-up included.
        env: Variables set for the app, over a minimal environment (``PATH``, ``HOME``...).
        limits: What the job may read and write.
        build: The app's build, recorded in :class:`~artifactr.files.core.app_port.About`.
        screened: The file's fingerprint, if the caller has screened it already (the worker
            does, with its own limits): it is not read to be screened again.

    Returns:
        The saved file and its inspection (:class:`ApplyJob`), the inspection
        (:class:`InspectJob`), a PNG (:class:`RenderJob`) or the catalog (:class:`CommandsJob`).

    Raises:
        UnsafeFile: If the file is not a .docx package, or a hostile one (a zip bomb).
        AppRefused: If a command is refused before the app starts, or by the app, with its reason.
        AppTimeout: If the deadline passes; the process group is killed at once.
        AppCrashed: If the app can't start, dies, or answers something unreadable.
        AppTooLarge: If the file, the saved file or the app's output is over its limit.
    """
    # Reading and screening a large file take a while: off the event loop, which goes on
    # serving (the worker's health checks, the application's other requests).
    if not isinstance(source, bytes):
        source = await anyio.to_thread.run_sync(_read_all, source, limits.max_file)
    author, screened = await anyio.to_thread.run_sync(_screen, job, source, limits, screened)
    argv = [*command, "mcp", *(("--author", author) if author else ())]
    environment = get_default_environment() | dict(env or {})
    with tempfile.TemporaryDirectory(prefix="wordcraft-") as directory:
        workdir = Path(directory)
        with anyio.move_on_after(deadline):
            return await converse(
                argv,
                workdir,
                environment,
                limits,
                _script(job, source, screened, workdir, limits, build),
            )
    raise AppTimeout(f"wordcraft took longer than its deadline of {deadline:g} s and was stopped")


def _read_all(source: IO[bytes], limit: int) -> bytes:
    source.seek(0)
    return source.read(limit + 1)


def _screen(
    job: ApplyJob | InspectJob | RenderJob | CommandsJob,
    source: bytes,
    limits: Limits,
    screened: str | None,
) -> tuple[str, str]:
    """Return the author and the source's fingerprint, or refuse the job before the app starts."""
    if len(source) > limits.max_file:
        raise AppTooLarge(f"the file has {len(source)} bytes, over the limit of {limits.max_file}")
    if isinstance(job, CommandsJob):
        screened = ""
    elif screened is None:
        # Screening reads the zip within limits: a hostile file never reaches the app.
        screened = fingerprint(source)
    for step in job.commands if isinstance(job, ApplyJob) else ():
        _confine(step)
    author = (job.author or "").strip()
    if author.startswith("--"):
        raise AppRefused(f"an author's name can't start with '--', as {author!r} does")
    return author, screened


def _confine(step: AppCommand) -> None:
    """Refuse a command that could reach the file system: WordCraft confines no path itself."""
    name = step.command.lower()
    if name.startswith(("file.", "insert.picture")) or "export" in name:
        raise AppRefused(f"`{step.command}` reaches the file system, which edits may not do")
    for key, value in step.params.items():
        _confine_value(step.command, key, value)


def _confine_value(command: str, key: str, value: JsonValue) -> None:
    if isinstance(value, str):
        words = {word.lower() for word in _WORD.findall(key)}
        if words & _PATH_WORDS or _PATH_VALUE.search(value):
            raise AppRefused(f"`{command}` names a path in `{key}`, which edits may not do")
    elif isinstance(value, dict):
        for inner, item in value.items():
            _confine_value(command, inner, item)
    elif isinstance(value, list):
        for item in value:
            _confine_value(command, key, item)


# ─── the conversation ─────────────────────────────────────────────────────────


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Text(_Reply):
    text: str = ""


class _Block(_Reply):
    type: str = "paragraph"
    style: str | None = None
    text: str = ""


class _Document(_Reply):
    blocks: list[_Block] = []


class _Comment(_Reply):
    id: int | str
    author: str | None = None
    date: str | None = None
    text: str = ""


class _Pos(_Reply):
    path: list[int] = []
    off: int = 0


class _Change(_Reply):
    kind: str
    start: _Pos
    text: str = ""
    author: str | None = None
    date: str | None = None


class _Info(_Reply):
    pages: int | None = None


class _Entry(_Reply):
    id: str
    label: str = ""
    params: str | None = None
    mutates: bool = True


class _Step(_Reply):
    command: str = ""
    error: str | None = None


class _Picture(_Reply):
    data: Base64Bytes


_TEXT = TypeAdapter(_Text)
_DOCUMENT = TypeAdapter(_Document)
_COMMENTS = TypeAdapter(list[_Comment])
_CHANGES = TypeAdapter(list[_Change])
_INFO = TypeAdapter(_Info)
_CATALOG = TypeAdapter(list[_Entry])
_STEPS = TypeAdapter(list[_Step])
_PICTURES = TypeAdapter(tuple[_Picture])


def _script(
    job: ApplyJob | InspectJob | RenderJob | CommandsJob,
    source: bytes,
    screened: str,
    workdir: Path,
    limits: Limits,
    build: str | None,
) -> Script[Edited | Inspection | bytes | tuple[CommandSpec, ...]]:
    async def script(
        session: ClientSession,
    ) -> Edited | Inspection | bytes | tuple[CommandSpec, ...]:
        hello = await session.initialize()
        about = About(
            app=hello.server_info.name, version=hello.server_info.version or None, build=build
        )
        if isinstance(job, CommandsJob):
            entries = _decode(await _call(session, "list_commands", {"query": job.query}), _CATALOG)
            return tuple(
                CommandSpec(
                    id=entry.id, label=entry.label, params=entry.params or "", mutates=entry.mutates
                )
                for entry in entries
            )
        await _open(session, source)
        if isinstance(job, RenderJob):
            reply = await _call(session, "render_page", {"page": job.page, "scale": job.scale})
            images = [item.model_dump() for item in reply.content if isinstance(item, ImageContent)]
            return _PICTURES.validate_python(images)[0].data
        if isinstance(job, InspectJob):
            return await _inspect(session, screened, about)
        batch: list[JsonValue] = [
            {"command": step.command, "params": dict(step.params)} for step in job.commands
        ]
        await _call(session, "batch", {"commands": batch})
        await _call(session, "save_document", {"path": SAVED})
        content = _read_back(workdir / SAVED, limits.max_file)
        saved = await anyio.to_thread.run_sync(_fingerprint, content)
        await _open(session, content)
        return Edited(content=content, inspection=await _inspect(session, saved, about))

    return script


async def _call(
    session: ClientSession, tool: str, arguments: dict[str, JsonValue]
) -> CallToolResult:
    reply = await session.call_tool(tool, arguments)
    if reply.is_error:
        raise AppRefused(_reason(_text(reply)))
    return reply


async def _execute(session: ClientSession, command: str) -> CallToolResult:
    return await _call(session, "execute", {"command": command, "params": {}})


async def _open(session: ClientSession, content: bytes) -> None:
    data = base64.b64encode(content).decode()
    await _call(
        session, "execute", {"command": "file.open", "params": {"path": SOURCE, "data": data}}
    )


def _text(reply: CallToolResult) -> str:
    return "".join(item.text for item in reply.content if isinstance(item, TextContent))


def _decode[T](reply: CallToolResult, shape: TypeAdapter[T]) -> T:
    return shape.validate_json(_text(reply))


def _reason(text: str) -> str:
    """Return the app's reason: a failed batch answers with its steps, the last one failed."""
    try:
        steps = _STEPS.validate_json(text)
    except ValidationError:
        return text
    errors = [f"{step.command}: {step.error}" for step in steps if step.error is not None]
    return (errors or [text])[-1]


def _read_back(path: Path, limit: int) -> bytes:
    try:
        with path.open("rb") as saved:
            content = saved.read(limit + 1)
    except OSError as error:
        raise AppCrashed(
            f"wordcraft said it saved the file, but it can't be read: {error}"
        ) from error
    if len(content) > limit:
        raise AppTooLarge(f"wordcraft saved a file over the limit of {limit} bytes")
    return content


async def _inspect(session: ClientSession, fingerprinted: str, about: About) -> Inspection:
    text = _decode(await _call(session, "get_text", {}), _TEXT).text
    document = _decode(await _call(session, "inspect_document", {}), _DOCUMENT)
    comments = _decode(await _execute(session, "review.comments"), _COMMENTS)
    changes = _decode(await _execute(session, "review.changes"), _CHANGES)
    info = _decode(await _execute(session, "file.info"), _INFO)
    review = (
        *(_comment(comment) for comment in comments),
        *(_change(change) for change in changes),
    )
    return Inspection(
        outline=_outline(document.blocks),
        text=text,
        review=review,
        pages=info.pages,
        fingerprint=fingerprinted,
        about=about,
    )


def _outline(blocks: Sequence[_Block]) -> str:
    lines: list[str] = []
    for block in blocks:
        heading = _HEADING.match(block.style or "")
        if heading and block.text.strip():
            lines.append("  " * (int(heading.group(1) or 1) - 1) + block.text.strip())
    return "\n".join(lines)


def _comment(comment: _Comment) -> ReviewItem:
    return ReviewItem(
        kind="comment",
        id=str(comment.id),
        author=comment.author,
        date=comment.date,
        text=comment.text,
    )


def _change(change: _Change) -> ReviewItem:
    # WordCraft gives a tracked change no id: it is named by where it starts in the body.
    where = ".".join(str(step) for step in change.start.path)
    return ReviewItem(
        kind="change",
        id=f"{change.kind}@{where}:{change.start.off}",
        author=change.author,
        date=change.date,
        text=change.text,
        change=_CHANGE_KINDS.get(change.kind),
    )


def _fingerprint(content: bytes) -> str:
    try:
        return fingerprint(content)
    except UnsafeFile as error:
        raise AppCrashed(
            f"wordcraft saved something that is not a .docx package: {error}"
        ) from error
