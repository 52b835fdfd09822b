"""LibreOffice Impress's commands: the catalog an agent reads for a deck.

Slides are named by their number from 1, in the order the batch has made so far (a slide
inserted or moved by an earlier command counts where it now is), and a slide is inserted in one
of the deck's own layouts, by the name the deck's text lists (ADR-0036). The driver
(``driver/impress_apply.py``) runs them; a slide's text placeholders other than its title (the
body, a subtitle) are numbered from 1 in the slide's order.
"""

from collections.abc import Mapping
from typing import Final

from artifactr.files.apps.libreoffice._catalog import Command, Param

_SLIDE = Param("slide", "integer", about="the slide's number, from 1")
_TEXT = Param("text", "string", about="the new text (a newline starts a new paragraph)")

CATALOG: Final[tuple[Command, ...]] = (
    Command(
        "slide.insert",
        "Deck: insert a slide in one of the deck's own layouts, at a position (default last)",
        (
            Param("position", "integer", False, "its number once inserted (default: last)"),
            Param(
                "layout",
                "text",
                False,
                "one of the deck's layouts, by the name its text's `Layouts:` line gives "
                "(default: the layout of the slide before)",
            ),
            Param("title", "string", False, "its title"),
        ),
    ),
    Command("slide.duplicate", "Deck: duplicate a slide; the copy follows it", (_SLIDE,)),
    Command("slide.delete", "Deck: delete a slide", (_SLIDE,)),
    Command(
        "slide.move",
        "Deck: move a slide to another position",
        (_SLIDE, Param("to", "integer", about="its number once moved")),
    ),
    Command("slide.setTitle", "Deck: set a slide's title", (_SLIDE, _TEXT)),
    Command(
        "slide.setText",
        "Deck: set the text of a slide's body (or another text placeholder, by its number)",
        (
            _SLIDE,
            Param(
                "placeholder",
                "integer",
                False,
                "which text placeholder besides the title, "
                "from 1 (default 1, the body or subtitle)",
            ),
            _TEXT,
        ),
    ),
    Command(
        "slides.replaceAll",
        "Deck: replace a text on one slide or every slide, speaker notes included",
        (
            Param("find", "text", about="the text to find"),
            Param("replace", "string", about="the new text"),
            Param("slide", "integer", False, "the slide's number (default: every slide)"),
            Param("matchCase", "boolean", False, "match case (default false)"),
        ),
    ),
    Command("slide.setNotes", "Deck: set a slide's speaker notes", (_SLIDE, _TEXT)),
    Command(
        "slide.addComment",
        "Deck: add a comment on a slide",
        (_SLIDE, Param("text", "text", about="the comment")),
    ),
)
"""Every Impress command, in the order :meth:`LibreOffice.commands` lists them."""

COMMANDS: Final[Mapping[str, Command]] = {command.id: command for command in CATALOG}
"""The Impress commands by id."""
