"""LibreOffice jobs: one fresh office process per call, killed with its group at the end (ADR-0008).

A job writes the file and a ``job.json`` into a fresh temporary directory and runs the driver
(``driver.py``) under the system Python, which has Debian's ``python3-uno``: this process never
imports ``uno``. The driver starts ``soffice --headless`` on a fresh profile inside that
directory, talks to it over a named pipe, and writes one JSON line. The job starts in a session
(so a process group) of its own, and, where the platform allows, in a network namespace of its
own (``unshare --net``), so a document that names a URL (a linked picture, an ``INCLUDEPICTURE``
field, a remote template) reaches nothing. Whatever happens, as soon as the line is read or the
deadline passes, the whole group is killed with SIGKILL (:func:`stop`), and the job waits until
every process of the group is gone before it wipes the directory and returns: a killed office
takes a while to tear down on a busy machine, and one still there would hold its memory and its
directory after the answer. Nothing escapes the group: ``unshare`` and the worker's launcher
replace themselves with the driver, and ``oosplash`` and ``soffice.bin`` start no session of
their own. A process that outlives :data:`GRACE` seconds of SIGKILL is a crash, never an answer.
Each failure is typed: ``refused`` with the driver's reason, ``crashed``, ``timeout`` and
``too_large``.
"""

import asyncio
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from pydantic import JsonValue

from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTimeout, AppTooLarge

DRIVER: Final = Path(__file__).with_name("driver.py")
"""The driver, shipped in the package and run by the system Python."""

SOURCE: Final = "in.docx"
"""The file's name in the job's directory."""

STDERR_TAIL: Final = 2_000
"""Characters of the driver's and the office's log kept, from the end, to explain a crash."""

GRACE: Final = 10.0
"""Seconds a killed job's processes may take to be gone: an office's teardown, on a busy machine."""

POLL: Final = 0.005
"""Seconds of the first wait for a killed job's processes to be gone; each next wait doubles."""

POLL_MAX: Final = 0.1
"""The longest wait between two looks at whether a killed job's processes are gone."""

PROC: Final = Path("/proc")
"""Where the kernel lists processes, to tell a live process from a zombie."""

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
    """Whether jobs run in a network namespace of their own."""
    max_file: int
    """The most bytes a file (in or out) and the driver's reply may have."""
    prefix: tuple[str, ...] = ()
    """A command the driver runs under (a launcher that sets resource limits), if any."""
    grace: float = GRACE
    """Seconds the job's processes may take to be gone once killed."""


@dataclass(frozen=True)
class Reply:
    """What a job gave: the driver's result and the file it wrote, if asked for."""

    result: dict[str, JsonValue]
    """The driver's result."""
    output: bytes | None
    """The file the job wrote (``out.docx`` or ``out.pdf``)."""


async def run(
    runner: Runner,
    op: Op,
    source: bytes,
    *,
    deadline: float,
    commands: Sequence[AppCommand] = (),
    author: str = "",
    output: str | None = None,
) -> Reply:
    """Run one job; return the driver's result, and the file named ``output`` it wrote.

    Raises:
        AppRefused: If the driver refuses (the file can't be opened, a command can't be done).
        AppTimeout: If the deadline passes; the process group is killed at once.
        AppCrashed: If the driver or the office dies, or answers something unreadable, or a
            process of the job is still alive ``runner.grace`` seconds after it was killed.
        AppTooLarge: If the reply or the written file is over the limit.
    """
    pipe = f"artifactr-{uuid.uuid4().hex}"
    job: dict[str, JsonValue] = {
        "op": op,
        "soffice": runner.soffice,
        "pipe": pipe,
        "author": author,
        "source": SOURCE,
        "commands": [{"command": c.command, "params": dict(c.params)} for c in commands],
    }
    directory = Path(tempfile.mkdtemp(prefix="libreoffice-"))
    try:
        await asyncio.to_thread(_prepare, directory, source, job)
        try:
            result = await _drive(runner, directory, deadline)
        except TimeoutError:
            raise AppTimeout(
                f"libreoffice took longer than its deadline of {deadline:g} s and was stopped"
            ) from None
        written = None if output is None else _read_back(directory / output, runner.max_file)
        return Reply(result, written)
    finally:
        _forget_pipes(pipe, directory)
        await asyncio.to_thread(shutil.rmtree, directory, True)


def _prepare(directory: Path, source: bytes, job: Mapping[str, JsonValue]) -> None:
    (directory / SOURCE).write_bytes(source)
    (directory / "job.json").write_text(json.dumps(job))


async def _drive(runner: Runner, directory: Path, deadline: float) -> dict[str, JsonValue]:
    argv = [*runner.prefix, runner.python, str(DRIVER), str(directory)]
    if runner.isolate:
        argv = ["unshare", "--net", "--", *argv]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(directory),
        "TMPDIR": str(directory),
        "TZ": "UTC",
        "LANG": "C.UTF-8",
        "SAL_USE_VCLPLUGIN": "svp",
    }
    with (directory / "driver.log").open("wb") as log:
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=directory,
                env=env,
                start_new_session=True,
                limit=runner.max_file,
            )
        except OSError as error:
            raise AppCrashed(f"libreoffice's driver could not start: {error}") from error
        try:
            async with asyncio.timeout(deadline):
                return await _answer(process, directory)
        finally:
            # Past the deadline's scope: its expiry never cuts short the wait for the group.
            await stop(process, runner.grace, "libreoffice")


async def _answer(process: asyncio.subprocess.Process, directory: Path) -> dict[str, JsonValue]:
    stdout = process.stdout
    assert stdout is not None
    try:
        line = await stdout.readline()
    except ValueError:
        raise AppTooLarge("libreoffice's reply is over the size limit") from None
    if not line:
        status = await process.wait()
        raise AppCrashed(f"libreoffice stopped (exit status {status}): {_tail(directory)}")
    try:
        reply = json.loads(line)
    except ValueError:
        raise AppCrashed(
            f"libreoffice's driver wrote something that isn't JSON: {line[:200]!r}"
        ) from None
    if reply.get("ok") is True:
        return reply["result"]
    reason = str(reply.get("reason", "no reason given"))
    if reply.get("kind") == "refused":
        raise AppRefused(reason)
    raise AppCrashed(f"libreoffice failed: {reason}; {_tail(directory)}")


def _tail(directory: Path) -> str:
    said = ""
    for name in ("driver.log", "soffice.log"):
        path = directory / name
        if path.exists():
            said += path.read_bytes()[-STDERR_TAIL:].decode(errors="replace").strip() + " "
    return said.strip() or "nothing in its logs"


async def stop(process: asyncio.subprocess.Process, grace: float, what: str) -> None:
    """Kill the process's whole group; return once every process of the group is gone.

    The process leads a session of its own, so its pid is its group's id. Killing the group
    only starts its end: each process is gone when the kernel has torn it down (a zombie is
    gone: it holds no memory and no directory). Until then the group is killed again, and
    looked at again after a wait that doubles, from :data:`POLL` up to :data:`POLL_MAX`.

    Raises:
        AppCrashed: If a process of the group is still alive ``grace`` seconds after the kill.
    """
    _kill_group(process.pid)
    pause = POLL
    try:
        async with asyncio.timeout(grace):
            # The leader's end includes its pipes' closing, which a survivor may hold open.
            await process.wait()
            while _alive(process.pid):
                _kill_group(process.pid)
                await asyncio.sleep(pause)
                pause = min(pause * 2, POLL_MAX)
    except TimeoutError:
        alive = _alive(process.pid)
        raise AppCrashed(
            f"{what} was killed, but its processes {alive} were still alive {grace:g} s later"
        ) from None


def _kill_group(pgid: int) -> None:
    """Kill the job's whole process group; its leader's pid is the group's id."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _alive(pgid: int) -> list[int]:
    """Return the pids of the group's processes that are alive: not yet a zombie, or gone."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return []
    # The group has processes; a killed office's children whose parent is gone may be zombies
    # for as long as nobody reaps them (a worker that is pid 1 never does).
    alive: list[int] = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            state, _, group = _stat(entry)[:3]
            if group == str(pgid) and state != "Z":
                alive.append(int(entry.name))
    return alive


def _stat(entry: Path) -> list[str]:
    """Return a process's state, parent and group, or blanks for one gone since it was listed."""
    try:
        said = (entry / "stat").read_text()
    except OSError:
        return ["", "", ""]
    # The command's name, in brackets, may hold anything: the fields follow its last bracket.
    return said.rsplit(")", 1)[1].split()


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
