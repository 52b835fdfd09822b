"""LibreOffice jobs: one fresh office process per call, killed with its group at the end (ADR-0008).

A job writes the file and a ``job.json`` into a fresh temporary directory and runs the driver
(``driver/``) under the system Python, which has Debian's ``python3-uno``: this process never
imports ``uno``. The driver starts ``soffice --headless`` on a fresh profile inside that
directory, talks to it over a named pipe, and writes one JSON line. The job starts in a session
(so a process group) of its own, sealed under bubblewrap where the runner says so
(``_sandbox.py``), else, where the platform allows, in a network namespace of its own (``unshare
--net``), so a document that names a URL or a local file reaches nothing. Whatever happens, as
soon as the line is read or the deadline passes, the whole group is killed with SIGKILL, and
the job waits until every process of it is gone (the group's, and any that names the job's
directory, as a sandbox's own session does) before it wipes the directory
(:func:`~artifactr.files.apps.processes.reap`): one still there would hold its memory and its
directory after the answer. A process that outlives :attr:`Runner.grace` seconds of SIGKILL is a
crash, never an answer. Each failure is typed: ``refused`` with the driver's reason,
``crashed``, ``timeout`` and ``too_large``.

A job given a :class:`Reaper` answers first and is torn down after (ADR-0027): once its reply
and its file are in hand, its office is reaped in the background, whole group and all, as
above; the reaper's owner waits for every reaping (:meth:`Reaper.drained`) before it reuses
what a job held. A job that fails is reaped before its failure is raised, as any job without a
reaper. A job cancelled, or reaped in the background, has nobody to take a crash: its office is
killed again past its grace, and waited for, until every process of it is gone (:func:`finish`).

A job may answer early (:class:`Early`): the driver writes one ``{"early": ...}`` line before its
reply, with a file beside it (a page exported alone), and goes on; the job's caller takes that
answer at once, and the job ends, and is killed, only with its last line.
"""

import asyncio
import hashlib
import json
import logging
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final, Literal, cast

from pydantic import BaseModel, JsonValue, ValidationError

from artifactr.files.apps import processes
from artifactr.files.apps.libreoffice import _sandbox
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTimeout, AppTooLarge

logger = logging.getLogger("artifactr.files.apps.libreoffice")

DRIVER: Final = Path(__file__).with_name("driver")
"""The driver: a directory with a ``__main__.py`` in the package, run by the system Python."""

SOURCE: Final = "in.docx"
"""The file's name in the job's directory."""

TEMPLATE_PREFIX: Final = "libreoffice-template-"
"""The name a template profile's directory starts with, beside the jobs'."""

STDERR_TAIL: Final = 2_000
"""Characters of the driver's and the office's log kept, from the end, to explain a crash."""

Op = Literal["inspect", "apply", "pdf"]
"""What a job does: read a file, run a batch on it, or export it as PDF."""


@dataclass(frozen=True)
class Runner:
    """How jobs run: the programs, the limits, and whether the network is cut."""

    soffice: str
    """The office's program."""
    python: str
    """The Python that has ``uno``."""
    isolate: bool
    """Whether jobs run in a network namespace of their own (where not sandboxed)."""
    max_file: int
    """The most bytes a file (in or out) and the driver's reply may have."""
    prefix: tuple[str, ...] = ()
    """A command the driver runs under (a launcher that sets resource limits), if any."""
    bwrap: str | None = None
    """Bubblewrap, if jobs run sealed in its sandbox (``_sandbox.py``)."""
    template: Path | None = None
    """A profile the office has initialised once, copied into each job (:func:`template`)."""
    grace: float = processes.GRACE
    """Seconds the job's processes may take to be gone once killed."""
    warm: tuple[str, ...] = ()
    """The kinds (``docx``, ``xlsx``, ``pptx``) the office warms up for before it says it is
    ready, each on a document the driver makes itself (``driver/warmup.py``): a pool's offices."""


@dataclass(frozen=True)
class Reply:
    """What a job gave: the driver's result and the file it wrote, if asked for."""

    result: dict[str, JsonValue]
    """The driver's result."""
    output: bytes | None
    """The file the job wrote (``out.docx`` or ``out.pdf``)."""


@dataclass(frozen=True)
class Early:
    """Where a job's early answer goes: the file it names, and what takes the answer."""

    output: str
    """The file the early answer comes with, if the job wrote it (``page.pdf``)."""
    take: Callable[[Reply], None]
    """Called with the early answer, and that file (None if the job didn't write it)."""


async def run(
    runner: Runner,
    op: Op,
    source: bytes,
    *,
    deadline: float,
    commands: Sequence[AppCommand] = (),
    author: str = "",
    output: str | None = None,
    office: "Office | None" = None,
    file_format: str = "docx",
    page: int | None = None,
    early: Early | None = None,
    reaper: "Reaper | None" = None,
) -> Reply:
    """Run one job; return the driver's result, and the file named ``output`` it wrote.

    The job runs on ``office`` if given (one a pool started ahead, waiting for its job), else on
    one started now; either way that office sees this one document and is then killed with its
    group.

    ``file_format`` (``docx``, ``xlsx`` or ``pptx``) names the jobs the driver runs, and the
    file's extension in the job's directory. ``page`` is the page a pdf job exports alone first;
    ``early`` takes that early answer while the job goes on (its deadline still the whole job's).
    With a ``reaper``, a job that answered returns at once and its office is reaped in the
    background; without one, or on a failure, it returns once its office is gone.

    Raises:
        AppRefused: If the driver refuses (the file can't be opened, a command can't be done).
        AppTimeout: If the deadline passes; the process group is killed at once.
        AppCrashed: If the driver or the office dies, or answers something unreadable.
        AppTooLarge: If the reply or the written file is over the limit.
    """
    job: dict[str, JsonValue] = {
        "op": op,
        "author": author,
        "source": f"in.{file_format}",
        "format": file_format,
        "commands": [{"command": c.command, "params": dict(c.params)} for c in commands],
        "page": page,
    }
    if office is None:
        office = await _start(runner)
    try:
        await asyncio.to_thread((office.directory / f"in.{file_format}").write_bytes, source)
        try:
            async with asyncio.timeout(deadline):
                result = await _answer(office, job, early, runner.max_file)
        except TimeoutError:
            raise AppTimeout(
                f"libreoffice took longer than its deadline of {deadline:g} s and was stopped"
            ) from None
        written = None if output is None else _read_back(office.directory / output, runner.max_file)
    except asyncio.CancelledError:
        await processes.to_the_end(finish(office))
        raise
    except BaseException:
        await processes.to_the_end(end(office))
        raise
    if reaper is None:
        await processes.to_the_end(end(office))
    else:
        reaper.reap(office)
    return Reply(result, written)


@dataclass
class Office:
    """A started job: its directory, its pipe, and the driver's process, waiting for its job."""

    directory: Path
    pipe: str
    process: asyncio.subprocess.Process
    log: IO[bytes]
    said: "asyncio.Task[bytes]"
    """The driver's first line: ``{"ready": true}`` once its office answers (and has warmed
    up), else what it says instead (its reply to a job it can't run), or nothing if it stops."""
    grace: float = processes.GRACE
    known: processes.Known = frozenset()
    """Its processes once it said it was ready, pooled or cold: the kill waits for each, and for
    their sandbox's session, though they may be torn down by then and their command lines read
    empty."""

    def ready(self) -> bool:
        """Return whether the driver has said its office is ready for the job."""
        return _said(self.said).ready

    def cold(self) -> str:
        """Return why the office's warm-up failed, if it said so once ready."""
        return _said(self.said).cold


async def start(runner: Runner) -> Office:
    """Start a job's driver and office in a fresh directory; the job itself comes later.

    Raises:
        AppCrashed: If the driver can't start.
    """
    pipe = f"artifactr-{uuid.uuid4().hex}"
    directory = Path(tempfile.mkdtemp(prefix="libreoffice-"))
    office: dict[str, JsonValue] = {
        "soffice": runner.soffice,
        "pipe": pipe,
        "warm": list(runner.warm),
        "template": None if runner.template is None else str(runner.template),
    }
    # Written here, not in a thread: a start cancelled (a pool closed) leaves nothing behind.
    (directory / "job.json").write_text(json.dumps(office))
    argv = [*runner.prefix, runner.python, str(DRIVER), str(directory)]
    if runner.bwrap is not None:
        programs = (runner.python, runner.soffice)
        sealed = _sandbox.argv(
            runner.bwrap, directory, DRIVER, programs, profile=True, template=runner.template
        )
        argv = [*runner.prefix, *sealed, runner.python, str(DRIVER), str(directory)]
    elif runner.isolate:
        argv = ["unshare", "--net", "--", *argv]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(directory),
        "TMPDIR": str(directory),
        "TZ": "UTC",
        "LANG": "C.UTF-8",
        "SAL_USE_VCLPLUGIN": "svp",
    }
    log = (directory / "driver.log").open("wb")
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            cwd=directory,
            env=env,
            start_new_session=True,
            limit=runner.max_file,
        )
    except BaseException as error:  # asyncio kills a process it started if cancelled
        log.close()
        _forget_pipes(pipe, directory)
        shutil.rmtree(directory, True)
        if isinstance(error, OSError):
            raise AppCrashed(f"libreoffice's driver could not start: {error}") from error
        raise
    said = asyncio.get_running_loop().create_task(_first_line(process))
    return Office(directory, pipe, process, log, said, runner.grace)


async def _first_line(process: asyncio.subprocess.Process) -> bytes:
    stdout = process.stdout
    assert stdout is not None
    return await stdout.readline()


class _Ready(BaseModel):
    """What a driver says once its office answers: ready, and why its warm-up failed, if so."""

    ready: bool = False
    cold: str = ""


def _said(said: "asyncio.Task[bytes]") -> _Ready:
    """Return what a driver's first line says, once read: ready or not (anything else)."""
    if not said.done() or said.cancelled() or said.exception() is not None:
        return _Ready()
    try:
        return _Ready.model_validate_json(said.result())
    except ValidationError:
        return _Ready()


async def ready(office: Office, deadline: float) -> str:
    """Wait until a started office says it is ready; return why not, or an empty string.

    An office a job took and ended meanwhile is not ready, and nothing is said of it.
    """
    done, _ = await asyncio.wait({office.said}, timeout=deadline)
    if office.ready() or office.said.cancelled():
        office.known = processes.snapshot(office.process.pid, str(office.directory))
        return ""
    if not done:
        return f"its office didn't answer in {deadline:g} s"
    return f"its office stopped: {_tail(office.directory)}"


async def _start(runner: Runner) -> Office:
    """Start a job's office; if the job is cancelled meanwhile, end that office once started.

    A start cut short could leave its directory, or a driver just spawned, behind: the start
    runs to its end, then its office is killed and its directory wiped, then the cancellation
    goes on.
    """
    starting = asyncio.ensure_future(start(runner))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        with suppress(AppCrashed):  # a start that failed left nothing
            await processes.to_the_end(finish(await starting))
        raise


async def end(office: Office) -> None:
    """Kill a job's processes, wait until every one is gone, then wipe its directory.

    Raises:
        AppCrashed: If a process of the job is still alive ``office.grace`` seconds after the kill.
    """
    try:
        await _stop(office.process, office.grace, office.directory, office.known)
    finally:
        office.said.cancel()
        await asyncio.gather(office.said, return_exceptions=True)
        office.log.close()
        _forget_pipes(office.pipe, office.directory)
        await asyncio.to_thread(shutil.rmtree, office.directory, True)


async def finish(office: Office) -> None:
    """End a job's office for a caller who takes no answer: cancelled, or answered first.

    As :func:`end`, but an office whose processes outlive its grace (a machine under load, a
    process stuck in I/O) is not left alive as a crash nobody reads: the overrun is logged, and
    it is killed again and waited for, for as long as it takes, until every process is gone.
    """
    while True:
        try:
            await end(office)
        except AppCrashed as error:
            logger.warning("libreoffice's office was reaped late, and is killed again: %s", error)
        else:
            return


class Reaper:
    """Offices whose jobs have answered, each reaped in the background: killed, waited for, wiped.

    A reaping runs to its end whoever waits for it, and past its grace if it must
    (:func:`finish`): :meth:`drained` returns only once every process of each is gone.
    """

    def __init__(self) -> None:
        self._reaping: set[asyncio.Task[None]] = set()
        self.started = 0
        """Reapings started since the reaper was made: each a job that answered first."""

    def reap(self, office: Office) -> None:
        """Start reaping an office whose job has answered."""
        # Shielded: a loop that cancels what is pending as it closes still sees it to its end.
        task = asyncio.ensure_future(processes.to_the_end(finish(office)))
        self._reaping.add(task)
        self.started += 1
        task.add_done_callback(self._reaping.discard)

    @property
    def reaping(self) -> int:
        """How many offices are being reaped now."""
        return len(self._reaping)

    async def drained(self) -> None:
        """Return once every office being reaped, now or meanwhile, is gone."""
        while self._reaping:
            await asyncio.wait(set(self._reaping))


async def _stop(
    process: asyncio.subprocess.Process,
    grace: float,
    directory: Path,
    known: processes.Known = frozenset(),
) -> None:
    """Kill a job's group, and its processes that name its directory; wait until all are gone."""
    what, marker = "libreoffice", str(directory)
    await processes.reap(
        process.pid, process.wait, what=what, grace=grace, marker=marker, known=known
    )


async def _answer(
    office: Office, job: Mapping[str, JsonValue], early: Early | None, limit: int
) -> dict[str, JsonValue]:
    process, directory = office.process, office.directory
    stdin = process.stdin
    assert stdin is not None
    with suppress(ConnectionError):  # a driver that died already answers nothing, below
        stdin.write(json.dumps(job).encode() + b"\n")
        await stdin.drain()
    reply = await _line(office)
    if early is not None and isinstance(said := reply.get("early"), dict):
        path = directory / early.output
        written = _read_back(path, limit) if path.exists() else None
        early.take(Reply(said, written))
        reply = await _line(office)
    if reply.get("ok") is True:
        return cast("dict[str, JsonValue]", reply["result"])
    reason = str(reply.get("reason", "no reason given"))
    if reply.get("kind") == "refused":
        raise AppRefused(reason)
    raise AppCrashed(f"libreoffice failed: {reason}; {_tail(directory)}")


async def _line(office: Office) -> dict[str, JsonValue]:
    """Return the driver's next line, read as JSON."""
    stdout = office.process.stdout
    assert stdout is not None
    try:
        line = await office.said
        if office.ready():
            # A cold job's office is known once ready, as a pooled one is (:func:`ready`).
            office.known |= processes.snapshot(office.process.pid, str(office.directory))
            line = await stdout.readline()
    except ValueError:
        raise AppTooLarge("libreoffice's reply is over the size limit") from None
    if not line:
        status = await office.process.wait()
        raise AppCrashed(f"libreoffice stopped (exit status {status}): {_tail(office.directory)}")
    try:
        reply = json.loads(line)
    except ValueError:
        raise AppCrashed(
            f"libreoffice's driver wrote something that isn't JSON: {line[:200]!r}"
        ) from None
    return reply


def _tail(directory: Path) -> str:
    said = ""
    for name in ("driver.log", "soffice.log"):
        path = directory / name
        if path.exists():
            said += path.read_bytes()[-STDERR_TAIL:].decode(errors="replace").strip() + " "
    return said.strip() or "nothing in its logs"


def _read_back(path: Path, limit: int) -> bytes:
    try:
        with path.open("rb") as written:
            content = written.read(limit + 1)
    except OSError as error:
        raise AppCrashed(f"libreoffice said it wrote {path.name}, but it can't be read") from error
    if len(content) > limit:
        raise AppTooLarge(f"libreoffice wrote a file over the limit of {limit} bytes")
    return content


def _forget_pipes(pipe: str, directory: Path) -> None:
    """Remove the sockets a killed office leaves in /tmp: its pipe and its single-instance one."""
    profile = (directory / "profile").as_uri()
    digest = hashlib.md5(profile.encode("utf-16-le"), usedforsecurity=False).digest()
    # LibreOffice writes each byte of the digest in hex without its leading zero.
    single = "".join(f"{byte:x}" for byte in digest)
    for name in (pipe, f"SingleOfficeIPC_{single}"):
        with suppress(OSError):
            Path(f"/tmp/OSL_PIPE_{os.getuid()}_{name}").unlink()


async def template(runner: Runner, deadline: float) -> Path | None:
    """Return a profile the office has initialised (its first start done), or None if it can't.

    The office starts on it once, headless, with no document, and stops
    (``--terminate_after_init``), sealed as a job is. Each job copies it, so no job pays the
    office's first start.
    """
    directory = Path(tempfile.mkdtemp(prefix=TEMPLATE_PREFIX))
    profile = directory / "profile"
    argv = [
        runner.soffice,
        "--headless",
        "--invisible",
        "--nologo",
        "--norestore",
        "--nodefault",
        f"-env:UserInstallation={profile.as_uri()}",
        "--terminate_after_init",
    ]
    if runner.bwrap is not None:
        argv = [*_sandbox.argv(runner.bwrap, directory, DRIVER, (runner.soffice,)), *argv]
    status = None
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(directory)},
            start_new_session=True,
        )
    except OSError:
        process = None
    if process is not None:
        with suppress(TimeoutError):
            async with asyncio.timeout(deadline):
                status = await process.wait()
        # The launcher's exit is not the office's: nothing of it may still write the profile
        # when a job copies it, so its whole group is gone first, as a job's is.
        await _stop(process, runner.grace, directory)
    if status != 0 or not (profile / "user").is_dir():
        await asyncio.to_thread(shutil.rmtree, directory, True)
        return None
    return profile
