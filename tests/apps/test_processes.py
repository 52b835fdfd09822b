"""A job's process group, killed and waited for until every process of it is gone.

The groups are real: a shell that starts children in its group, as an office or an app does, and
a process of a session of its own that names the job, as a sandbox's does. A process the kernel
can't tear down (one stuck in I/O) is played by a kill that never lands.
"""

import asyncio
import os
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

import pytest

from artifactr.files.apps import processes
from artifactr.files.core.errors import AppCrashed
from tests.pids import alive, kill

CHILDREN = "sleep 600 >/dev/null & echo $!; sleep 600 >/dev/null & echo $!; exec >&-; wait"
"""A shell that starts two children in its group, says their pids, and waits for them."""


async def group(script: str) -> tuple[asyncio.subprocess.Process, list[int]]:
    """Start ``script`` in a session of its own; return it and the pids it says, one a line."""
    shell = await asyncio.create_subprocess_exec(
        "sh", "-c", script, stdout=subprocess.PIPE, start_new_session=True
    )
    assert shell.stdout is not None
    # None of the children holds the pipe: the leader's end, awaited first, waits for none of them.
    return shell, [int(line) for line in (await shell.stdout.read()).split()]


async def test_a_killed_group_is_reaped_only_once_every_process_of_it_is_gone() -> None:
    shell, children = await group(CHILDREN)
    assert all(alive(pid) for pid in children)

    await processes.reap(shell.pid, shell.wait, what="sh")

    assert shell.returncode == -signal.SIGKILL
    assert [pid for pid in children if alive(pid)] == []


async def test_a_process_of_a_session_of_its_own_that_names_the_job_is_reaped_too(
    tmp_path: Path,
) -> None:
    job = str(tmp_path / "job")
    leader = await asyncio.create_subprocess_exec("sleep", "600", start_new_session=True)
    sealed = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(600)", job, start_new_session=True
    )
    try:
        await processes.reap(leader.pid, leader.wait, what="sleep", marker=job)

        assert not alive(sealed.pid)
    finally:
        with suppress(ProcessLookupError):
            sealed.kill()
        await sealed.wait()


async def test_a_process_the_kill_never_reaches_is_a_crash_that_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shell, children = await group(CHILDREN)
    shell.kill()
    await shell.wait()
    monkeypatch.setattr(processes, "_kill_group", lambda pgid: None)
    try:
        with pytest.raises(AppCrashed) as crashed:
            await processes.reap(shell.pid, shell.wait, what="sh", grace=0.2)

        assert crashed.value.reason == (
            f"sh was killed, but its processes {sorted(children)} were still alive 0.2 s later"
        )
        assert all(alive(pid) for pid in children)
    finally:
        for pid in children:
            kill(pid)


def stat(pid: int, name: str, state: str, group: int, started: int = 100) -> str:
    """Return a line of ``/proc/<pid>/stat``: its state, group, session (the group's, as a
    leader of its own session's) and start time (the 22nd field)."""
    middle = " ".join(["0"] * 15)  # the terminal, flags, faults and times between
    return f"{pid} ({name}) {state} 1 {group} {group} {middle} {started} 0 0\n"


def test_a_group_of_zombies_is_gone() -> None:
    # A worker that is pid 1 never reaps a killed office's orphans: they stay zombies.
    zombie = subprocess.Popen(["true"], start_new_session=True)
    try:
        os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)
        os.killpg(zombie.pid, 0)  # the group is still there
        assert processes._alive(zombie.pid) == []
    finally:
        zombie.wait()


def test_only_the_group_s_live_processes_are_alive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    leader = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        group = leader.pid
        stats = {
            "self": None,  # not a process
            "101": None,  # gone since it was listed
            "102": stat(102, "soffice.bin", "R", group),
            "103": stat(103, "a) b", "S", group),  # a name with a bracket
            "104": stat(104, "oosplash", "Z", group),  # a zombie
            "105": stat(105, "other", "S", 7),  # another group
            # A sandbox's own session being torn down: its command line reads empty.
            "107": stat(107, "soffice.bin", "R", 9, started=4242),
        }
        for name, said in stats.items():
            (tmp_path / name).mkdir()
            if said is not None:
                (tmp_path / name / "stat").write_text(said)
        # A sandbox's own session is the job's too when its command line names the job.
        (tmp_path / "106").mkdir()
        (tmp_path / "106" / "stat").write_text(stat(106, "soffice.bin", "S", 9))
        (tmp_path / "106" / "cmdline").write_bytes(b"soffice.bin\x00-env:file:///jobs/lo-1\x00")
        (tmp_path / "107" / "cmdline").write_bytes(b"")
        monkeypatch.setattr(processes, "PROC", tmp_path)
        assert sorted(processes._alive(group)) == [102, 103]
        # 105's command line can't be read (it is gone): it names nothing.
        assert sorted(processes._alive(group, "/jobs/lo-1")) == [102, 103, 106]
        # One known before the kill is the job's still, though its command line names nothing;
        # not a process that has its pid since (another start time).
        assert 107 in processes._alive(group, "/jobs/lo-1", frozenset({(107, "4242", "1")}))
        assert 107 not in processes._alive(group, "/jobs/lo-1", frozenset({(107, "1", "1")}))
        # And so is every process of a known process's session: the sandbox's own.
        assert 107 in processes._alive(group, "/jobs/lo-1", frozenset({(108, "1", "9")}))
    finally:
        leader.kill()
        leader.wait()


async def test_work_to_the_end_runs_to_its_end_when_its_caller_is_cancelled() -> None:
    gate, ended = asyncio.Event(), asyncio.Event()

    async def ending() -> str:
        await gate.wait()
        ended.set()
        return "ended"

    caller = asyncio.ensure_future(processes.to_the_end(ending()))
    await asyncio.sleep(0)
    caller.cancel()
    await asyncio.sleep(0)
    # Cancelled while the work waits: the caller still waits for the work's end.
    assert not caller.done()
    gate.set()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert ended.is_set()


async def test_work_to_the_end_gives_its_answer_and_its_failure() -> None:
    async def answer() -> int:
        return 7

    async def failure() -> int:
        raise AppCrashed("its processes [1] were still alive")

    assert await processes.to_the_end(answer()) == 7
    with pytest.raises(AppCrashed, match="still alive"):
        await processes.to_the_end(failure())


async def test_what_the_work_raised_after_its_caller_was_cancelled_is_dropped() -> None:
    gate = asyncio.Event()

    async def failing() -> None:
        await gate.wait()
        raise AppCrashed("its processes [1] were still alive")

    caller = asyncio.ensure_future(processes.to_the_end(failing()))
    await asyncio.sleep(0)
    caller.cancel()
    await asyncio.sleep(0)
    gate.set()
    # The cancellation goes on; the failure is retrieved, so nothing warns of it unread.
    with pytest.raises(asyncio.CancelledError):
        await caller
