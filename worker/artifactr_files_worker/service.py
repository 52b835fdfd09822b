"""Service: the worker's HTTP API, one job at a time (RFC-0003 "The app port and the worker").

The application sends each call of the App port here through
:class:`~artifactr.files.apps.worker.Worker`, whose module defines the wire format. Two
routes:

- ``GET /health`` answers ``{"status": "ok", "running": 0, "waiting": 0}`` (the job running now,
  and the calls waiting their turn), with no token; it says nothing about files.
- ``POST /jobs`` runs one call. Its body is the call's line of JSON, a newline, then the file.

A call goes through these steps, each of which may end it with a typed reply:

1. **The token**, compared in constant time (:func:`hmac.compare_digest`), before a byte of the
   body is read: 401 without it. A declared ``Content-Length`` over the limits is 413 at once.
2. **Its turn.** One job runs at a time; up to ``queue`` calls wait, each for ``queue_wait``
   seconds at most, in order. Any more, or a call that waited too long, is 503 with
   ``Retry-After``. The worker scales by adding workers, never by running jobs side by side.
3. **The upload**, streamed into a fresh temporary directory (in memory up to a mebibyte, then
   on disk), refused as ``too_large`` past ``max_file``, and as ``timeout`` if it takes longer
   than ``upload_timeout``: a stalled caller never holds the worker.
4. **The page**, for a render: from 1, at a scale from 0.1 to 4, else 400 before anything
   runs, whoever called.
5. **Screening** (:func:`~.screen.screen_file`), in a thread: the zip, the XML, the images and
   packages inside, in one pass that gives the file's fingerprint too. A refusal is 422 with its
   reason.
6. **The job**, in the worker's app (``WORKER_APP``), given the fingerprint so that the file is
   not screened again: WordCraft's
   (:func:`artifactr.files.apps.wordcraft.run_job`) is a fresh ``wordcraft-cli mcp`` in an empty
   directory of its own; LibreOffice's (:class:`artifactr.files.apps.libreoffice.LibreOffice`) a
   fresh ``soffice --headless`` on a fresh profile, driven by the adapter's driver. Either runs
   under the job's deadline, started by the :mod:`.launcher`, which sets its resource limits
   (CPU time, address space, file size, open files), with a cap on what it writes. Whatever
   happens, its whole process group is killed and its directory wiped. A file the app can't
   open is ``refused``, with the app's reason. A LibreOffice render of a document's first page
   is answered from that page exported alone while the job exports the whole document for the
   next pages, and an edit or an inspection is answered before its office is reaped: the next
   job waits for that export to end and that office to be gone, so one office runs at a time.
7. **The reply**: the outcome's line of JSON (which names the app) and the bytes, or the typed
   failure. The upload's directory is wiped too, whatever happened.

Each job is logged with its kind, outcome, size, deadline and start and end times (monotonic),
never with any of the file's content.
"""

import hmac
import logging
import os
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from artifactr.files.apps.jobs import (
    ApplyJob,
    CommandsJob,
    InspectJob,
    Job,
    JobResult,
    Limits,
    RenderJob,
)
from artifactr.files.apps.libreoffice import LibreOffice, available
from artifactr.files.apps.wordcraft import run_job
from artifactr.files.apps.worker import (
    CONTENT_TYPE,
    HEALTH,
    JOBS,
    STATUS,
    UNSAFE_STATUS,
    Call,
    Outcome,
    Problem,
    frame,
)
from artifactr.files.core.errors import AppFailure, AppTimeout, AppTooLarge, UnsafeFile
from artifactr.files.native import MAX_PAGE, MAX_SCALE, MIN_SCALE

from . import launcher
from .screen import screen_file
from .settings import Misconfigured, Settings

log = logging.getLogger("artifactr_files_worker")
"""Where each job's line goes: kind, outcome, bytes in, deadline, start and end."""

LAUNCHER: Final = Path(launcher.__file__).resolve()
"""The launcher's file, run by path in the job's directory."""

SPOOL_SIZE: Final = 1024 * 1024
"""Bytes of an upload held in memory before it is spooled to the job's directory."""

APP_WORDCRAFT: Final = "wordcraft"
"""The name a WordCraft worker's results give their app."""

BACKLOG: Final = 64
"""Connections the listening socket holds before the kernel refuses more."""


def create_app(settings: Settings) -> Starlette:
    """Return the worker's ASGI app, with its token, its app and its limits."""
    service = Service(settings)

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncGenerator[None]:
        service.start()
        try:
            yield
        finally:
            await service.close()

    return Starlette(
        routes=[
            Route(HEALTH, service.health, methods=["GET"]),
            Route(JOBS, service.jobs, methods=["POST"]),
        ],
        lifespan=lifespan,
    )


def serve(environ: Mapping[str, str] = os.environ) -> None:
    """Serve the worker with the environment's settings, on ``WORKER_HOST`` and ``WORKER_PORT``.

    Raises:
        SystemExit: If a setting is missing or not valid (status 1, with the reason).
    """
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        settings = Settings.from_env(environ)
    except Misconfigured as error:
        sys.exit(f"artifactr-files-worker: {error}")
    if settings.app == "libreoffice":
        found = available(settings.soffice, settings.uno_python)
        if not found:
            sys.exit(f"artifactr-files-worker: LibreOffice can't run: {'; '.join(found.missing)}")
    uvicorn.run(
        create_app(settings),
        host=settings.host,
        port=settings.port,
        log_config=None,
        server_header=False,
        proxy_headers=False,
        backlog=BACKLOG,
        # A backstop for a flood of connections: the gate refuses calls past its queue itself.
        limit_concurrency=settings.queue + 16,
        timeout_keep_alive=5,
    )


# ─── one job at a time ────────────────────────────────────────────────────────


class Busy(Exception):
    """Too many calls wait already, or this one waited too long."""


class Gate:
    """One job at a time; a few calls wait their turn, in order, each for a few seconds.

    Args:
        queue: How many calls may wait while a job runs.
        wait: Seconds a call waits for its turn.
    """

    def __init__(self, *, queue: int, wait: float) -> None:
        self.queue = queue
        """How many calls may wait while a job runs."""
        self.wait = wait
        """Seconds a call waits for its turn."""
        self._lock = anyio.Lock()
        self._waiting = 0

    @property
    def running(self) -> int:
        """How many jobs run now: 0 or 1."""
        return int(self._lock.locked())

    @property
    def waiting(self) -> int:
        """How many calls wait for their turn."""
        return self._waiting

    @asynccontextmanager
    async def turn(self) -> AsyncGenerator[None]:
        """Hold the worker for one job; wait for it first if another job runs.

        Raises:
            Busy: If ``queue`` calls wait already, or the wait passes ``wait`` seconds.
        """
        if self._lock.locked() and self._waiting >= self.queue:
            raise Busy(f"its queue is full ({self._waiting} waiting)")
        acquired = False
        self._waiting += 1
        try:
            with anyio.move_on_after(self.wait):
                await self._lock.acquire()
                acquired = True
        finally:
            self._waiting -= 1
        if not acquired:
            raise Busy(f"the call waited {self.wait:g} s for its turn")
        try:
            yield
        finally:
            self._lock.release()


# ─── the service ──────────────────────────────────────────────────────────────


class _Refusal(Exception):
    """A call refused before its job ran, with the reply to send."""

    def __init__(self, status: int, problem: Problem) -> None:
        super().__init__(problem.reason)
        self.status = status
        self.problem = problem


@dataclass
class _Report:
    """What the log says of one job."""

    started: float
    kind: str = "unknown"
    outcome: str = "ok"
    bytes_in: int = 0
    deadline: float = 0.0


class Service:
    """The worker's routes, its gate and its settings.

    Args:
        settings: The token, the app and the limits.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        """The token, the app and the limits."""
        self.gate = Gate(queue=settings.queue, wait=settings.queue_wait)
        """One job at a time."""
        self._office = office_of(settings)
        self._token = settings.token.encode()

    def start(self) -> None:
        """Start LibreOffice's pool, so the first job finds an office started (ADR-0033)."""
        if self._office is not None:
            self._office.fill_pool()

    async def close(self) -> None:
        """Kill the offices LibreOffice's pool started ahead, if it has any."""
        if self._office is not None:
            await self._office.close()

    async def health(self, _request: Request) -> Response:
        """Answer that the worker is up, and how busy it is: never anything about a file."""
        return JSONResponse(
            {"status": "ok", "running": self.gate.running, "waiting": self.gate.waiting}
        )

    async def jobs(self, request: Request) -> Response:
        """Run one call, or refuse it: see the module's docstring for each step."""
        if not self._authorized(request.headers.get("authorization", "")):
            return _reply(
                401,
                Problem(reason="a valid bearer token is required"),
                {"WWW-Authenticate": "Bearer"},
            )
        declared = request.headers.get("content-length", "")
        ceiling = self.settings.max_call + 1 + self.settings.max_file
        if declared.isdigit() and int(declared) > ceiling:
            return _failed(AppTooLarge(f"the call has {declared} bytes; the limit is {ceiling}"))
        try:
            async with self.gate.turn():
                return await self._job(request)
        except Busy as busy:
            headers = {"Retry-After": str(self.settings.retry_after)}
            return _reply(503, Problem(reason=f"the worker is busy: {busy}"), headers)

    def _authorized(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        given = token.strip().encode()
        return scheme.lower() == "bearer" and hmac.compare_digest(given, self._token)

    async def _job(self, request: Request) -> Response:
        report = _Report(started=time.monotonic())
        try:
            with (
                tempfile.TemporaryDirectory(prefix="artifactr-worker-") as directory,
                tempfile.SpooledTemporaryFile(max_size=SPOOL_SIZE, dir=directory) as upload,
            ):
                return await self._attempt(request, upload, report)
        finally:
            ended = time.monotonic()
            log.info(
                "%s: %s in %.3f s (%d bytes in)",
                report.kind,
                report.outcome,
                ended - report.started,
                report.bytes_in,
                extra={
                    "job": report.kind,
                    "outcome": report.outcome,
                    "bytes_in": report.bytes_in,
                    "deadline": report.deadline,
                    "started": report.started,
                    "ended": ended,
                },
            )

    async def _attempt(self, request: Request, upload: IO[bytes], report: _Report) -> Response:
        try:
            call = None
            with anyio.move_on_after(self.settings.upload_timeout):
                call = await self._receive(request, upload, report)
            if call is None:
                raise AppTimeout(
                    f"the call took longer than {self.settings.upload_timeout:g} s to arrive"
                )
            return await self._run(call, upload, report)
        except _Refusal as refusal:
            report.outcome = refusal.problem.failure or "refused"
            return _reply(refusal.status, refusal.problem)
        except UnsafeFile as unsafe:
            report.outcome = f"unsafe ({unsafe.reason})"
            problem = Problem(reason=str(unsafe), unsafe=unsafe.reason)
            return _reply(UNSAFE_STATUS, problem)
        except AppFailure as failure:
            report.outcome = failure.kind
            return _failed(failure)

    async def _receive(self, request: Request, upload: IO[bytes], report: _Report) -> Call:
        """Return the call, with the file streamed into ``upload``."""
        line = bytearray()
        call: Call | None = None
        try:
            async for chunk in request.stream():
                if call is None:
                    line += chunk
                    end = line.find(b"\n")
                    if (end if end >= 0 else len(line)) > self.settings.max_call:
                        raise AppTooLarge(
                            f"the call's line is over the limit of {self.settings.max_call} bytes"
                        )
                    if end < 0:
                        continue
                    call = _parse(bytes(line[:end]), report)
                    chunk = bytes(line[end + 1 :])
                report.bytes_in += len(chunk)
                if report.bytes_in > self.settings.max_file:
                    raise AppTooLarge(
                        f"the file is over the limit of {self.settings.max_file} bytes"
                    )
                upload.write(chunk)
        except ClientDisconnect:
            raise _Refusal(400, Problem(reason="the caller went away", failure="refused")) from None
        if call is None:
            problem = Problem(reason="the body holds no call and newline", failure="refused")
            raise _Refusal(400, problem)
        upload.seek(0)
        return call

    async def _run(self, call: Call, upload: IO[bytes], report: _Report) -> Response:
        """Screen the file, run the job, and return the result's reply."""
        settings = self.settings
        job = call.job
        ceiling = settings.render_deadline if isinstance(job, RenderJob) else settings.edit_deadline
        deadline = min(call.deadline or ceiling, ceiling)
        report.deadline = deadline
        if isinstance(job, RenderJob):
            _check_page(job)
        screened = None
        if not isinstance(job, CommandsJob):
            screened = await anyio.to_thread.run_sync(screen_file, upload, settings.screening)
        if self._office is not None:
            app = self._office.name
            result = await _libreoffice(self._office, job, upload, deadline, screened)
        else:
            app = APP_WORDCRAFT
            result = await self._wordcraft(job, upload, deadline, screened)
        outcome = Outcome(app=app, inspection=result.inspection, commands=result.commands)
        return _result(outcome, result.content)

    async def _wordcraft(
        self, job: Job, upload: IO[bytes], deadline: float, screened: str | None
    ) -> JobResult:
        """Run the job through a fresh ``wordcraft-cli mcp``, started by the launcher."""
        settings = self.settings
        return JobResult.of(
            await run_job(
                [*_launcher(settings, settings.cpu_for(deadline)), *settings.cli],
                job,
                upload,
                deadline=deadline,
                env=settings.app_env,
                limits=Limits(max_file=settings.max_file, max_reply=settings.max_reply),
                build=settings.build,
                screened=screened,
            )
        )


async def _libreoffice(
    office: LibreOffice, job: Job, upload: IO[bytes], deadline: float, screened: str | None
) -> JobResult:
    """Run the job through a fresh LibreOffice, its driver started by the launcher.

    The export a render answered early left going ends first, and the office an edit or an
    inspection answered from before it was reaped is gone first: one office at a time.
    """
    await office.exported()
    await office.reaped()
    if isinstance(job, ApplyJob):
        return JobResult.of(
            await office.apply(
                upload, job.commands, deadline=deadline, author=job.author, screened=screened
            )
        )
    if isinstance(job, InspectJob):
        return JobResult.of(await office.inspect(upload, deadline=deadline, screened=screened))
    if isinstance(job, RenderJob):
        return JobResult.of(
            await office.render(
                upload, job.page, scale=job.scale, deadline=deadline, screened=screened
            )
        )
    return JobResult.of(tuple(await office.commands(job.query)))


def office_of(settings: Settings) -> LibreOffice | None:
    """Return the LibreOffice a worker's jobs run in, or None for a WordCraft worker.

    Its driver runs under the launcher with the worker's limits, and the CPU time of the
    longest deadline: each job's own deadline still stops it, wall-clock.
    """
    if settings.app != "libreoffice":
        return None
    longest = max(settings.edit_deadline, settings.render_deadline)
    return LibreOffice(
        soffice=settings.soffice,
        python=settings.uno_python,
        max_size=settings.max_file,
        pdf_cache=settings.pdf_cache,
        pool=settings.pool,
        pool_memory=settings.pool_memory,
        pool_warm=settings.pool_warm,
        deadline=settings.edit_deadline,
        prefix=_launcher(settings, settings.cpu_for(longest)),
        build=settings.build,
    )


def _launcher(settings: Settings, cpu: int) -> list[str]:
    """Return the launcher's command line, with the job's limits, up to the app's."""
    rlimits = launcher.Rlimits(
        cpu=cpu,
        memory=settings.memory,
        file_size=settings.file_size,
        open_files=settings.open_files,
    )
    return [sys.executable, "-I", "-S", str(LAUNCHER), *rlimits.arguments(), "--"]


def _check_page(job: RenderJob) -> None:
    """Refuse a page or a scale no app should be started for: the caller may be anyone."""
    problems: list[str] = []
    if not 1 <= job.page <= MAX_PAGE:
        problems.append(f"a page is a number from 1 to {MAX_PAGE}, not {job.page}")
    if not MIN_SCALE <= job.scale <= MAX_SCALE:
        problems.append(f"a scale is from {MIN_SCALE:g} to {MAX_SCALE:g}, not {job.scale:g}")
    if problems:
        raise _Refusal(400, Problem(reason="; ".join(problems), failure="refused"))


def _parse(line: bytes, report: _Report) -> Call:
    try:
        call = Call.model_validate_json(line)
    except ValueError as error:
        reason = f"the call can't be read: {str(error)[:500]}"
        raise _Refusal(400, Problem(reason=reason, failure="refused")) from None
    report.kind = call.job.kind
    return call


def _result(outcome: Outcome, data: bytes = b"") -> Response:
    return Response(frame(outcome) + data, media_type=CONTENT_TYPE)


def _failed(failure: AppFailure) -> Response:
    return _reply(STATUS[failure.kind], Problem(reason=failure.reason, failure=failure.kind))


def _reply(status: int, problem: Problem, headers: dict[str, str] | None = None) -> Response:
    return Response(
        problem.model_dump_json(exclude_none=True),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )
