"""The launcher: its options, and each resource limit it sets holding in the program it becomes.

The launcher runs by path, as the worker runs it, in front of a small Python program that reports
its limits or breaks one of them.
"""

import os
import resource
import runpy
import signal
import subprocess
import sys

import pytest
from worker.artifactr_files_worker.launcher import Rlimits, parse
from worker.artifactr_files_worker.service import LAUNCHER

LIMITS = Rlimits(cpu=5, memory=512 * 1024 * 1024, file_size=1024 * 1024, open_files=32)


def launch(code: str, limits: Rlimits = LIMITS) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-I", "-S", str(LAUNCHER), *limits.arguments()]
    return subprocess.run(
        [*command, "--", sys.executable, "-I", "-c", code],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_the_options_round_trip_and_the_program_follows_them() -> None:
    assert parse([*LIMITS.arguments(), "--", "wordcraft-cli", "mcp", "--author", "Ada"]) == (
        LIMITS,
        ["wordcraft-cli", "mcp", "--author", "Ada"],
    )
    assert parse([*LIMITS.arguments(), "wordcraft-cli"]) == (LIMITS, ["wordcraft-cli"])


@pytest.mark.parametrize(
    "argv",
    [
        [*LIMITS.arguments(), "--"],
        [*LIMITS.arguments()],
        ["--cpu", "0", *LIMITS.arguments()[2:], "--", "x"],
        ["--cpu", "many", *LIMITS.arguments()[2:], "--", "x"],
        [*LIMITS.arguments()[2:], "--", "x"],
    ],
    ids=["nothing after --", "no program", "no cpu time", "cpu time in words", "no cpu option"],
)
def test_a_launch_without_a_program_or_with_a_bad_limit_is_refused(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        parse(argv)
    assert refused.value.code == 2
    assert "usage: launcher" in capsys.readouterr().err


def test_the_program_runs_under_every_limit_with_core_dumps_off() -> None:
    code = (
        "import resource as r; print(*[r.getrlimit(k) for k in "
        "(r.RLIMIT_CPU, r.RLIMIT_AS, r.RLIMIT_FSIZE, r.RLIMIT_NOFILE, r.RLIMIT_CORE)])"
    )
    done = launch(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(") (") == [
        "(5, 6",
        f"{LIMITS.memory}, {LIMITS.memory}",
        f"{LIMITS.file_size}, {LIMITS.file_size}",
        "32, 32",
        "0, 0)\n",
    ]


def test_a_limit_is_never_raised_past_the_hard_limit_it_inherits() -> None:
    outer = Rlimits(cpu=5, memory=LIMITS.memory, file_size=LIMITS.file_size, open_files=16)
    inner = [sys.executable, "-I", "-S", str(LAUNCHER), *LIMITS.arguments(), "--"]
    probe = "import resource as r; print(r.getrlimit(r.RLIMIT_NOFILE))"
    done = launch(
        f"import os, sys; os.execv({sys.executable!r}, {[*inner, sys.executable, '-c', probe]!r})",
        outer,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "(16, 16)\n"


def test_cpu_time_past_the_limit_stops_the_program() -> None:
    done = launch("while True: pass", Rlimits(1, LIMITS.memory, LIMITS.file_size, 32))
    assert done.returncode in (-signal.SIGXCPU, -signal.SIGKILL)


def test_memory_past_the_limit_is_refused() -> None:
    done = launch("x = bytearray(1024 * 1024 * 1024)")
    assert done.returncode == 1
    assert "MemoryError" in done.stderr


def test_a_file_past_the_limit_is_refused() -> None:
    done = launch("import tempfile; tempfile.TemporaryFile().write(bytes(2 * 1024 * 1024))")
    assert done.returncode == 1
    assert "File too large" in done.stderr


def test_open_files_past_the_limit_are_refused() -> None:
    done = launch("import os\nwhile True: os.open(os.devnull, os.O_RDONLY)")
    assert done.returncode == 1
    assert "Too many open files" in done.stderr


def test_a_program_that_isnt_there_fails_to_launch() -> None:
    command = [sys.executable, "-I", "-S", str(LAUNCHER), *LIMITS.arguments()]
    done = subprocess.run(
        [*command, "--", "/nonexistent/wordcraft-cli"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 1
    assert "FileNotFoundError" in done.stderr


class Recorded:
    """Stands in for ``setrlimit`` and ``execvp``: keeps what the launcher asked for."""

    def __init__(self, hard: int) -> None:
        self.hard = hard
        self.limits: dict[int, tuple[int, int]] = {}
        self.program: list[str] = []

    def getrlimit(self, kind: int) -> tuple[int, int]:
        return (self.hard, self.hard)

    def setrlimit(self, kind: int, limits: tuple[int, int]) -> None:
        self.limits[kind] = limits

    def execvp(self, file: str, args: list[str]) -> None:
        self.program = [file, *args[1:]]


UNLIMITED = {
    resource.RLIMIT_CPU: (5, 6),
    resource.RLIMIT_AS: (LIMITS.memory, LIMITS.memory),
    resource.RLIMIT_FSIZE: (LIMITS.file_size, LIMITS.file_size),
    resource.RLIMIT_NOFILE: (32, 32),
    resource.RLIMIT_CORE: (0, 0),
}
CAPPED = {
    resource.RLIMIT_CPU: (5, 6),
    resource.RLIMIT_AS: (16, 16),
    resource.RLIMIT_FSIZE: (16, 16),
    resource.RLIMIT_NOFILE: (16, 16),
    resource.RLIMIT_CORE: (0, 0),
}


@pytest.mark.parametrize(
    ("hard", "expected"),
    [(resource.RLIM_INFINITY, UNLIMITED), (16, CAPPED)],
    ids=["under no hard limit", "under a hard limit of 16"],
)
def test_the_launcher_sets_each_limit_then_becomes_the_program(
    monkeypatch: pytest.MonkeyPatch, hard: int, expected: dict[int, tuple[int, int]]
) -> None:
    # In this process, with the system calls recorded; the runs above make them for real.
    recorded = Recorded(hard)
    for name in ("getrlimit", "setrlimit"):
        monkeypatch.setattr(resource, name, getattr(recorded, name))
    monkeypatch.setattr(os, "execvp", recorded.execvp)
    monkeypatch.setattr(sys, "argv", ["launcher.py", *LIMITS.arguments(), "--", "app", "mcp"])
    runpy.run_path(str(LAUNCHER), run_name="__main__")
    assert recorded.limits == expected
    assert recorded.program == ["app", "mcp"]
