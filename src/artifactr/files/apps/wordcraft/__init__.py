"""WordCraft: the App port over ``wordcraft-cli mcp`` on stdio, one process per call (RFC-0003).

Needs the ``worker`` extra (``pip install 'artifactr-files-ai[worker]'``), which brings the
official MCP SDK, and a ``wordcraft-cli`` from WordCraft's release. Each call is a job
(:func:`run_job`): a fresh process in an empty temporary directory, the file opened from bytes,
the batch run, the result saved inside that directory and read back, and the whole process group
killed and the directory wiped when it ends. WordCraft confines no path itself, so a job refuses
``file.*``, ``insert.picture``, exports and any parameter that names a path before WordCraft runs.

Choosing an adapter:

- :class:`Subprocess` spawns ``wordcraft-cli`` on this machine: for tests, development and
  trusted files. It is not a sandbox.
- :class:`~artifactr.files.apps.worker.Worker` sends each call over HTTP to the sandboxed
  worker service, which runs the same :func:`run_job`: for everything else, and always for the
  files people upload.
- :class:`~artifactr.files.apps.fake.FakeApp` needs no WordCraft at all.

::

    from artifactr.files.apps.wordcraft import Subprocess

    app = Subprocess(cli="/opt/wordcraft/bin/wordcraft-cli")
    replace = AppCommand(command="edit.replaceAll", params={"text": "Draft", "with": "Final"})
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
