"""LibreOffice's driver: one job, run by the system Python with Debian's python3-uno (ADR-0008).

The adapter never imports ``uno``: it writes the office's settings (``job.json``) into a fresh
directory and runs ``/usr/bin/python3 <this directory> <job directory>``, then, once it has a
job for it, writes the file there and the job as one JSON line on stdin; the directory's modules
import only the standard library, ``uno`` and each other, and run under Python 3.11. The driver
starts ``soffice --headless`` on a fresh profile (``desktop.py``), warms it up where
``job.json`` says so (``warmup.py``), writes ``{"ready": true}`` (with ``"cold"``: why, if the
warm-up failed) once its office answers, then does the job named by ``op`` and writes one JSON
line to stdout: ``{"ok": true, "result": ...}`` or ``{"ok": false, "kind": "refused" |
"crashed", "reason": ...}`` (an office that can't start gets only that line). The adapter kills
the whole process group as soon as it has the line, or at the deadline.

Jobs: ``inspect`` (outline, text, review, pages; ``writer_inspect.py``), ``apply`` (a batch of
commands, saved to ``out.docx`` only if every one succeeds; ``writer_apply.py``) and ``pdf``
(``out.pdf`` and its page count; ``export.py``: given a ``page``, it first exports that page
alone as ``page.pdf`` and writes an early line, ``{"early": {"pages": N, "page": P}}``, before
its reply). A workbook's jobs (``"format": "xlsx"``) are
``calc_inspect.py`` and ``calc_apply.py`` (saved as ``out.xlsx``), a deck's (``"pptx"``)
``impress_inspect.py`` and ``impress_apply.py`` (``out.pptx``).
"""

import json
import os
import select
import sys
import traceback

import calc_apply
import calc_inspect
import export
import impress_apply
import impress_inspect
import warmup
import writer_apply
import writer_inspect
from desktop import Refused, author, message, start, user_profile

JOBS = {"inspect": writer_inspect.run, "apply": writer_apply.run, "pdf": export.run}
"""What runs each job, by its ``op``."""

FORMATS = {
    "xlsx": {"inspect": calc_inspect.run, "apply": calc_apply.run, "pdf": calc_inspect.pdf},
    "pptx": {
        "inspect": impress_inspect.run,
        "apply": impress_apply.run,
        "pdf": impress_inspect.pdf,
    },
}
"""The jobs on a workbook and on a deck (``calc_*.py``, ``impress_*.py``), by the job's
``format``; a Writer document's are :data:`JOBS`."""


def job_waiting():
    """Return whether the job is already on stdin, waiting to be read."""
    return bool(select.select([sys.stdin], [], [], 0)[0])


def main():
    """Run the job in the directory named on the command line; print one JSON line."""
    directory = sys.argv[1]
    with open(os.path.join(directory, "job.json")) as spec:
        job = json.load(spec)
    try:
        context, desktop = start(job, directory)
        # A pooled office warms up on a document of its own, says it is ready, and only then
        # reads its job on stdin: a pool starts offices ahead.
        cold = warmup.warm(desktop, directory, job.get("warm", []), job_waiting)
        # What every job needs is made before it comes: the modules are imported above, the
        # bridge is up, and the user profile the job's author is written to is open.
        profile = user_profile(context)
        said = {"ready": True, "cold": cold} if cold else {"ready": True}
        sys.stdout.write(json.dumps(said) + "\n")
        sys.stdout.flush()
        job.update(json.loads(sys.stdin.readline() or "{}"))
        author(profile, job["author"])
        jobs = FORMATS.get(job.get("format", "docx"), JOBS)
        reply = {"ok": True, "result": jobs[job["op"]](job, directory, context, desktop)}
    except Refused as refusal:
        reply = {"ok": False, "kind": "refused", "reason": str(refusal)}
    except Exception as error:
        traceback.print_exc()
        reply = {"ok": False, "kind": "crashed", "reason": message(error)}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
    # The adapter kills the process group as soon as it reads the line: no office outlives it.
    os._exit(0)


if __name__ == "__main__":
    main()
