"""Launcher: set a job's resource limits, then become the app (RFC-0003).

The worker runs every job as ``python -I -S launcher.py --cpu N ... -- wordcraft-cli mcp``. The
launcher lowers its own limits with :func:`resource.setrlimit` and then replaces itself with the
app (:func:`os.execvp`), so the app starts under them, in the job's own process group, with the
same pid the job runner kills. It imports nothing but the standard library, since it runs by
path, in the job's empty directory, before the app.

The limits (each applies to the app's process and is inherited by anything it starts):

- ``--cpu``: seconds of CPU time (``RLIMIT_CPU``); past it the kernel sends ``SIGXCPU``, and a
  second later ``SIGKILL``. A job that spins on every core is stopped before its deadline.
- ``--memory``: bytes of address space (``RLIMIT_AS``); an allocation past it fails.
- ``--file-size``: bytes of any one file the app writes (``RLIMIT_FSIZE``); a write past it
  gets ``SIGXFSZ``.
- ``--open-files``: file descriptors (``RLIMIT_NOFILE``).

Core dumps are always off (``RLIMIT_CORE`` 0): a crash writes nothing to the job's directory.
A limit is only ever lowered: one above the current hard limit is clamped to it.
"""

import argparse
import os
import resource
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn


@dataclass(frozen=True, slots=True)
class Rlimits:
    """The limits a job's app runs under."""

    cpu: int
    """Seconds of CPU time."""
    memory: int
    """Bytes of address space."""
    file_size: int
    """Bytes of any one file the app writes."""
    open_files: int
    """File descriptors."""

    def arguments(self) -> list[str]:
        """Return the limits as the launcher's options."""
        return [
            "--cpu",
            str(self.cpu),
            "--memory",
            str(self.memory),
            "--file-size",
            str(self.file_size),
            "--open-files",
            str(self.open_files),
        ]


def parse(argv: Sequence[str]) -> tuple[Rlimits, list[str]]:
    """Return the limits and the program to run, from the launcher's arguments.

    Raises:
        SystemExit: If an option is missing or not a positive number, or no program follows
            ``--`` (status 2, with the usage on stderr).
    """
    parser = argparse.ArgumentParser(
        prog="launcher", description="Set resource limits, then run a program."
    )
    for option in ("--cpu", "--memory", "--file-size", "--open-files"):
        parser.add_argument(option, type=_positive, required=True)
    parser.add_argument("program", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    program = [str(word) for word in options.program]
    if program[:1] == ["--"]:
        program = program[1:]
    if not program:
        parser.error("no program to run: give it after --")
    limits = Rlimits(
        cpu=options.cpu,
        memory=options.memory,
        file_size=options.file_size,
        open_files=options.open_files,
    )
    return limits, program


def _positive(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def lower(kind: int, soft: int, hard: int | None = None) -> None:
    """Lower one limit of this process: never above its current hard limit."""
    _, ceiling = resource.getrlimit(kind)
    wanted = soft if hard is None else hard
    if ceiling != resource.RLIM_INFINITY:
        wanted = min(wanted, ceiling)
    resource.setrlimit(kind, (min(soft, wanted), wanted))


def restrict(limits: Rlimits) -> None:
    """Apply the limits to this process, and turn core dumps off."""
    # The hard CPU limit a second past the soft one: SIGXCPU first, then SIGKILL.
    lower(resource.RLIMIT_CPU, limits.cpu, limits.cpu + 1)
    lower(resource.RLIMIT_AS, limits.memory)
    lower(resource.RLIMIT_FSIZE, limits.file_size)
    lower(resource.RLIMIT_NOFILE, limits.open_files)
    lower(resource.RLIMIT_CORE, 0)


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Set the limits, then replace this process with the program."""
    limits, program = parse(sys.argv[1:] if argv is None else argv)
    restrict(limits)
    os.execvp(program[0], program)


if __name__ == "__main__":
    main()
