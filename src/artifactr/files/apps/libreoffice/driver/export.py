"""The pdf job: export the file as ``out.pdf`` and count its pages."""

import os

from desktop import load, prop, source, url
from writer_inspect import pages


def run(job, directory, _context, desktop):
    """Export ``out.pdf``; return its page count."""
    document = load(desktop, source(job, directory))
    count = pages(document)
    document.storeToURL(
        url(os.path.join(directory, "out.pdf")), (prop("FilterName", "writer_pdf_Export"),)
    )
    return {"pages": count}
