"""LibreOffice: the App port over a real office, run headless, one process per call (ADR-0008).

Needs no extra of this package, only three Debian packages (``apt-get install
libreoffice-writer python3-uno poppler-utils``); :func:`available` says whether they are here,
and why not. Integration key ``files:libreoffice``::

    from artifactr.files import AppCommand
    from artifactr.files.apps.libreoffice import LibreOffice

    app = LibreOffice()  # soffice on the PATH, /usr/bin/python3 with uno
    edited = await app.apply(
        source,
        [
            AppCommand(command="changes.track", params={"value": True}),
            AppCommand(command="text.replaceAll", params={"find": "Draft", "replace": "Final"}),
            AppCommand(
                command="paragraph.insertAfter",
                params={"heading": "Summary", "text": "Approved by the board."},
            ),
        ],
        author="Ada Lovelace",
    )
    edited.inspection.review  # the tracked changes, by Ada Lovelace
    png = await app.render(edited.content, 1, scale=1.5)
    pdf = await app.pdf(edited.content)

**How a call runs.** Each call is a job: a fresh temporary directory holds the file, a fresh
profile and a ``job.json``; the driver (``driver/``, shipped in this package) runs under the
*system* Python, which has Debian's ``python3-uno`` (this process never imports ``uno``), starts
``soffice --headless`` on a named pipe, loads the file hidden (macros never run, links never
update, no lock files), does the job and prints one JSON line. Then the whole process group is
killed and the directory wiped, whatever happened; at the deadline too (``AppTimeout``). The
job runs sealed under bubblewrap (``_sandbox.py``: the system read-only, its own directory the
only one writable, no network, no home, none of this application's files); ``sandbox`` says
whether that is required, preferred (the default, with a warning where it can't) or off. Where
it isn't sealed and the platform allows, the job runs in a network namespace of its own
(``unshare --net``; ``isolate_network``, required, preferred or off the same way).

**Renders.** The first render of a content exports the whole document to PDF once (one office
start-up) and keeps the PDF in a bounded in-process cache keyed by the content's SHA-256 and the
office's version and build; each page is then rasterised from it by ``pdftoppm`` at 96 dpi times
the scale, as a PPM that the adapter writes as a PNG (a tenth of the time pdftoppm's own PNG
takes). :meth:`LibreOffice.pdf` returns that PDF. The export runs under its own deadline
(``export_deadline``, 120 s by default): a render that stops waiting at its own deadline leaves
the export going, so the next render of that content finds it done. A Writer document's first
render is answered sooner (``early_page``, ADR-0022): the export's job exports the page asked for
alone (the PDF filter's ``PageRange``) and answers with it, then exports the whole document for
the cache, so a long document's first page waits for its load and layout but not for its other
pages; a render meanwhile waits for that same job, never starting a second. At most ``exports``
exports run at once (2 by default), :meth:`LibreOffice.export_status` says what they are doing,
:meth:`LibreOffice.exported` waits for them, and :meth:`LibreOffice.close` stops them: close an
adapter you made when you are done with it.

**Commands** (:meth:`LibreOffice.commands` lists them with a JSON schema of their parameters).
A batch is atomic: every command runs on the loaded document and the file is saved only if all
succeed; the first failure refuses the batch as ``AppRefused("command 2 (`table.setCell`):
...")``, and an unknown command or a bad parameter is refused before any office starts. A
paragraph is found by ``paragraph`` (text it contains) or ``heading`` (a heading's whole text,
any case), with ``occurrence`` from 1; comments and tracked changes by the ids the inspection
gives (numbered from 1 in the office's order, stable for a given file); tables by their number.

- ``text.replaceAll{find, replace, matchCase?}``, ``text.replace{find, replace, occurrence?,
  matchCase?}``, ``text.setBold{find, occurrence?, value?}``, ``text.setItalic{...}``
- ``paragraph.insertBefore``/``insertAfter{paragraph|heading, text, style?}``,
  ``paragraph.append{text, style?}``, ``paragraph.setText{paragraph|heading, text}``,
  ``paragraph.setStyle{paragraph|heading, style}`` (Title, Heading 1-9, Body, or any style the
  document has), ``paragraph.delete{paragraph|heading}``, ``page.insertBreak{paragraph|heading}``
- ``comment.add{anchor, text, occurrence?}``, ``comment.reply{id, text}`` (LibreOffice 7.4 has
  no threads: a reply is a comment on the same text), ``comment.resolve{id, value?}``,
  ``comment.delete{id}``
- ``changes.track{value}``, ``changes.accept{id}``, ``changes.reject{id}``,
  ``changes.acceptAll``, ``changes.rejectAll``
- ``table.insertRow{table, row, before?, cells?}``, ``table.deleteRow{table, row}``,
  ``table.setCell{table, row, column, text}``
- ``fields.update``, ``toc.update``
"""

from artifactr.files.apps.libreoffice._app import (
    DEFAULT_AUTHOR,
    MAX_FILE,
    ExportStatus,
    LibreOffice,
)
from artifactr.files.apps.libreoffice._availability import Availability, available
from artifactr.files.apps.libreoffice._catalog import CATALOG, COMMANDS, Command, Param
from artifactr.files.apps.libreoffice._pool import PoolStatus, machine_size

__all__ = [
    "CATALOG",
    "COMMANDS",
    "DEFAULT_AUTHOR",
    "MAX_FILE",
    "Availability",
    "Command",
    "ExportStatus",
    "LibreOffice",
    "Param",
    "PoolStatus",
    "available",
    "machine_size",
]
