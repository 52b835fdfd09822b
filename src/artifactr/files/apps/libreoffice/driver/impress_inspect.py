"""Reading an Impress deck: its slides' titles, text, tables, notes, comments and pages.

``inspect`` returns ``{"outline", "text", "review", "pages"}``. The outline is the slides'
titles, numbered (``1. Quarterly review``). The text is first the deck's layouts (``Layouts:
Title Slide, Acme Title and Content``, the names ``slide.insert`` takes), then each slide in
order: a ``# Slide <n>:
<title>`` line, then its other shapes' text in the slide's order (a table as tab-separated rows),
then ``Notes: ...`` where it has speaker notes. The review is the slides' comments, each with its
author, text and slide; its id is ``<slide>.<n>`` (``2.1``, the first comment on slide 2). Pages
are the slides, each rendered as an image. The apply job shares what finds a slide's shapes.
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


FILTER = "Impress MS PowerPoint 2007 XML"
"""A deck's format, which it is loaded and saved with."""


def load(desktop, path):
    """Load a deck, or refuse a file that is not one."""
    return load_as(desktop, path, PRESENTATION, "a presentation", FILTER)


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


def has_text(shape):
    """Return whether a shape holds text, asked of its interfaces, never of its services.

    A slide's shape in LibreOffice 7.4 at times lists only ``presentation.Shape`` among its
    services, so ``supportsService("com.sun.star.drawing.Text")`` says no of a body placeholder
    full of text (13 loads in 250 of a 3-slide deck, on a busy machine). Its interfaces don't
    change: a shape with text has ``getText``.
    """
    return hasattr(shape, "getText")


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
    if not has_text(shape):
        return ""
    return shape.getText().getString().strip()


def layouts_of(document):
    """Return the names of the deck's layouts, as ``slide.insert`` takes them: its master pages.

    LibreOffice imports a layout a slide uses as a master page of the layout's name (a layout
    no slide uses is not imported).
    """
    masters = document.getMasterPages()
    names = []
    for index in range(masters.getCount()):
        name = masters.getByIndex(index).Name
        if name not in names:
            names.append(name)
    return names


def title_of(slide):
    """Return a slide's title, on one line; "" for none."""
    for shape in shapes(slide):
        if shape.ShapeType == TITLE:
            return " ".join(shape.getString().split())
    return ""


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
    lines = [f"Layouts: {', '.join(layouts_of(document))}"]
    every = slides(document)
    for number, slide in enumerate(every, start=1):
        title = title_of(slide)
        outline.append(f"{number}. {title}" if title else f"{number}. (untitled)")
        lines.append(f"# Slide {number}: {title}" if title else f"# Slide {number}")
        for shape in shapes(slide):
            if shape.ShapeType == TITLE:
                continue
            text = text_of(shape)
            if text:
                lines.append(text)
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
