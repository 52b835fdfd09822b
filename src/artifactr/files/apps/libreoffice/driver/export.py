"""The pdf job: export the file as ``out.pdf`` and count its pages."""

import os

from desktop import load, source, store
from writer_inspect import pages


def run(job, directory, _context, desktop):
    """Export ``out.pdf``; return its page count."""
    document = load(desktop, source(job, directory))
    count = pages(document)
    store(document, os.path.join(directory, "out.pdf"), "writer_pdf_Export")
    return {"pages": count}
