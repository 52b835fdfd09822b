"""Jobs: each call of the App port as one value, and the job adapters' one base (RFC-0003).

A :data:`Job` is one call (an edit, an inspection, a render or a listing of commands) as a value
a worker can receive. :class:`JobAdapter` maps the port's calls to jobs and their results back;
each adapter says only how a job runs (:meth:`JobAdapter.run`): locally
(:class:`~artifactr.files.apps.wordcraft.Subprocess`) or in the sandboxed worker
(:class:`~artifactr.files.apps.worker.Worker`).
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from artifactr.files.core.app_port import (
    EDIT_DEADLINE,
    RENDER_DEADLINE,
    AppCommand,
    CommandSpec,
    Edited,
    Inspection,
    Source,
)
from artifactr.files.core.errors import AppCrashed

MAX_FILE: Final = 64 * 1024 * 1024
"""Bytes a file may have, going in or read back after saving, by default."""

MAX_REPLY: Final = 64 * 1024 * 1024
"""Bytes the app may write on stdout in one job, by default."""


# ─── jobs ─────────────────────────────────────────────────────────────────────


class _Job(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    author: str | None = None
    """Who tracked changes, comments and ``cp:lastModifiedBy`` are attributed to."""


class ApplyJob(_Job):
    """Run a batch on a file, save it, and inspect the saved file."""

    kind: Literal["apply"] = "apply"
    """The job's kind."""
    commands: tuple[AppCommand, ...] = ()
    """The batch, in order; it stops at the first command the app refuses."""


class InspectJob(_Job):
    """Read a file: outline, text, review and pages."""

    kind: Literal["inspect"] = "inspect"
    """The job's kind."""


class RenderJob(_Job):
    """Render one page of a file as a PNG."""

    kind: Literal["render"] = "render"
    """The job's kind."""
    page: int = 1
    """The page, from 1."""
    scale: float = 1.0
    """Pixels per point; WordCraft clamps it to 0.1 to 4."""


class CommandsJob(_Job):
    """List the app's commands."""

    kind: Literal["commands"] = "commands"
    """The job's kind."""
    query: str = ""
    """A filter on the commands' ids, labels and places in the ribbon; empty for all."""


Job = Annotated[ApplyJob | InspectJob | RenderJob | CommandsJob, Field(discriminator="kind")]
"""One call of the App port, as the worker receives it (the file travels beside it)."""


@dataclass(frozen=True)
class Limits:
    """What a job may read and write, in bytes."""

    max_file: int = MAX_FILE
    """The largest file, going in or read back after saving."""
    max_reply: int = MAX_REPLY
    """The most the app may write on stdout in one job."""


DEFAULT_LIMITS: Final = Limits()
"""The limits a job has unless it is given others."""


# ─── results ──────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class JobResult:
    """What a job gave, whatever its kind; each kind fills what the port returns for it."""

    content: bytes = b""
    """The saved file (an edit) or the PNG (a render); empty otherwise."""
    inspection: Inspection | None = None
    """What the app read: in the file (an inspection), or in the saved file (an edit)."""
    commands: tuple[CommandSpec, ...] | None = None
    """The app's catalog (a listing of commands)."""

    @classmethod
    def of(cls, value: Edited | Inspection | bytes | tuple[CommandSpec, ...]) -> "JobResult":
        """Return the result holding what :func:`~artifactr.files.apps.wordcraft.run_job` gave."""
        if isinstance(value, Edited):
            return cls(content=value.content, inspection=value.inspection)
        if isinstance(value, Inspection):
            return cls(inspection=value)
        if isinstance(value, bytes):
            return cls(content=value)
        return cls(commands=value)


# ─── the adapters' base ───────────────────────────────────────────────────────


class JobAdapter(ABC):
    """The App port over jobs: each call is one job, run by :meth:`run`.

    Every call is stateless (bytes in, bytes out; a source may also be a binary file, read from
    its start) and has a deadline, after which the app and everything it started are stopped.
    Failures are typed: ``refused`` (with WordCraft's reason, or because a command names a
    path), ``timeout``, ``crashed`` and ``too_large``; a file that isn't a sound .docx package
    is :class:`~artifactr.files.core.errors.UnsafeFile`, with its reason.
    """

    deadline: float
    """Seconds a listing of commands may take (the port gives it no deadline)."""

    @property
    @abstractmethod
    def name(self) -> str:
        """The app's short name."""
        ...

    @abstractmethod
    async def run(self, job: Job, source: Source, deadline: float) -> JobResult:
        """Return what one job gives: see :meth:`apply` for its failures."""
        ...

    async def apply(
        self,
        source: Source,
        commands: Sequence[AppCommand],
        *,
        deadline: float = EDIT_DEADLINE,
        author: str | None = None,
    ) -> Edited:
        """Run a batch of commands on a file; return the saved file, inspected.

        ``author`` (trimmed; blank means WordCraft's default) is passed as ``--author``, so
        tracked changes, comments and ``cp:lastModifiedBy`` name the acting person or agent. The
        inspection is of the file as saved, opened again in the same process.

        Raises:
            UnsafeFile: If the file is not a .docx package, or a hostile one (a zip bomb, a
                DTD...), refused before the app starts.
            AppRefused: If a command names a path, or WordCraft refuses one (the batch stops).
            AppTimeout: If the deadline passes, or a busy worker stays busy until it does.
            AppCrashed: If WordCraft dies, or the worker can't be reached or answers nonsense.
            AppTooLarge: If the file, the saved file or a reply is over its limit.
        """
        job = ApplyJob(commands=tuple(commands), author=author)
        result = await self.run(job, source, deadline)
        return Edited(content=result.content, inspection=_inspection(result))

    async def inspect(self, source: Source, *, deadline: float = EDIT_DEADLINE) -> Inspection:
        """Return what WordCraft reads in a file: outline, text, review, pages, fingerprint.

        Raises:
            UnsafeFile: As :meth:`apply`.
            AppFailure: As :meth:`apply`.
        """
        return _inspection(await self.run(InspectJob(), source, deadline))

    async def render(
        self, source: Source, page: int, *, scale: float = 1.0, deadline: float = RENDER_DEADLINE
    ) -> bytes:
        """Return one page (from 1) as a PNG.

        Raises:
            AppRefused: If there is no such page.
            UnsafeFile: As :meth:`apply`.
            AppFailure: As :meth:`apply`.
        """
        return (await self.run(RenderJob(page=page, scale=scale), source, deadline)).content

    async def commands(self, query: str = "") -> Sequence[CommandSpec]:
        """Return WordCraft's commands whose id, label or place in the ribbon contains ``query``.

        Raises:
            AppFailure: As :meth:`apply`.
        """
        result = await self.run(CommandsJob(query=query), b"", self.deadline)
        if result.commands is None:
            raise AppCrashed("the job's result holds no catalog")
        return result.commands


def _inspection(result: JobResult) -> Inspection:
    if result.inspection is None:
        raise AppCrashed("the job's result holds no inspection")
    return result.inspection
