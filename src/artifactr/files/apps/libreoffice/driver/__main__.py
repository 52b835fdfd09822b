"""LibreOffice's driver: one job, run by the system Python with Debian's python3-uno (ADR-0008).

The adapter never imports ``uno``: it writes a job (``job.json`` and the file) into a fresh
directory and runs ``/usr/bin/python3 <this directory> <job directory>``; the directory's modules
import only the standard library, ``uno`` and each other, and run under Python 3.11. The driver
starts ``soffice --headless`` on a fresh profile (``desktop.py``), does the job named by ``op``,
and writes one JSON line to stdout: ``{"ok": true, "result": ...}`` or ``{"ok": false, "kind":
"refused" | "crashed", "reason": ...}``. The adapter kills the whole process group as soon as it
has the line, or at the deadline.

Jobs: ``inspect`` (outline, text, review, pages; ``writer_inspect.py``), ``apply`` (a batch of
commands, saved to ``out.docx`` only if every one succeeds; ``writer_apply.py``) and ``pdf``
(``out.pdf`` and its page count; ``export.py``).
"""

import json
import os
import sys
import traceback

import export
import writer_apply
import writer_inspect
from desktop import Refused, message, start

JOBS = {"inspect": writer_inspect.run, "apply": writer_apply.run, "pdf": export.run}
"""What runs each job, by its ``op``."""


def main():
    """Run the job in the directory named on the command line; print one JSON line."""
    directory = sys.argv[1]
    with open(os.path.join(directory, "job.json")) as spec:
        job = json.load(spec)
    try:
        context, desktop = start(job, directory)
        reply = {"ok": True, "result": JOBS[job["op"]](job, directory, context, desktop)}
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
