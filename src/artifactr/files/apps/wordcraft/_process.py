"""WordCraft's process: ``wordcraft-cli mcp`` in a group of its own, over capped pipes (RFC-0003).

A job's process starts in a fresh, empty directory, in a process group of its own, killed whole
with SIGKILL when the job ends (POSIX only); the job ends only once every process of the group
is gone, and one still alive after the kill's grace is a crash (``apps/processes.py``). The
pipes are this module's, not the SDK's ``stdio_client``, so what is read is capped and a
deadline kills at once; the SDK's models still parse every message. Every failure is typed
(``crashed``, ``too_large``, or the app's own).
"""

from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Final

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp.types import CONNECTION_CLOSED, Implementation, jsonrpc_message_adapter
from pydantic import ValidationError

from artifactr.files.apps import processes
from artifactr.files.apps.jobs import Limits
from artifactr.files.core.errors import AppCrashed, AppFailure, AppTooLarge

GRACE: Final = 1.0
"""Seconds to wait, once the app has closed its output, for its exit status and last words."""

STDERR_TAIL: Final = 2_000
"""Bytes of the app's stderr kept, from its end, to explain a crash."""

CLIENT: Final = Implementation(name="artifactr.files", version=version("artifactr-files-ai"))
"""Who the adapter says it is in the ``initialize`` handshake."""


type Script[T] = Callable[[ClientSession], Awaitable[T]]
"""What a job says to the app, over an initialized session, and what it makes of the answers."""


@dataclass
class _Failed:
    error: Exception


@dataclass
class _Wire:
    """The app's pipes: stdout split into messages under a cap, stderr's tail kept."""

    limit: int
    read: int = 0
    failure: AppFailure | None = None
    stderr: bytes = b""
    stderr_closed: anyio.Event = field(default_factory=anyio.Event)

    async def replies(
        self, stdout: ByteReceiveStream, sink: MemoryObjectSendStream[SessionMessage | Exception]
    ) -> None:
        line = bytearray()
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            async with sink:
                async for chunk in stdout:
                    self.read += len(chunk)
                    if self.read > self.limit:
                        self.failure = AppTooLarge(f"wordcraft wrote more than {self.limit} bytes")
                        return
                    *complete, rest = chunk.split(b"\n")
                    for piece in complete:
                        line += piece
                        try:
                            message = jsonrpc_message_adapter.validate_json(line, by_name=False)
                        except ValidationError:
                            self.failure = AppCrashed(
                                f"wordcraft wrote a line that isn't JSON-RPC: {bytes(line[:200])!r}"
                            )
                            return
                        await sink.send(SessionMessage(message))
                        line = bytearray()
                    line += rest

    @staticmethod
    async def requests(
        source: MemoryObjectReceiveStream[SessionMessage], stdin: ByteSendStream
    ) -> None:
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            async with source:
                async for message in source:
                    wire = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await stdin.send(wire.encode() + b"\n")

    async def complaints(self, stderr: ByteReceiveStream) -> None:
        with suppress(anyio.ClosedResourceError):
            async for chunk in stderr:
                self.stderr = (self.stderr + chunk)[-STDERR_TAIL:]
        self.stderr_closed.set()


async def converse[T](
    argv: Sequence[str],
    workdir: Path,
    env: Mapping[str, str],
    limits: Limits,
    script: Script[T],
    *,
    grace: float = processes.GRACE,
) -> T:
    """Return what ``script`` makes of a conversation with a fresh ``argv`` in ``workdir``.

    The process is killed with its whole group when the conversation ends, whatever happened,
    and this returns (or raises) only once every process of the group is gone: a child the app
    started never outlives its job. Being cancelled (a deadline) cuts the conversation, never
    that wait, which ``grace`` bounds.

    Raises:
        AppCrashed: If the app can't start, dies, or answers something unreadable; or if a
            process of its group is still alive ``grace`` seconds after the kill.
        AppTooLarge: If the app writes more than ``limits`` allow on stdout.
        AppFailure: Whatever ``script`` raises of its own.
    """
    try:
        process = await anyio.open_process(argv, cwd=workdir, env=env, start_new_session=True)
    except OSError as error:
        raise AppCrashed(f"wordcraft could not start: {error}") from error
    try:
        return await _talk(process, limits, script)
    finally:
        with anyio.CancelScope(shield=True):
            await processes.reap(process.pid, process.aclose, what="wordcraft", grace=grace)


async def _talk[T](process: Process, limits: Limits, script: Script[T]) -> T:
    stdin, stdout, stderr = process.stdin, process.stdout, process.stderr
    assert stdin is not None
    assert stdout is not None
    assert stderr is not None
    wire = _Wire(limits.max_reply)
    replies, reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    writes, requests = anyio.create_memory_object_stream[SessionMessage](0)
    outcome: T | _Failed = _Failed(AppCrashed("wordcraft's session ended without an answer"))
    async with anyio.create_task_group() as pumps:
        pumps.start_soon(wire.replies, stdout, replies)
        pumps.start_soon(wire.requests, requests, stdin)
        pumps.start_soon(wire.complaints, stderr)
        try:
            outcome = await _attempt(ClientSession(reads, writes, client_info=CLIENT), script)
            if isinstance(outcome, _Failed):
                outcome = _Failed(await _typed(outcome.error, wire, process))
        finally:
            pumps.cancel_scope.cancel()
    if isinstance(outcome, _Failed):
        raise outcome.error
    return outcome


async def _attempt[T](session: ClientSession, script: Script[T]) -> T | _Failed:
    # Nothing may be raised inside the session: its task group would wrap it in a group. Any
    # error is kept, to be typed: the app is a program this adapter does not trust.
    async with session:
        try:
            return await script(session)
        except Exception as error:
            return _Failed(error)


async def _typed(error: Exception, wire: _Wire, process: Process) -> AppFailure:
    if isinstance(error, AppFailure):
        return error
    if isinstance(error, MCPError) and error.code == CONNECTION_CLOSED:
        if wire.failure is not None:
            return wire.failure
        with anyio.move_on_after(GRACE):
            await wire.stderr_closed.wait()
            await process.wait()
        said = wire.stderr.decode(errors="replace").strip() or "nothing on stderr"
        return AppCrashed(f"wordcraft stopped (exit status {process.returncode}): {said}")
    return AppCrashed(f"wordcraft answered something this adapter can't read: {error}")
