"""The worker adapter: the App port over HTTP, to the sandboxed worker service (RFC-0003).

:class:`Worker` sends each call to the worker service (``worker/``), which screens the file and
runs its one app (``WORKER_APP``) in its container, a job at a time: the adapter for files people
upload. It refuses a result from a worker that runs another app than it was told.

The wire format is this module's, and the service imports it: ``POST /jobs`` with a bearer token,
a body of one JSON line (a :class:`Call`) then the file's bytes, streamed; a 200 framed the same
way (an :class:`Outcome`, then the saved file or PNG); or a :class:`Problem` (a typed
``failure``, or ``unsafe`` with the screen's reason). Every reply and transport failure maps back
to the typed failures.

It takes one worker or a fleet (ADR-0025): each job goes to the free worker this process has
fewest calls on. A busy worker's 503 sends the job on to the next; a worker that can't be reached
(or drops the call) is skipped by every job for :data:`DOWN_FOR` seconds, then tried again; when
every worker is busy the job waits for the shortest ``Retry-After`` and goes round again, until
its deadline plus :data:`SLACK`. Jobs are bytes in, bytes out, so a call a worker dropped is
safely sent to another::

    app = Worker(["http://worker-1:8000", "http://worker-2:8000"], token=token, app="libreoffice")
"""

import itertools
import math
import time
from collections.abc import AsyncIterator, Sequence
from typing import Final

import anyio
import httpx2
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from artifactr.files.apps.jobs import MAX_FILE, MAX_REPLY, Job, JobAdapter, JobResult
from artifactr.files.core.app_port import EDIT_DEADLINE, CommandSpec, Inspection, Source
from artifactr.files.core.errors import (
    AppCrashed,
    AppTimeout,
    AppTooLarge,
    FailureKind,
    UnsafeFile,
    UnsafeReason,
    failure_of,
)

CONTENT_TYPE: Final = "application/x-artifactr-job"
"""The media type of a call's body and of a result: a line of JSON, a newline, then bytes."""

JOBS: Final = "/jobs"
"""The worker's route for calls."""

HEALTH: Final = "/health"
"""The worker's health route, which needs no token and says nothing about files."""

SLACK: Final = 10.0
"""Seconds a call may take beyond its job's deadline: the worker's queue, the upload, screening."""

CONNECT_TIMEOUT: Final = 5.0
"""Seconds to wait for the worker to accept a connection."""

MAX_RESULT: Final = MAX_FILE + MAX_REPLY
"""Bytes the adapter reads of a result, by default: a saved file and the app's inspection."""

CHUNK_SIZE: Final = 64 * 1024
"""Bytes sent at a time."""

RETRY_AFTER: Final = 1.0
"""Seconds to wait before asking a busy worker again when it doesn't say."""

DOWN_FOR: Final = 5.0
"""Seconds every job skips a worker that couldn't be reached, before it is tried again."""


# ─── the wire format ──────────────────────────────────────────────────────────


class Call(BaseModel):
    """A call as the worker receives it, on the first line of the body."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job: Job
    """What to do."""
    deadline: float | None = Field(default=None, gt=0)
    """Seconds the job may take; the worker's own limit for the kind if omitted or higher."""


class Outcome(BaseModel):
    """A job's result as the worker sends it, on the first line of the reply."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    app: str | None = None
    """The worker's app (``"wordcraft"``, ``"libreoffice"``); workers before it said none."""
    inspection: Inspection | None = None
    """What the app read: in the file (an inspection), or in the saved file (an edit)."""
    commands: tuple[CommandSpec, ...] | None = None
    """The app's catalog (a listing of commands)."""


class Problem(BaseModel):
    """The worker's reply to a call that failed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reason: str
    """Why, in the app's or the worker's words."""
    failure: FailureKind | None = None
    """The typed failure, if the app (or the call) failed."""
    unsafe: UnsafeReason | None = None
    """Why the file was refused before any app saw it, if it was."""


def frame(head: BaseModel) -> bytes:
    """Return a model as the first line of a body: compact JSON, which holds no raw newline."""
    return head.model_dump_json().encode() + b"\n"


STATUS: Final[dict[FailureKind, int]] = {
    "refused": 400,
    "too_large": 413,
    "crashed": 502,
    "timeout": 504,
}
"""The HTTP status the worker answers each typed failure with."""

UNSAFE_STATUS: Final = 422
"""The HTTP status of a file refused before any app saw it."""


# ─── the adapter ──────────────────────────────────────────────────────────────


class WordCraftWorker(JobAdapter):
    """The worker's app (WordCraft, or LibreOffice), in its sandbox, one HTTP request per call.

    Each call is stateless (bytes in, bytes out) and has a deadline: the worker stops the app
    at the job's deadline, and the adapter gives up :data:`SLACK` seconds later. Failures are
    typed as the local adapter's are: ``refused``, ``timeout``, ``crashed`` and ``too_large``,
    and a hostile file is :class:`~artifactr.files.core.errors.UnsafeFile` with its reason.

    Args:
        url: The worker's base URL (``http://wordcraft-worker:8000``), or several: a fleet.
        token: The bearer token the deployment generated for the worker.
        app: The worker's app (its ``WORKER_APP``): ``"wordcraft"`` or ``"libreoffice"``.
        deadline: Seconds a listing of commands may take (the port gives it no deadline).
        slack: Seconds a call may take beyond its job's deadline.
        max_result: Bytes read of a result at most; more is ``too_large``.
        transport: The HTTP transport; a real connection if omitted (tests pass a mock).
    """

    def __init__(
        self,
        url: str | Sequence[str],
        *,
        token: str,
        app: str = "wordcraft",
        deadline: float = EDIT_DEADLINE,
        slack: float = SLACK,
        max_result: int = MAX_RESULT,
        down_for: float = DOWN_FOR,
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        urls = (url,) if isinstance(url, str) else tuple(url)
        if not urls:
            raise ValueError("a worker's adapter needs at least one worker URL")
        self.urls = tuple(one.rstrip("/") for one in urls)
        """The workers' base URLs."""
        self.url = self.urls[0]
        """The first worker's base URL."""
        self.down_for = down_for
        """Seconds a worker that couldn't be reached is skipped."""
        self._calls = dict.fromkeys(self.urls, 0)
        self._down_until = dict.fromkeys(self.urls, 0.0)
        self._turn = itertools.count()
        self.app = app
        """The worker's app."""
        self.deadline = deadline
        """Seconds a listing of commands may take."""
        self.slack = slack
        """Seconds a call may take beyond its job's deadline."""
        self.max_result = max_result
        """Bytes read of a result at most."""
        self._token = token
        self._transport = transport

    @property
    def name(self) -> str:
        """The app's short name: the worker's app."""
        return self.app

    async def run(self, job: Job, source: Source, deadline: float) -> JobResult:
        """Return what one job gives, run by the worker: see the module's docstring."""
        head = frame(Call(job=job, deadline=deadline))
        patience = deadline + self.slack
        timeout = httpx2.Timeout(None, connect=CONNECT_TIMEOUT)
        with anyio.move_on_after(patience):
            async with httpx2.AsyncClient(transport=self._transport, timeout=timeout) as client:
                gone: set[str] = set()
                while True:
                    wait = math.inf
                    for url in self._order(gone):
                        try:
                            status, retry_after, body = await self._call(client, url, head, source)
                        except (AppCrashed, AppTimeout):
                            gone.add(url)
                            self._down_until[url] = time.monotonic() + self.down_for
                            if len(gone) == len(self.urls):
                                raise
                            continue
                        self._down_until[url] = 0.0
                        if status != 503:
                            outcome, content = self._checked(_result(status, body))
                            return JobResult(content, outcome.inspection, outcome.commands)
                        wait = min(wait, retry_after)
                    await anyio.sleep(wait)
        raise AppTimeout(f"the worker gave no result within {patience:g} s")

    def _order(self, gone: set[str]) -> list[str]:
        # Up before down, then the fewest calls from this process, then in turn.
        now = time.monotonic()
        turn = next(self._turn)
        count = len(self.urls)
        return sorted(
            (url for url in self.urls if url not in gone),
            key=lambda url: (
                self._down_until[url] > now,
                self._calls[url],
                (self.urls.index(url) - turn) % count,
            ),
        )

    async def _call(
        self, client: httpx2.AsyncClient, url: str, head: bytes, source: Source
    ) -> tuple[int, float, bytes]:
        self._calls[url] += 1
        try:
            return await self._post(client, url, head, source)
        finally:
            self._calls[url] -= 1

    def _checked(self, result: tuple[Outcome, bytes]) -> tuple[Outcome, bytes]:
        said = result[0].app
        if said is not None and said != self.app:
            raise AppCrashed(f"the worker runs {said}, not {self.app}: set the adapter's app")
        return result

    async def _post(
        self, client: httpx2.AsyncClient, url: str, head: bytes, source: Source
    ) -> tuple[int, float, bytes]:
        headers = {
            "Authorization": f"Bearer {self._token}",
            "Content-Type": CONTENT_TYPE,
            "Content-Length": str(len(head) + _size(source)),
        }
        body = bytearray()
        try:
            async with client.stream(
                "POST", url + JOBS, content=_body(head, source), headers=headers
            ) as response:
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > self.max_result:
                        raise AppTooLarge(
                            f"the worker's reply is over the limit of {self.max_result} bytes"
                        )
        except httpx2.TimeoutException as error:
            raise AppTimeout(f"the worker didn't answer in time: {error!r}") from error
        except httpx2.TransportError as error:
            raise AppCrashed(f"the worker can't be reached: {error!r}") from error
        return response.status_code, _retry_after(response.headers), bytes(body)


def _size(source: Source) -> int:
    if isinstance(source, bytes):
        return len(source)
    return source.seek(0, 2)


async def _body(head: bytes, source: Source) -> AsyncIterator[bytes]:
    yield head
    if isinstance(source, bytes):
        for start in range(0, len(source), CHUNK_SIZE):
            yield source[start : start + CHUNK_SIZE]
    else:
        source.seek(0)
        while chunk := source.read(CHUNK_SIZE):
            yield chunk


def _retry_after(headers: httpx2.Headers) -> float:
    try:
        seconds = float(headers.get("retry-after", RETRY_AFTER))
    except ValueError:
        return RETRY_AFTER
    return seconds if math.isfinite(seconds) and seconds >= 0 else RETRY_AFTER


def _result(status: int, body: bytes) -> tuple[Outcome, bytes]:
    if status == 200:
        line, newline, rest = body.partition(b"\n")
        try:
            if not newline:
                raise ValueError("no newline after the outcome")
            return Outcome.model_validate_json(line), rest
        except ValueError as error:
            raise AppCrashed(f"the worker's result can't be read: {error}") from error
    try:
        problem = Problem.model_validate_json(body)
    except ValidationError as error:
        said = body[:200].decode(errors="replace")
        raise AppCrashed(f"the worker answered {status}: {said}") from error
    if problem.unsafe is not None:
        raise UnsafeFile(problem.unsafe, problem.reason)
    if problem.failure is not None:
        raise failure_of(problem.failure, problem.reason)
    raise AppCrashed(f"the worker answered {status}: {problem.reason}")


Worker = WordCraftWorker
"""The name RFC-0003 gives the worker's adapter."""
