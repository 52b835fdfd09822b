"""A job's processes: killed with their group, and waited for until every one of them is gone.

Each app runs a job's program in a session of its own, so in a process group whose id is the
program's pid. Killing the group with SIGKILL only starts its end: each process is gone when the
kernel has torn it down (a zombie is gone: it holds no memory and no directory). A job that
returned before then would leave a process holding its memory and its directory after the
answer, so :func:`reap` returns only once every process of the group is gone, and a process
still alive :data:`GRACE` seconds after the kill is a crash, never an answer.

It runs on asyncio's loop, as LibreOffice's adapter does and as WordCraft's does under anyio's
asyncio backend. It bounds its own wait, so a caller may shield it from being cancelled, as
WordCraft's does: a job past its deadline still returns only once its processes are gone.
"""

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import Final

from artifactr.files.core.errors import AppCrashed

GRACE: Final = 10.0
"""Seconds a killed job's processes may take to be gone: an office's teardown, on a busy machine."""

POLL: Final = 0.005
"""Seconds of the first wait for a killed job's processes to be gone; each next wait doubles."""

POLL_MAX: Final = 0.1
"""The longest wait between two looks at whether a killed job's processes are gone."""

PROC: Final = Path("/proc")
"""Where the kernel lists processes, to tell a live process from a zombie."""


async def reap(
    pgid: int,
    leader_end: Callable[[], Awaitable[object]],
    *,
    what: str,
    grace: float = GRACE,
    marker: str | None = None,
    known: "Known" = frozenset(),
) -> None:
    """Kill the process group ``pgid``; return once every process of it is gone.

    The group is killed, and ``leader_end`` awaited: the end of the group's leader (the process
    whose pid is ``pgid``), its pipes' closing included, which a survivor may hold open. Until
    every other process is gone too, the group is killed again, and looked at again after a
    wait that doubles, from :data:`POLL` up to :data:`POLL_MAX`.

    Args:
        pgid: The group: its leader leads a session of its own, so its pid is the group's id.
        leader_end: Waits for the leader's end: ``process.wait`` of asyncio's process, or
            ``process.aclose`` of anyio's (which closes this side's pipes first).
        what: The app, as the error names it.
        grace: Seconds every process of the group may take to be gone once killed.
        marker: Text (the job's directory) that makes a process whose command line names it the
            job's too, though a sandbox gave it a session of its own: it is killed and waited
            for alike.
        known: The job's processes found earlier (:func:`snapshot`), when their command lines
            still named ``marker``: waited for too, with their sessions.

    Raises:
        AppCrashed: If a process of the job is still alive ``grace`` seconds after the kill;
            the error names each one.
    """
    # Each process of the job is known before the kill: one being torn down no longer shows
    # its command line, so a look after the kill can't tell it by ``marker`` any more.
    known = known | _processes(pgid, marker, known)
    _kill(pgid, [pid for pid, _, _ in known])
    pause = POLL
    try:
        async with asyncio.timeout(grace):
            await leader_end()
            while alive := _alive(pgid, marker, known):
                _kill(pgid, alive)
                await asyncio.sleep(pause)
                pause = min(pause * 2, POLL_MAX)
    except TimeoutError:
        alive = _alive(pgid, marker, known)
        raise AppCrashed(
            f"{what} was killed, but its processes {alive} were still alive {grace:g} s later"
        ) from None


async def to_the_end[T](work: Awaitable[T]) -> T:
    """Return what ``work`` gives, awaited to its end even if the caller is cancelled meanwhile.

    A job's processes are reaped whatever happens: a cancellation that reached the reaping
    (an adapter closed while a job was ending) would leave them alive and their pipes open. On a
    cancellation the work still runs to its end, then the cancellation goes on; what the work
    raised then is dropped, as the caller no longer waits for an answer.
    """
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])
        with suppress(Exception):
            task.result()
        raise


def _kill_group(pgid: int) -> None:
    """Kill the job's whole process group; its leader's pid is the group's id."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


type Known = frozenset[tuple[int, str, str]]
"""A job's processes as found before the kill: each one's pid, start time and session."""


def snapshot(pgid: int, marker: str | None) -> Known:
    """Return the job's live processes now, for :func:`reap` to wait for later."""
    return _processes(pgid, marker)


def _alive(pgid: int, marker: str | None = None, known: Known = frozenset()) -> list[int]:
    """Return the pids of the job's live processes: the group's, naming ``marker``, or known.

    A known process is its pid and start time, so a pid the kernel gave another process since
    is not taken for it; a known process's session, other than the group's, is a sandbox's
    session of its own, and every process in it is the job's.
    """
    return sorted(pid for pid, _, _ in _processes(pgid, marker, known))


def _processes(pgid: int, marker: str | None, known: Known = frozenset()) -> Known:
    """Return the job's live processes, each as its pid, start time and session."""
    # A process being torn down reads an empty command line, but keeps its pid, start time and
    # session until it is a zombie. A killed job's children whose parent is gone may be zombies
    # for as long as nobody reaps them (a worker that is pid 1 never does): a zombie is gone.
    ids = {(pid, started) for pid, started, _ in known}
    sessions = {session for _, _, session in known} - {str(pgid)}
    found: set[tuple[int, str, str]] = set()
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            state, group, session, started = _stat(entry)
            pid = int(entry.name)
            if state not in {"", "Z"} and (
                group == str(pgid)
                or (pid, started) in ids
                or session in sessions
                or _names(entry, marker)
            ):
                found.add((pid, started, session))
    return frozenset(found)


def _stat(entry: Path) -> tuple[str, str, str, str]:
    """Return a process's state, group, session and start time, or blanks for one gone."""
    try:
        said = (entry / "stat").read_text()
    except OSError:
        return ("", "", "", "")
    # The command's name, in brackets, may hold anything: the fields follow its last bracket.
    fields = said.rsplit(")", 1)[1].split()
    return (fields[0], fields[2], fields[3], fields[19])


def _names(entry: Path, marker: str | None) -> bool:
    """Return whether a process's command line names ``marker``."""
    if marker is None:
        return False
    try:
        return marker.encode() in (entry / "cmdline").read_bytes()
    except OSError:
        return False


def _kill(pgid: int, pids: list[int]) -> None:
    """Kill the group again, and each of the job's processes outside it."""
    _kill_group(pgid)
    for pid in pids:
        with suppress(ProcessLookupError, PermissionError):
            if os.getpgid(pid) != pgid:
                os.kill(pid, signal.SIGKILL)
