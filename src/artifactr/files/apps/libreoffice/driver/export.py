"""The pdf job: export the file as ``out.pdf`` and count its pages.

Given a ``page``, the job first exports that page alone (the PDF filter's ``PageRange``) as
``page.pdf`` and says so in an early line (``{"early": {"pages": N, "page": P}}``, ``page`` null
if the document has no such page), then exports the whole document: a long document's first page
is answered at the cost of its load and layout, and its other pages still come from one export.
"""

import os

from desktop import early, load, source, store
from writer_inspect import pages

FILTER = "writer_pdf_Export"
"""The PDF export filter of a Writer document."""


def run(job, directory, _context, desktop):
    """Export ``page.pdf`` (if a page is asked for) then ``out.pdf``; return the page count."""
    document = load(desktop, source(job, directory))
    count = pages(document)
    page = job.get("page")
    if page is not None:
        shown = page if 1 <= page <= count else None
        if shown is not None:
            store(document, os.path.join(directory, "page.pdf"), FILTER, PageRange=str(shown))
        early({"pages": count, "page": shown})
    store(document, os.path.join(directory, "out.pdf"), FILTER)
    return {"pages": count}
