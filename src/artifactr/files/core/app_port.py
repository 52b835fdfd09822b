"""The app port: a native application run headless, by its own commands (RFC-0003).

An :class:`App` takes a file's bytes and gives back new bytes, or what it reads in them. Every
call is stateless and has a deadline in seconds; failures are typed
(:class:`~artifactr.files.core.errors.AppFailure`): ``timeout``, ``crashed``, ``too_large`` and
``refused``, with the app's reason.
"""

from collections.abc import Mapping, Sequence
from typing import IO, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, JsonValue

EDIT_DEADLINE = 30.0
"""Seconds an edit, an inspection or a listing of commands may take by default."""

RENDER_DEADLINE = 10.0
"""Seconds a render may take by default."""


Source = bytes | IO[bytes]
"""A file's bytes: whole, or a seekable binary file (a large upload spooled to disk).

An adapter reads a file from its start, whatever its position, and reads only what it needs, so
a large file need not be held in memory.
"""


class AppCommand(BaseModel):
    """One of the app's own commands, with its parameters (``{"command": "edit.replaceAll"}``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str = Field(min_length=1, max_length=200)
    """The command's id, as the app's catalog names it."""
    params: Mapping[str, JsonValue] = Field(default_factory=dict[str, JsonValue])
    """Its parameters."""


class CommandSpec(BaseModel):
    """A command in the app's catalog."""

    model_config = ConfigDict(frozen=True)

    id: str
    """The command's id."""
    label: str = ""
    """What it does, in the app's words."""
    params: str = ""
    """Its parameters, as the app's hint string (``{"text": string}``)."""
    mutates: bool = True
    """Whether it changes the document."""


class ReviewItem(BaseModel):
    """A comment or a tracked change, as the app gives it."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["comment", "change"]
    """A comment, or a tracked change."""
    id: str
    """The app's id for it."""
    author: str | None = None
    """Who wrote it."""
    date: str | None = None
    """When, as the file has it."""
    text: str = ""
    """A comment's text, or the changed text."""
    change: Literal["insert", "delete"] | None = None
    """A tracked change's kind."""
    anchor: str | None = None
    """The text a comment is on, if the app says."""


class About(BaseModel):
    """Which app answered, for provenance and spans."""

    model_config = ConfigDict(frozen=True)

    app: str
    """The app's name (``"wordcraft"``)."""
    version: str | None = None
    """Its version, as it reported it."""
    build: str | None = None
    """Its build: the worker image's digest, or a local binary's."""


MAX_STYLES = 200
"""The most style names of each kind an inspection keeps: a document's own are far fewer."""


class Styles(BaseModel):
    """A Word document's styles, by the names a command takes (``Heading 1``)."""

    model_config = ConfigDict(frozen=True)

    paragraph: tuple[str, ...] = Field((), max_length=MAX_STYLES)
    """Its paragraph styles, as the app names them."""
    character: tuple[str, ...] = Field((), max_length=MAX_STYLES)
    """Its character styles."""


class Inspection(BaseModel):
    """What the app read in a file."""

    model_config = ConfigDict(frozen=True)

    outline: str = ""
    """The headings, one a line, indented by level."""
    text: str = ""
    """The body's plain text."""
    review: Sequence[ReviewItem] = ()
    """Comments and tracked changes."""
    pages: int | None = None
    """How many pages, if the app lays them out."""
    styles: Styles | None = None
    """A Word document's styles, if the app lists them."""
    fingerprint: str
    """The content's fingerprint (:func:`artifactr.files.fingerprint`)."""
    about: About
    """Which app read it."""


class Edited(BaseModel):
    """The result of a batch: the new bytes and what the app read in them."""

    model_config = ConfigDict(frozen=True)

    content: bytes
    """The file after the batch, as the app saved it."""
    inspection: Inspection
    """The new file, inspected."""


class App(Protocol):
    """A native application, run headless, one stateless call at a time.

    ``name`` is the app's short name (``"wordcraft"``); its integration key is ``files:<name>``.
    """

    @property
    def name(self) -> str:
        """The app's short name."""
        ...

    async def apply(
        self,
        source: bytes,
        commands: Sequence[AppCommand],
        *,
        deadline: float = EDIT_DEADLINE,
        author: str | None = None,
    ) -> Edited:
        """Run a batch of commands on a file; return the new bytes, inspected.

        ``author`` is who tracked changes and comments are attributed to.

        Raises:
            AppRefused: If the app refuses a command (unknown, bad parameters, forbidden).
            AppTimeout: If the deadline passes.
            AppCrashed: If the app dies or answers nonsense.
            AppTooLarge: If the file or the reply is over a limit.
        """
        ...

    async def inspect(self, source: Source, *, deadline: float = EDIT_DEADLINE) -> Inspection:
        """Return what the app reads in a file: outline, text, review, pages, styles, fingerprint.

        Raises:
            AppFailure: As :meth:`apply`.
        """
        ...

    async def render(
        self, source: bytes, page: int, *, scale: float = 1.0, deadline: float = RENDER_DEADLINE
    ) -> bytes:
        """Return one page (from 1) as a PNG.

        Raises:
            AppRefused: If there is no such page.
            AppFailure: As :meth:`apply`.
        """
        ...

    async def commands(self, query: str = "") -> Sequence[CommandSpec]:
        """Return the app's commands whose id or label contains ``query``."""
        ...
