"""Reading an Impress deck: its slides' titles, text, tables, notes, comments and pages.

``inspect`` returns ``{"outline", "text", "review", "pages"}``. The outline is the slides'
titles, numbered (``1. Quarterly review``). The text is each slide in order: a ``# Slide <n>:
<title>`` line, then its other shapes' text in the slide's order (a table as tab-separated rows),
then ``Notes: ...`` where it has speaker notes. The review is the slides' comments, each with its
author, text and slide; its id is ``<slide>.<n>`` (``2.1``, the first comment on slide 2). Pages
are the slides, each rendered as an image. The apply job shares what finds a slide's shapes.

Under load, LibreOffice 7.4 sometimes replaces a slide's body placeholder while a job reads the
deck: the shape it listed then answers nothing (no text, no services), and listing the slide's
shapes again finds the new one. A slide is read again, up to :data:`READS` times, until none of
its text placeholders was replaced as it was read, so no slide's body goes missing.
"""

from desktop import source
from kinds import export_pdf, load_as

PRESENTATION = "com.sun.star.presentation.PresentationDocument"
"""The service a deck's model supports."""

TITLE = "com.sun.star.presentation.TitleTextShape"
"""A slide's title placeholder."""

NOTES = "com.sun.star.presentation.NotesShape"
"""The notes page's text."""

TABLE = "com.sun.star.drawing.TableShape"
"""A table."""

GROUP = "com.sun.star.drawing.GroupShape"
"""A group of shapes."""

PLACEHOLDERS = (
    "com.sun.star.presentation.SubtitleShape",
    "com.sun.star.presentation.OutlinerShape",
    "com.sun.star.presentation.TextShape",
)
"""A slide's text placeholders other than its title, as ``slide.setText`` counts them."""

TEXT = "com.sun.star.drawing.Text"
"""The service every shape with text supports."""

READS = 5
"""How many times a slide is read, at most, while the office replaces its placeholders."""


def load(desktop, path):
    """Load a deck, or refuse a file that is not one."""
    return load_as(desktop, path, PRESENTATION, "a presentation")


def slides(document):
    """Return the deck's slides, in order."""
    pages = document.getDrawPages()
    return [pages.getByIndex(index) for index in range(pages.getCount())]


def shapes(container):
    """Return a slide's shapes in order, a group's members in its place."""
    found = []
    for index in range(container.getCount()):
        shape = container.getByIndex(index)
        if shape.ShapeType == GROUP:
            found.extend(shapes(shape))
        else:
            found.append(shape)
    return found


def text_of(shape):
    """Return a shape's text: a table's rows as tab-separated cells; "" for none."""
    if shape.ShapeType == TABLE:
        model = shape.Model
        rows = []
        for row in range(model.getRows().getCount()):
            cells = [
                " ".join(model.getCellByPosition(column, row).getString().split())
                for column in range(model.getColumns().getCount())
            ]
            rows.append("\t".join(cells).rstrip("\t"))
        return "\n".join(row for row in rows if row)
    if not shape.supportsService(TEXT):
        return ""
    return shape.getString().strip()


def replaced(shape):
    """Whether a text placeholder was replaced by the office since it was listed: it has no text."""
    return (shape.ShapeType == TITLE or shape.ShapeType in PLACEHOLDERS) and not (
        shape.supportsService(TEXT)
    )


def read_slide(slide):
    """Return a slide's title, on one line, and its other shapes' text, in order.

    The slide is read again while one of its text placeholders was replaced as it was read.
    """
    read = read_shapes(slide)
    attempts = 1
    while attempts < READS and any(gone for _kind, _text, gone in read):
        read = read_shapes(slide)
        attempts += 1
    titles = [text for kind, text, _gone in read if kind == TITLE]
    title = " ".join(titles[0].split()) if titles else ""
    return title, [text for kind, text, _gone in read if kind != TITLE and text]


def read_shapes(slide):
    """Return each of a slide's shapes' type, its text, and whether it was replaced as read."""
    return [(shape.ShapeType, text_of(shape), replaced(shape)) for shape in shapes(slide)]


def notes_of(slide):
    """Return a slide's speaker notes; "" for none."""
    page = slide.getNotesPage()
    for index in range(page.getCount()):
        shape = page.getByIndex(index)
        if shape.ShapeType == NOTES:
            return shape.getString().strip()
    return ""


def stamp(value):
    """Return a com.sun.star.util.DateTime as RFC 3339 (UTC), or None if unset."""
    if value is None or not value.Year:
        return None
    return (
        f"{value.Year:04d}-{value.Month:02d}-{value.Day:02d}T"
        f"{value.Hours:02d}:{value.Minutes:02d}:{value.Seconds:02d}Z"
    )


def comments_of(document):
    """Return every slide's comments, ``<slide>.<n>`` their ids."""
    items = []
    for number, slide in enumerate(slides(document), start=1):
        enumeration = slide.createAnnotationEnumeration()
        count = 0
        while enumeration.hasMoreElements():
            note = enumeration.nextElement()
            count += 1
            items.append(
                {
                    "kind": "comment",
                    "id": f"{number}.{count}",
                    "author": note.Author or None,
                    "date": stamp(note.DateTime),
                    "text": note.TextRange.getString(),
                    "anchor": f"slide {number}",
                }
            )
    return items


def inspect(document):
    """Return the deck's outline, text, comments and slide count."""
    outline = []
    lines = []
    every = slides(document)
    for number, slide in enumerate(every, start=1):
        title, texts = read_slide(slide)
        outline.append(f"{number}. {title}" if title else f"{number}. (untitled)")
        lines.append(f"# Slide {number}: {title}" if title else f"# Slide {number}")
        lines.extend(texts)
        notes = notes_of(slide)
        if notes:
            lines.append("Notes: " + " ".join(notes.split()))
    return {
        "outline": "\n".join(outline),
        "text": "\n".join(lines),
        "review": comments_of(document),
        "pages": len(every),
    }


def run(job, directory, _context, desktop):
    """The inspect job."""
    return inspect(load(desktop, source(job, directory)))


def pdf(job, directory, _context, desktop):
    """The pdf job: export ``out.pdf``, a page a slide."""
    return export_pdf(load(desktop, source(job, directory)), directory, "impress_pdf_Export")
