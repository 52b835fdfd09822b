"""LibreOffice's commands: the catalog an agent reads, and the check of a batch (ADR-0008).

The adapter's commands are its own, designed for agents rather than copied from a ribbon: each
names what it finds (text, a paragraph by its text, a heading by its title, a table by its
number) and what it does there, so a model can act on one from its label and its parameters'
schema. The driver (``driver/``, under the system Python) runs them; this module only knows
their names and parameters, and checks a batch before any office starts, so a bad batch costs
nothing and names the command at fault.
"""

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from pydantic import JsonValue

from artifactr.files.core.app_port import AppCommand, CommandSpec
from artifactr.files.core.errors import AppRefused

Kind = Literal["text", "string", "integer", "boolean", "strings", "id", "value", "rows"]
"""What a parameter holds: ``text`` is a non-empty string, ``string`` may be empty, ``integer``
counts from 1, ``strings`` is a list of strings, ``id`` is an id from the inspection, ``value``
is a cell's (a string, a number, a boolean or null), ``rows`` a list of rows of values."""

_SCHEMA: Final[Mapping[Kind, dict[str, JsonValue]]] = {
    "text": {"type": "string", "minLength": 1},
    "string": {"type": "string"},
    "integer": {"type": "integer", "minimum": 1},
    "boolean": {"type": "boolean"},
    "strings": {"type": "array", "items": {"type": "string"}},
    "id": {"type": ["string", "integer"], "minLength": 1, "minimum": 1},
    "value": {"type": ["string", "number", "boolean", "null"]},
    "rows": {
        "type": "array",
        "items": {"type": "array", "items": {"type": ["string", "number", "boolean", "null"]}},
    },
}

_FORBIDDEN: Final = re.compile("[\x00-\x08\x0b-\x1f\ufffe\uffff]")
"""Characters a .docx cannot hold (and ``\\r``): a tab and ``\\n`` (a line break) are fine."""

MAX_TEXT: Final = 100_000
"""The most characters one parameter may have."""

MAX_CELLS: Final = 100_000
"""The most cells one ``rows`` parameter may hold."""


@dataclass(frozen=True)
class Param:
    """One parameter of a command."""

    name: str
    """Its name."""
    kind: Kind
    """What it holds."""
    required: bool = True
    """Whether a command must give it."""
    about: str = ""
    """What it means, for the schema's ``description``."""
    choices: tuple[str, ...] = ()
    """The values it may take, for the schema's ``enum``; any of its kind if none."""


@dataclass(frozen=True)
class Command:
    """A command in LibreOffice's catalog."""

    id: str
    """Its id."""
    label: str
    """What it does, for a model to read."""
    params: tuple[Param, ...] = ()
    """Its parameters."""
    target: bool = False
    """Whether it acts on one paragraph, found by ``paragraph`` (text in it) or ``heading``."""
    mutates: bool = True
    """Whether it changes the document."""

    def fields(self) -> tuple[Param, ...]:
        """Return every parameter, the paragraph's finders first."""
        if not self.target:
            return self.params
        return (*_TARGET, *self.params)

    def schema(self) -> dict[str, JsonValue]:
        """Return its parameters as a JSON schema."""
        properties: dict[str, JsonValue] = {}
        for param in self.fields():
            choices: dict[str, JsonValue] = {"enum": list(param.choices)} if param.choices else {}
            properties[param.name] = {
                **_SCHEMA[param.kind],
                **choices,
                "description": param.about,
            }
        schema: dict[str, JsonValue] = {
            "type": "object",
            "properties": properties,
            "additionalProperties": False,
        }
        required: list[JsonValue] = [p.name for p in self.params if p.required]
        if required:
            schema["required"] = required
        if self.target:
            schema["oneOf"] = [{"required": ["paragraph"]}, {"required": ["heading"]}]
        return schema

    def spec(self) -> CommandSpec:
        """Return it as the port's :class:`~artifactr.files.core.app_port.CommandSpec`."""
        hint = json.dumps(self.schema(), separators=(",", ":"))
        return CommandSpec(id=self.id, label=self.label, params=hint, mutates=self.mutates)


_TARGET: Final = (
    Param("paragraph", "text", False, "text the paragraph contains (case-sensitive)"),
    Param("heading", "text", False, "a heading's whole text (any case)"),
    Param("occurrence", "integer", False, "which match, from 1 (default 1)"),
)
_FIND = Param("find", "text", about="the text to find")
_NTH = Param("occurrence", "integer", False, "which match, from 1 (default: every match)")
_CASE = Param("matchCase", "boolean", False, "match case (default false)")
_STYLE = Param(
    "style",
    "text",
    False,
    "a paragraph style: Title, Heading 1-9, Body, or any style the document has",
)
_TABLE = Param("table", "integer", about="the table's number in the document, from 1")
_ROW = Param("row", "integer", about="the row, from 1")
_ID = Param("id", "id", about="the id the inspection gives it")

CATALOG: Final[tuple[Command, ...]] = (
    Command(
        "text.replaceAll",
        "Replace every occurrence of a text with another, everywhere in the document",
        (_FIND, Param("replace", "string", about="the new text"), _CASE),
    ),
    Command(
        "text.replace",
        "Replace one occurrence of a text (the first, or the nth) with another",
        (
            _FIND,
            Param("replace", "string", about="the new text"),
            Param("occurrence", "integer", False, "which match, from 1 (default 1)"),
            _CASE,
        ),
    ),
    Command(
        "text.setBold",
        "Make a text bold (or not), at every occurrence or the nth",
        (_FIND, _NTH, Param("value", "boolean", False, "bold or not (default true)")),
    ),
    Command(
        "text.setItalic",
        "Make a text italic (or not), at every occurrence or the nth",
        (_FIND, _NTH, Param("value", "boolean", False, "italic or not (default true)")),
    ),
    Command(
        "paragraph.insertBefore",
        "Insert a new paragraph before a paragraph found by its text or a heading",
        (Param("text", "string", about="the new paragraph's text"), _STYLE),
        target=True,
    ),
    Command(
        "paragraph.insertAfter",
        "Insert a new paragraph after a paragraph found by its text or a heading",
        (Param("text", "string", about="the new paragraph's text"), _STYLE),
        target=True,
    ),
    Command(
        "paragraph.append",
        "Add a new paragraph at the end of the document",
        (Param("text", "string", about="the new paragraph's text"), _STYLE),
    ),
    Command(
        "paragraph.setText",
        "Replace the whole text of a paragraph found by its text or a heading",
        (Param("text", "string", about="the paragraph's new text"),),
        target=True,
    ),
    Command(
        "paragraph.setStyle",
        "Set the style of a paragraph found by its text or a heading (Heading 1-9, Title, Body)",
        (Param("style", "text", about=_STYLE.about),),
        target=True,
    ),
    Command(
        "paragraph.delete",
        "Delete a paragraph found by its text or a heading",
        target=True,
    ),
    Command(
        "page.insertBreak",
        "Start a new page before a paragraph found by its text or a heading",
        target=True,
    ),
    Command(
        "comment.add",
        "Add a comment on a text (the first occurrence, or the nth)",
        (
            Param("anchor", "text", about="the text the comment is on"),
            Param("text", "text", about="the comment"),
            Param("occurrence", "integer", False, "which match, from 1 (default 1)"),
        ),
    ),
    Command(
        "comment.reply",
        "Reply to a comment, by its id: a comment on the same text",
        (_ID, Param("text", "text", about="the reply")),
    ),
    Command(
        "comment.resolve",
        "Mark a comment resolved (or open again), by its id",
        (_ID, Param("value", "boolean", False, "resolved or not (default true)")),
    ),
    Command("comment.delete", "Delete a comment, by its id", (_ID,)),
    Command(
        "changes.track",
        "Track changes on or off: while on, every edit is a tracked change by the author",
        (Param("value", "boolean", about="on or off"),),
    ),
    Command("changes.accept", "Accept one tracked change, by its id", (_ID,)),
    Command("changes.reject", "Reject one tracked change, by its id", (_ID,)),
    Command("changes.acceptAll", "Accept every tracked change"),
    Command("changes.rejectAll", "Reject every tracked change"),
    Command(
        "table.insertRow",
        "Insert a row in a table, after (or before) a row, optionally with its cells' text",
        (
            _TABLE,
            _ROW,
            Param("before", "boolean", False, "insert before the row (default after)"),
            Param("cells", "strings", False, "the new row's cells' text, from the left"),
        ),
    ),
    Command("table.deleteRow", "Delete a row of a table", (_TABLE, _ROW)),
    Command(
        "table.setCell",
        "Set the text of a table's cell",
        (
            _TABLE,
            _ROW,
            Param("column", "integer", about="the column, from 1"),
            Param("text", "string", about="the cell's new text"),
        ),
    ),
    Command("fields.update", "Update every field (page numbers, dates, cross-references)"),
    Command("toc.update", "Update every table of contents and index"),
)
"""Every command, in the order :meth:`LibreOffice.commands` lists them."""

COMMANDS: Final[Mapping[str, Command]] = {command.id: command for command in CATALOG}
"""The commands by id."""


def check(commands: Sequence[AppCommand], catalog: Mapping[str, Command] = COMMANDS) -> None:
    """Refuse a batch with an unknown command or a bad parameter, naming the command's index.

    ``catalog`` is the commands of the file's format: Writer's unless given.

    Raises:
        AppRefused: ``command 2 (`table.setCell`): ...``.
    """
    for index, step in enumerate(commands):
        command = catalog.get(step.command)
        if command is None:
            raise AppRefused(f"command {index} (`{step.command}`): unknown command")
        problem = _problem(command, step.params)
        if problem is not None:
            raise AppRefused(f"command {index} (`{step.command}`): bad parameters: {problem}")


def _problem(command: Command, params: Mapping[str, JsonValue]) -> str | None:
    fields = {param.name: param for param in command.fields()}
    unknown = sorted(set(params) - set(fields))
    if unknown:
        return f"unknown field `{unknown[0]}`; it takes {', '.join(fields) or 'nothing'}"
    for param in command.params:
        if param.required and param.name not in params:
            return f"missing `{param.name}`"
    if command.target and ("paragraph" in params) == ("heading" in params):
        return "give exactly one of `paragraph` and `heading`"
    for name, value in params.items():
        problem = _bad_value(fields[name].kind, value)
        if problem is not None:
            return f"`{name}` {problem}"
    return None


def _bad_value(kind: Kind, value: JsonValue) -> str | None:
    match kind:
        case "boolean":
            return None if isinstance(value, bool) else "must be true or false"
        case "integer":
            ok = isinstance(value, int) and not isinstance(value, bool) and value >= 1
            return None if ok else "must be a whole number from 1"
        case "strings":
            if not isinstance(value, list):
                return "must be a list of strings"
            return next(
                (problem for item in value if (problem := _bad_value("string", item))), None
            )
        case "id" if isinstance(value, int) and not isinstance(value, bool):
            return None if value >= 1 else "must be an id from the inspection"
        case "value" if value is None or isinstance(value, int | float):
            ok = isinstance(value, bool) or value is None or math.isfinite(value)
            return None if ok else "must be a finite number"
        case "rows":
            return _bad_rows(value)
        case _:
            return _bad_text(value, empty=kind == "string")


def _bad_rows(value: JsonValue) -> str | None:
    if not isinstance(value, list) or not all(isinstance(row, list) for row in value):
        return "must be a list of rows, each a list of values"
    cells = [cell for row in value if isinstance(row, list) for cell in row]
    if len(cells) > MAX_CELLS:
        return f"holds more than {MAX_CELLS} cells"
    return next((problem for cell in cells if (problem := _bad_value("value", cell))), None)


def _bad_text(value: JsonValue, *, empty: bool) -> str | None:
    if not isinstance(value, str):
        return "must be a string"
    if not value and not empty:
        return "must not be empty"
    if len(value) > MAX_TEXT:
        return f"is longer than {MAX_TEXT} characters"
    if _FORBIDDEN.search(value):
        return "holds a character a .docx cannot (a control character or \\r)"
    return None
