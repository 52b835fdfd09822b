"""WordCraft: the App port over ``wordcraft-cli mcp`` on stdio, one process per call (RFC-0003).

Needs the ``worker`` extra and a ``wordcraft-cli``. Each call is a job (:func:`run_job`): a fresh
process in an empty directory, killed with its group and the directory wiped when it ends; a
command that could reach the file system is refused before WordCraft runs. :class:`Subprocess`
runs it on this machine, for trusted files: it is not a sandbox. Files people upload go to the
sandboxed worker (:class:`~artifactr.files.apps.worker.Worker`)::

    app = Subprocess(cli="/opt/wordcraft/bin/wordcraft-cli")
    edited = await app.apply(source, [replace], author="Ada Lovelace")
"""

from artifactr.files.apps.jobs import (
    MAX_FILE,
    MAX_REPLY,
    ApplyJob,
    CommandsJob,
    InspectJob,
    Job,
    JobResult,
    Limits,
    RenderJob,
)
from artifactr.files.apps.wordcraft._runner import run_job
from artifactr.files.apps.wordcraft.subprocess import Subprocess, WordCraftSubprocess

__all__ = [
    "MAX_FILE",
    "MAX_REPLY",
    "ApplyJob",
    "CommandsJob",
    "InspectJob",
    "Job",
    "JobResult",
    "Limits",
    "RenderJob",
    "Subprocess",
    "WordCraftSubprocess",
    "run_job",
]
