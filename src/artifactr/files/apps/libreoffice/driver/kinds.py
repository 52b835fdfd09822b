"""What the workbook and deck jobs share: loading a file as one kind, a batch, and the PDF.

A Writer document is loaded by ``desktop.load``; a workbook or a deck by :func:`load_as`, with the
same properties (hidden, macros never run, links never updated), refused if the office reads the
file as another kind. :func:`run_batch` runs a batch as the Writer job does: in order, the first
failure refusing the whole batch with the command's index.
"""

import os
import re

from desktop import Refused, message, prop, url

PAGE = re.compile(rb"/Type\s*/Page(?![s\w])")
"""A page object in a PDF the office wrote (it writes no object streams)."""


def load_as(desktop, path, service, what, filter_name):
    """Load a file hidden, macros never run and links never updated, as ``service``, or refuse.

    The file is loaded with ``filter_name``, its format's: no type detection, as a Writer
    document's (the adapter knows the format from the file's own parts).
    """
    properties = (
        prop("FilterName", filter_name),
        prop("Hidden", True),
        prop("ReadOnly", False),
        prop("MacroExecutionMode", 0),  # MacroExecMode.NEVER_EXECUTE
        prop("UpdateDocMode", 0),  # UpdateDocMode.NO_UPDATE
        prop("Silent", True),
    )
    try:
        document = desktop.loadComponentFromURL(url(path), "_blank", 0, properties)
    except Exception as error:
        raise Refused("LibreOffice can't open the file: " + message(error)) from None
    if document is None or not document.supportsService(service):
        if document is not None:
            document.close(True)
        raise Refused(f"LibreOffice can't open the file as {what}")
    return document


def run_batch(commands, state, steps):
    """Run each step's command on ``state``; return their results, or refuse the batch."""
    results = []
    for index, step in enumerate(steps):
        try:
            results.append(commands[step["command"]](state, step.get("params", {})))
        except Refused as refusal:
            raise Refused(f"command {index} (`{step['command']}`): {refusal}") from None
        except Exception as error:
            raise Refused(
                f"command {index} (`{step['command']}`): LibreOffice failed: {message(error)}"
            ) from None
    return results


def export_pdf(document, directory, filter_name):
    """Export ``out.pdf`` with the filter; return its page count, read from the PDF."""
    path = os.path.join(directory, "out.pdf")
    document.storeToURL(url(path), (prop("FilterName", filter_name),))
    with open(path, "rb") as written:
        return {"pages": len(PAGE.findall(written.read()))}
