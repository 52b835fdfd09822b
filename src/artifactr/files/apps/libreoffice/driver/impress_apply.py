"""The apply job on a deck: run a batch of Impress commands, save ``out.pptx``.

Every command runs in order; the deck is saved only if each succeeds, then read back as the
inspect job reads it. Slides are numbered from 1 in the order the batch has made so far. The
office has no call that moves a slide, so the batch keeps the slides' order itself and the saved
package's slide list (``ppt/presentation.xml``) is written in that order; every other command
acts on the office's own slides.
"""

import difflib
import io
import os
import posixpath
import re
import time
import zipfile

import uno
from desktop import Refused, source, store
from impress_inspect import (
    FILTER,
    NOTES,
    PLACEHOLDERS,
    TITLE,
    has_text,
    inspect,
    layouts_of,
    load,
    shapes,
    slides,
)
from kinds import run_batch

OBJECT = 11
"""The AutoLayout the import gives a slide of a title and content: its body is an object's
placeholder on a new slide, so a new slide takes :data:`CONTENT` instead."""

CONTENT = 1
"""The AutoLayout of a title and a text body."""

FRAME = (
    "TextAutoGrowHeight",
    "TextWordWrap",
    "TextFitToSize",
    "TextLeftDistance",
    "TextRightDistance",
    "TextUpperDistance",
    "TextLowerDistance",
    "TextVerticalAdjust",
    "TextHorizontalAdjust",
    "FontIndependentLineSpacing",
)
"""A placeholder's text frame, as a layout gives it: its growth, wrap, fit, insets, anchor (its
growth first: a frame that grows with its text would grow by its new insets)."""

UNCOPIED = {
    "NumberingLevel",
    "FontDescriptor",
    "ParaUserDefinedAttributes",
    "TextUserDefinedAttributes",
}
"""A paragraph's properties a look leaves alone: its level (a paragraph keeps its own) and the
office's bookkeeping."""

READONLY = 16
"""``com.sun.star.beans.PropertyAttribute.READONLY``."""

DIRECT = uno.Enum("com.sun.star.beans.PropertyState", "DIRECT_VALUE")
"""A property set on a text itself, not taken from its style."""

LAYOUT_NAME = re.compile(rb"<p:cSld\b[^>]*\bname=\"([^\"]*)\"")
RELATED = re.compile(rb"\br:(?:id|embed|link|pict)=")
TARGET = re.compile(rb"<Relationship\b[^>]*>")
TEXT_STYLES = re.compile(rb"<p:txStyles>.*?</p:txStyles>", re.S)
COLOUR_MAP = re.compile(rb"<p:clrMap\b[^>]*/>")

SLIDE_LIST = re.compile(rb"(<p:sldIdLst>)(.*?)(</p:sldIdLst>)", re.S)
SLIDE_ID = re.compile(rb"<p:sldId\b[^>]*/>")


class Deck:
    """A batch's state: the deck, and its slides in the order the batch has made."""

    def __init__(self, document, author):
        self.document = document
        self.author = author
        self.order = slides(document)

    def slide(self, params, name="slide"):
        """Return the slide a command names by its number, or refuse."""
        number = params[name]
        if number > len(self.order):
            raise Refused(f"no slide {number}: the deck has {len(self.order)}")
        return self.order[number - 1]


def insert_slide(deck, params):
    """Insert a slide in one of the deck's layouts (default: the slide before's), at a position.

    A deck's layouts are its master pages, which the import makes one a layout its slides use,
    named as the layout: the new slide takes the master page (background, title and body places)
    and the arrangement of a slide already in it; a placeholder the master page has no place for
    takes its place on that slide (:func:`place`), and text put in it the layout's look
    (:func:`put_text`).
    """
    position = min(params.get("position", len(deck.order) + 1), len(deck.order) + 1)
    before = deck.order[max(position - 2, 0)]
    master = before.MasterPage
    if "layout" in params:
        master = layout_named(deck.document, params["layout"])
    like = next(
        (slide for slide in [before, *deck.order] if slide.MasterPage.Name == master.Name), None
    )
    pages = deck.document.getDrawPages()
    slide = pages.insertNewByIndex(pages.getCount() - 1)
    slide.MasterPage = master
    arrangement = CONTENT if like is None else like.Layout
    slide.Layout = CONTENT if arrangement == OBJECT else arrangement
    if like is not None:
        place(slide, like)
    deck.order.insert(position - 1, slide)
    if "title" in params:
        set_title(deck, {"slide": position, "text": params["title"]})
    return {"slide": position}


def placeholders(page):
    """Return a page's text placeholders (its title, body, subtitle...), in order."""
    return [shape for shape in shapes(page) if shape.ShapeType in (TITLE, *PLACEHOLDERS)]


def of_kind(page, shape):
    """Return a page's placeholders of a shape's kind, in order."""
    return [other for other in placeholders(page) if other.ShapeType == shape.ShapeType]


def place(slide, like):
    """Put a new slide's placeholders of a kind its master page lacks where its layout has them.

    The office imports a layout's title and body onto its master page, in their places; a kind
    it has no place for (a subtitle) the office puts in the master page's body area, which on a
    title layout is above the title.
    """
    for shape in placeholders(slide):
        nth = of_kind(slide, shape).index(shape)
        same = of_kind(like, shape)
        if not of_kind(slide.MasterPage, shape) and nth < len(same):
            shape.Position = same[nth].Position
            shape.Size = same[nth].Size


def source_of(deck, slide, shape):
    """Return the shape whose look a slide's placeholder takes, or None.

    The office imports a layout as a master page whose title and body carry the layout's look
    (its size, colour, alignment, bullets), as a PowerPoint slide's placeholder inherits its
    layout's: a placeholder takes its master page's of its kind. A kind the master page has
    none of (a subtitle) takes the look of the same placeholder on another slide in the layout,
    one with text first (an empty one has no look of its own).
    """
    on_master = of_kind(slide.MasterPage, shape)
    if on_master:
        return on_master[0]
    nth = of_kind(slide, shape).index(shape)
    found = [
        same[nth]
        for other in deck.order
        if other != slide and other.MasterPage.Name == slide.MasterPage.Name
        for same in [of_kind(other, shape)]
        if nth < len(same)
    ]
    return next((other for other in found if other.getString()), found[0] if found else None)


def put_text(deck, slide, shape, text):
    """Set a placeholder's text in its look: its own, or an empty one's layout's.

    The office's new text forgets the look of the text it replaces past the first line (the
    next lines lose their bullets), and an empty placeholder has no look of its own: the office
    draws it in its presentation style, which the import leaves at its defaults (18 pt, left, no
    bullet), and forgets what is set on it until it holds text. As PowerPoint does, new text
    keeps the look of the text it replaces, and an empty placeholder's takes its layout's: the
    text is set, then dressed.
    """
    look = look_of(shape) if shape.getString() else None
    shape.setString(text)
    if look is None:
        source = source_of(deck, slide, shape)
        look = None if source is None else look_of(source)
    if look is not None:
        dress(shape, look)


def paragraphs(shape):
    """Return a shape's text's paragraphs, in order."""
    found = []
    enumeration = shape.getText().createEnumeration()
    while enumeration.hasMoreElements():
        found.append(enumeration.nextElement())
    return found


def direct(properties):
    """Return the properties set on a text itself (not by its style), those a look copies."""
    found = {}
    for described in properties.getPropertySetInfo().getProperties():
        name = described.Name
        if name in UNCOPIED or described.Attributes & READONLY:
            continue
        if properties.getPropertyState(name) == DIRECT:
            found[name] = properties.getPropertyValue(name)
    return found


def look_of(shape):
    """Return a placeholder's look: its text frame, and its paragraphs' properties by level.

    A level's are its first paragraph's and that paragraph's first run's, as set on them: size,
    colour, font, alignment, spacing, bullets.
    """
    levels = {}
    for paragraph in paragraphs(shape):
        if paragraph.NumberingLevel in levels:
            continue
        found = direct(paragraph)
        runs = paragraph.createEnumeration()
        if runs.hasMoreElements():
            found.update(direct(runs.nextElement()))
        levels[paragraph.NumberingLevel] = found
    return {name: shape.getPropertyValue(name) for name in FRAME}, levels


def dress(shape, look):
    """Give a placeholder's text a look.

    A new slide's body paragraph has no outline level, so no bullet: it takes the look's first.
    """
    frame, levels = look
    position, size = shape.Position, shape.Size
    for name, value in frame.items():
        shape.setPropertyValue(name, value)
    if (shape.Position, shape.Size) != (position, size):
        # A frame that grew with its text (a new slide's does) is put back in its place.
        shape.Position, shape.Size = position, size
    first = next(iter(levels), None)
    for paragraph in paragraphs(shape):
        level = paragraph.NumberingLevel
        if level not in levels:
            if level is None and first is not None:
                paragraph.NumberingLevel = first
            level = first
        for name, value in levels.get(level, {}).items():
            try:
                paragraph.setPropertyValue(name, value)
            except Exception:
                # A property one text takes and another refuses keeps the office's value.
                continue


def layout_named(document, name):
    """Return the deck's layout (a master page) of a name, or refuse naming the nearest first."""
    masters = document.getMasterPages()
    every = [masters.getByIndex(index) for index in range(masters.getCount())]
    for wanted in (name, name.strip().casefold()):
        found = next(
            (master for master in every if wanted in (master.Name, master.Name.casefold())), None
        )
        if found is not None:
            return found
    names = layouts_of(document)
    nearest = difflib.get_close_matches(name.strip(), names, 3, 0.4)
    listed = [*nearest, *(other for other in names if other not in nearest)]
    raise Refused(f"no layout `{name}`; the deck's layouts, nearest first: {', '.join(listed)}")


def duplicate_slide(deck, params):
    """Duplicate a slide; the copy follows it."""
    slide = deck.slide(params)
    copy = deck.document.duplicate(slide)
    deck.order.insert(params["slide"], copy)
    return {"slide": params["slide"] + 1}


def delete_slide(deck, params):
    """Delete a slide; never the last one."""
    slide = deck.slide(params)
    if len(deck.order) == 1:
        raise Refused("a deck keeps at least one slide")
    deck.document.getDrawPages().remove(slide)
    del deck.order[params["slide"] - 1]
    return {}


def move_slide(deck, params):
    """Move a slide to a position."""
    slide = deck.slide(params)
    to = params["to"]
    if to > len(deck.order):
        raise Refused(f"no position {to}: the deck has {len(deck.order)} slides")
    del deck.order[params["slide"] - 1]
    deck.order.insert(to - 1, slide)
    return {}


def title_shape(slide):
    """Return a slide's title placeholder, or None."""
    return next((shape for shape in shapes(slide) if shape.ShapeType == TITLE), None)


def set_title(deck, params):
    """Set a slide's title."""
    slide = deck.slide(params)
    shape = title_shape(slide)
    if shape is None:
        raise Refused(f"slide {params['slide']} has no title placeholder (its layout has none)")
    put_text(deck, slide, shape, params["text"])
    return {}


def set_text(deck, params):
    """Set the text of a slide's text placeholder (the body, a subtitle), by its number."""
    slide = deck.slide(params)
    found = [shape for shape in shapes(slide) if shape.ShapeType in PLACEHOLDERS]
    wanted = params.get("placeholder", 1)
    if wanted > len(found):
        raise Refused(
            f"slide {params['slide']} has {len(found)} text placeholders besides its title"
        )
    put_text(deck, slide, found[wanted - 1], params["text"])
    return {}


def replace_in(shape, find, replace, case):
    """Replace a text in a shape's text portions; return how many were replaced."""
    if not has_text(shape):
        return 0
    count = 0
    paragraphs = shape.getText().createEnumeration()
    while paragraphs.hasMoreElements():
        portions = paragraphs.nextElement().createEnumeration()
        while portions.hasMoreElements():
            portion = portions.nextElement()
            text = portion.getString()
            pattern = re.compile(re.escape(find), 0 if case else re.I)
            replaced, times = pattern.subn(lambda _match: replace, text)
            if times:
                portion.setString(replaced)
                count += times
    return count


def replace_all(deck, params):
    """Replace a text everywhere on one slide, or on every slide (notes included)."""
    chosen = [deck.slide(params)] if "slide" in params else deck.order
    count = 0
    for slide in chosen:
        for shape in [*shapes(slide), *shapes(slide.getNotesPage())]:
            count += replace_in(shape, params["find"], params["replace"], params.get("matchCase"))
    return {"replaced": count}


def set_notes(deck, params):
    """Set a slide's speaker notes."""
    page = deck.slide(params).getNotesPage()
    for index in range(page.getCount()):
        shape = page.getByIndex(index)
        if shape.ShapeType == NOTES:
            shape.setString(params["text"])
            return {}
    raise Refused(f"slide {params['slide']}'s notes page has no place for notes")


def add_comment(deck, params):
    """Add a comment on a slide, by the batch's author, now."""
    note = deck.slide(params).createAndInsertAnnotation()
    note.TextRange.setString(params["text"])
    note.Author = deck.author
    now = time.gmtime()
    stamp = uno.createUnoStruct("com.sun.star.util.DateTime")
    stamp.Year, stamp.Month, stamp.Day = now.tm_year, now.tm_mon, now.tm_mday
    stamp.Hours, stamp.Minutes, stamp.Seconds = now.tm_hour, now.tm_min, now.tm_sec
    note.DateTime = stamp
    return {}


COMMANDS = {
    "slide.insert": insert_slide,
    "slide.duplicate": duplicate_slide,
    "slide.delete": delete_slide,
    "slide.move": move_slide,
    "slide.setTitle": set_title,
    "slide.setText": set_text,
    "slides.replaceAll": replace_all,
    "slide.setNotes": set_notes,
    "slide.addComment": add_comment,
}
"""What runs each command of the adapter's Impress catalog."""


def reorder(path, order):
    """Rewrite a saved deck's slide list so slide ``i`` is the office's slide ``order[i]``."""
    with zipfile.ZipFile(path) as package:
        parts = [(info, package.read(info.filename)) for info in package.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for info, data in parts:
            if info.filename == "ppt/presentation.xml":
                data = SLIDE_LIST.sub(
                    lambda found: (
                        found.group(1)
                        + b"".join(SLIDE_ID.findall(found.group(2))[index] for index in order)
                        + found.group(3)
                    ),
                    data,
                    count=1,
                )
            package.writestr(info, data)
    with open(path, "wb") as saved:
        saved.write(out.getvalue())


def relations(package, part):
    """Return a part's relationships as ``{id: (type, target part)}``."""
    folder, name = part.rsplit("/", 1)
    try:
        data = package.read(f"{folder}/_rels/{name}.rels")
    except KeyError:
        return {}
    found = {}
    for tag in TARGET.findall(data):
        attributes = dict(re.findall(rb'(\w+)="([^"]*)"', tag))
        target = attributes.get(b"Target", b"").decode()
        path = posixpath.normpath(posixpath.join(folder, target))
        found[attributes.get(b"Id", b"").decode()] = (attributes.get(b"Type", b"").decode(), path)
    return found


def slide_parts(package):
    """Return the package's slide parts, in its slide list's order."""
    listed = SLIDE_LIST.search(package.read("ppt/presentation.xml"))
    if listed is None:
        return []
    related = relations(package, "ppt/presentation.xml")
    ids = [re.search(rb'r:id="([^"]*)"', tag) for tag in SLIDE_ID.findall(listed.group(2))]
    return [related[found.group(1).decode()][1] for found in ids if found]


def related(package, part, kind):
    """Return the part a part relates to by a relationship's type (its last word), or None."""
    return next(
        (target for name, target in relations(package, part).values() if name.endswith(kind)),
        None,
    )


def original_layouts(path):
    """Return a deck's own layouts as ``{name: (XML, master's look, theme)}``.

    Only those that relate to no part but their master: a layout with a picture or a link stays
    as the office writes it. Of two layouts of one name, the one a slide uses. The master's look
    is its text styles (``p:txStyles``: the size, colour, font and bullets of every title and
    body the layout doesn't set itself) and its colour map (which of the theme's colours is the
    text's); the theme is its master's colours and fonts, unless it relates to a part (a
    picture) of its own.
    """
    with zipfile.ZipFile(path) as package:
        parts = package.namelist()
        used = {related(package, slide, "/slideLayout") for slide in slide_parts(package)}
        found = {}
        # A layout a slide uses first: a deck this project saved also holds the office's generic
        # layouts, one of which may bear a used layout's name ("Title Slide").
        for part in sorted(parts, key=lambda part: part not in used):
            if not re.fullmatch(r"ppt/slideLayouts/[^/]+\.xml", part):
                continue
            data = package.read(part)
            named = LAYOUT_NAME.search(data)
            if named and not RELATED.search(data):
                master = related(package, part, "/slideMaster")
                mastered = package.read(master) if master in parts else b""
                theme = related(package, master, "/theme") if master in parts else None
                drawn = package.read(theme) if theme in parts else b""
                found.setdefault(
                    named.group(1),
                    (
                        data,
                        [look.group(0) for look in (TEXT_STYLES.search(mastered),) if look]
                        + [look.group(0) for look in (COLOUR_MAP.search(mastered),) if look],
                        drawn if drawn and not RELATED.search(drawn) else None,
                    ),
                )
    return found


def with_look(master, look):
    """Return a master's XML given text styles and a colour map, where the schema puts them."""
    for part in look:
        styles = part.startswith(b"<p:txStyles")
        pattern = TEXT_STYLES if styles else COLOUR_MAP
        if pattern.search(master):
            master = pattern.sub(lambda _found, part=part: part, master, count=1)
        elif styles:
            end = master.find(b"<p:extLst>")
            end = end if end >= 0 else master.rfind(b"</p:sldMaster>")
            master = master[:end] + part + master[end:]
        else:
            end = master.find(b"</p:cSld>") + len(b"</p:cSld>")
            master = master[:end] + part + master[end:]
    return master


def keep_layouts(path, source_path, names):
    """Write back the deck's own layouts into a saved deck, a slide's layout by its name.

    The office imports each layout a slide uses as a master page of its name, and saves each
    master page as a master with twelve layouts of its own (``Title Slide``, ``Blank Slide``...):
    the layout a slide points at loses its name and places. Each slide's layout part is given
    back the deck's layout of its master page's name (``names``, the office's slides' in order),
    and every slide of a layout points at one part, so the next load finds the same layouts.
    The office writes a master without text styles, with a colour map and a theme of its own
    (Arial): the master a kept layout belongs to gets back its text styles, colour map and
    theme, so a slide inserted in the next batch, or in PowerPoint, still takes the deck's title
    size, colour and bullets. A deck that
    is no package, or has no such layouts, is left as saved.
    """
    try:
        own = original_layouts(source_path)
    except (OSError, zipfile.BadZipFile):
        return
    with zipfile.ZipFile(path) as package:
        given = {}
        chosen = {}
        for part, name in zip(slide_parts(package), names, strict=False):
            layout = related(package, part, "/slideLayout")
            wanted = own.get(name.encode())
            if layout is None or wanted is None:
                continue
            first = chosen.setdefault(name, layout)
            data, look, theme = wanted
            given[first] = data
            master = related(package, first, "/slideMaster")
            if master is not None:
                given[master] = with_look(given.get(master, package.read(master)), look)
            drawn = None if master is None else related(package, master, "/theme")
            if drawn is not None and theme is not None:
                given[drawn] = theme
            if first != layout:
                folder, file = part.rsplit("/", 1)
                rels = f"{folder}/_rels/{file}.rels"
                was = b"/" + posixpath.basename(layout).encode() + b'"'
                now = b"/" + posixpath.basename(first).encode() + b'"'
                given[rels] = given.get(rels, package.read(rels)).replace(was, now)
        if not given:
            return
        parts = [
            (info, given.get(info.filename) or package.read(info.filename))
            for info in package.infolist()
        ]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for info, data in parts:
            package.writestr(info, data)
    with open(path, "wb") as saved:
        saved.write(out.getvalue())


def run(job, directory, _context, desktop):
    """The apply job: run the batch, save ``out.pptx`` in the batch's order, read it back."""
    original = source(job, directory)
    document = load(desktop, original)
    deck = Deck(document, job["author"])
    results = run_batch(COMMANDS, deck, job["commands"])
    office = slides(document)
    order = [next(i for i, slide in enumerate(office) if slide == wanted) for wanted in deck.order]
    saved = os.path.join(directory, "out.pptx")
    store(document, saved, FILTER)
    keep_layouts(saved, original, [slide.MasterPage.Name for slide in office])
    # Not closed: closing a deck that gained a comment crashes LibreOffice 7.4; the job's end
    # kills the office anyway.
    if order != sorted(order):
        reorder(saved, order)
    result = inspect(load(desktop, saved))
    result["results"] = results
    return result
