"""WordCraft's local adapter: a fresh ``wordcraft-cli mcp`` process for every call (RFC-0003).

:class:`Subprocess` runs each App call as one job (:func:`~artifactr.files.apps.wordcraft.run_job`)
in a new process and directory, both gone when the call ends, so calls may run side by side. It
is for tests and trusted files, not a sandbox: hostile files go to the worker.
"""

import hashlib
import shutil
from collections.abc import Mapping, Sequence

from artifactr.files.apps.jobs import DEFAULT_LIMITS, Job, JobAdapter, JobResult, Limits
from artifactr.files.apps.wordcraft._runner import run_job
from artifactr.files.core.app_port import EDIT_DEADLINE, Source


class WordCraftSubprocess(JobAdapter):
    """WordCraft run locally, one ``wordcraft-cli mcp`` process per call, over MCP on stdio.

    Each call is stateless (bytes in, bytes out; a source may also be a binary file, read from
    its start) and has a deadline, after which the process and everything it started are killed.
    Failures are typed: ``refused`` (with WordCraft's reason, or because a command names a path),
    ``timeout``, ``crashed`` and ``too_large``; a file that isn't a .docx package is
    :class:`~artifactr.files.core.errors.UnsafeFile`. The base maps each call to a job, which
    :func:`~artifactr.files.apps.wordcraft.run_job` runs.

    Args:
        command: The program and its first arguments; ``mcp`` and ``--author`` follow them.
        cli: The path to ``wordcraft-cli``, a shorthand for ``command=[cli]``; it wins if both
            are given.
        env: Variables for the app, over a minimal environment (``PATH``, ``HOME``...).
        limits: The largest file in or out, and the most the app may write on stdout.
        build: The app's build for provenance; by default the SHA-256 of the program's file,
            or None where the program isn't found.
        deadline: Seconds a listing of commands may take (the port gives it no deadline).
    """

    def __init__(
        self,
        command: Sequence[str] = ("wordcraft-cli",),
        *,
        cli: str | None = None,
        env: Mapping[str, str] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        build: str | None = None,
        deadline: float = EDIT_DEADLINE,
    ) -> None:
        self.command: tuple[str, ...] = (cli,) if cli is not None else tuple(command)
        self.env: dict[str, str] = dict(env or {})
        self.limits = limits
        self.build = build if build is not None else _digest(self.command[0])
        self.deadline = deadline

    @property
    def name(self) -> str:
        """The app's short name."""
        return "wordcraft"

    async def run(self, job: Job, source: Source, deadline: float) -> JobResult:
        """Return what one job gives, run by a fresh ``wordcraft-cli mcp`` here."""
        result = await run_job(
            self.command,
            job,
            source,
            deadline=deadline,
            env=self.env,
            limits=self.limits,
            build=self.build,
        )
        return JobResult.of(result)


Subprocess = WordCraftSubprocess
"""The name RFC-0003 gives the local adapter."""


def _digest(program: str) -> str | None:
    path = shutil.which(program)
    if path is None:
        return None
    with open(path, "rb") as binary:
        return "sha256:" + hashlib.file_digest(binary, "sha256").hexdigest()
