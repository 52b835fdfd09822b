"""FakeApp: an App that edits real .docx bytes with the standard library, for tests (RFC-0003).

:class:`FakeApp` implements :class:`~artifactr.files.core.app_port.App` in process and
deterministically: what it saves opens in Word and python-docx. It saves as WordCraft does: only the
parts a command changed are rewritten, and ``docProps/core.xml`` is stamped on every save, so a
batch that changes nothing keeps the fingerprint. It reads Word documents only: a workbook or a deck
is refused (``AppRefused``) with a reason that says so.

Its commands are a subset of WordCraft's, with WordCraft's ids, parameters and refusals
(``FakeApp().commands()``); a batch starts with the caret at the start of the document, and a
refused command refuses the whole batch::

    edited = await FakeApp().apply(
        source,
        [
            AppCommand(command="select.text", params={"text": "Draft"}),
            AppCommand(command="text.insert", params={"text": "Final"}),
        ],
        author="Ada",
    )

Each call parses in a worker thread, builds at most ``max_elements`` XML elements, and answers
:class:`~artifactr.files.core.errors.AppTimeout` at its deadline. Tests make it fail on purpose
(``fail=``, :meth:`FakeApp.fail_next`), slow (``delay``) or small (``max_size``).
"""

import asyncio
import io
import math
import multiprocessing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal, cast

from pydantic import JsonValue

from artifactr.files.apps.fake._body import Track
from artifactr.files.apps.fake._commands import CATALOG, COMMANDS, Batch, Params, bad
from artifactr.files.apps.fake._document import Document
from artifactr.files.apps.fake._package import Package, stamp_core
from artifactr.files.apps.fake._pages import (
    CHARS_PER_LINE,
    LINES_PER_PAGE,
    PAGE_SIZE,
    layout,
    page_count,
    png,
)
from artifactr.files.apps.fake._xml import Budget
from artifactr.files.core.app_port import (
    EDIT_DEADLINE,
    MAX_STYLES,
    RENDER_DEADLINE,
    About,
    AppCommand,
    CommandSpec,
    Edited,
    Inspection,
    ReviewItem,
    Source,
    Styles,
)
from artifactr.files.core.errors import (
    AppFailure,
    AppRefused,
    AppTimeout,
    AppTooLarge,
    FailureKind,
    UnsafeFile,
    failure_of,
)
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.formats import RELATIONSHIPS, kind_name, media_type_of
from artifactr.files.core.manifests import DOCX, MAX_OUTLINE
from artifactr.files.core.screen import CONTENT_TYPES

__all__ = [
    "CHARS_PER_LINE",
    "DEFAULT_AUTHOR",
    "DEFAULT_MAX_ELEMENTS",
    "DEFAULT_MAX_SIZE",
    "LINES_PER_PAGE",
    "PAGE_SIZE",
    "VERSION",
    "FakeApp",
    "Operation",
]

Operation = Literal["apply", "inspect", "render"]
"""A call FakeApp can be told to fail."""

VERSION = "1.0"
"""The version FakeApp reports in :class:`~artifactr.files.core.app_port.About`."""

DEFAULT_AUTHOR = "FakeApp User"
"""Who edits when ``apply`` names nobody (WordCraft's default is ``"WordCraft User"``)."""

DEFAULT_MAX_SIZE = 64 * 1024 * 1024
"""The largest file FakeApp takes, in bytes; its parts may inflate to eight times that."""

DEFAULT_MAX_ELEMENTS = 500_000
"""The most XML elements FakeApp builds for one file: a few hundred pages hold a tenth of it.
Parsed, an element takes about 150 bytes, so a file's parts take at most about 75 MiB."""

_TOO_LARGE = frozenset(
    {"too_many_entries", "part_too_large", "total_too_large", "inflate_ratio", "too_large"}
)


def _utc_now() -> datetime:
    return datetime.now(UTC)


# ─── the app ──────────────────────────────────────────────────────────────────


class FakeApp:
    r"""An :class:`~artifactr.files.core.app_port.App` that edits real .docx bytes in process.

    Commands (WordCraft's ids and parameters; :meth:`commands` lists them with their hints):

    - ``select.text{text, occurrence?}``: select the nth match (from 1) in document order,
      case-sensitive, within one paragraph; refused if there is none.
    - ``caret.docStart``, ``caret.docEnd``: move the caret. A batch starts at the start.
    - ``text.insert{text, raw?}``: replace the selection (or insert at the caret) and leave the
      caret after it. ``\r`` (or ``\r\n``, or U+2029) starts a paragraph, ``\n`` breaks a
      line, ``\t`` is a tab; the new text takes the formatting of the text it replaces, and
      text typed inside or at the end of a tracked insertion joins that insertion.
    - ``text.newParagraph``: as Enter: replace the selection, then split the paragraph at the
      caret; the caret goes to the start of the new paragraph. Append a paragraph with
      ``caret.docEnd`` then ``text.newParagraph``.
    - ``edit.replaceAll{text, with, matchCase?}``: replace every match in the body's paragraphs;
      case-insensitive by default, and ``matchCase`` stays set for the rest of the batch.
      Returns ``{"replaced": n}``; the caret goes to the start.
    - ``para.style{style}``: the selection's paragraph gets a paragraph style, by id or name
      (``Heading1``, ``Heading 1``). Normal, Title and Heading 1-9 are added to the styles if
      missing; any other unknown style is refused (``no style `X```).
    - ``review.newComment{text}``: comment on the selection, or on the word at the caret;
      returns ``{"id": ...}``.
    - ``review.trackChanges{value?}``: track changes on or off (toggles without ``value``),
      saved in the document's settings, where a batch also reads it from. While on, replaced
      text becomes a ``w:del`` and new text a ``w:ins``, and a new paragraph's mark is tracked.
    - ``review.accept{id?}``, ``review.reject{id?}``: one tracked change, by id, or the first
      that ends at or after the selection (refused if there is none); the caret goes to the
      start. ``review.acceptAll``, ``review.rejectAll`` return how many.

    An unknown command is refused with ``unknown command `x```, bad parameters with ``bad
    parameters: ...``, and either refuses the whole batch. Each command's result is in
    :attr:`last_results` after a successful :meth:`apply` (the port's :class:`Edited` has no
    place for them).

    ``inspect`` reads the body's paragraphs (tables too, not text boxes): the outline (Title and
    Heading 1-9 by style, two spaces per level below 1, at most 4,000 characters), the text (one
    line per paragraph, deletions left out), comments and tracked changes, and a page count laid
    out at 90 characters a line and 45 lines a page. ``render`` draws a page of that layout as a
    greyscale PNG: A4 at 72 dpi times the scale (clamped to 0.1-4), a dark bar per line.

    Args:
        name: Its short name, as the port's ``name``.
        fail: Operations that always fail, and how: ``{"apply": "timeout"}``.
        delay: Seconds each ``apply``, ``inspect`` and ``render`` takes; over the deadline, it
            times out at the deadline.
        max_size: The largest file it takes, in bytes; a larger one raises ``AppTooLarge``.
        max_elements: The most XML elements it builds for one file; more raise
            ``AppTooLarge`` as soon as they are met, before they take memory.
        author: Who edits when ``apply`` names nobody.
        clock: The time it stamps saves, changes and comments with.
        processes: Parse in a child process a job (``forkserver``), killed at the deadline,
            rather than in a thread of this one: a server's event loop then never waits on
            the parse, and the parse's memory goes back when the job ends (ADR-0015).
    """

    def __init__(
        self,
        *,
        name: str = "fake",
        fail: Mapping[Operation, FailureKind] | None = None,
        delay: float = 0.0,
        max_size: int = DEFAULT_MAX_SIZE,
        max_elements: int = DEFAULT_MAX_ELEMENTS,
        author: str = DEFAULT_AUTHOR,
        clock: Callable[[], datetime] = _utc_now,
        processes: bool = False,
    ) -> None:
        self._name = name
        self._processes = processes
        self._fail: dict[Operation, FailureKind] = dict(fail or {})
        self._pending: list[tuple[Operation | None, FailureKind]] = []
        self._delay = delay
        self._max_size = max_size
        self._max_elements = max_elements
        self._author = author
        self._clock = clock
        self._about = About(app=name, version=VERSION, build="stdlib")
        self.last_results: tuple[dict[str, JsonValue], ...] = ()
        """What each command of the last successful batch returned, in order."""

    @property
    def name(self) -> str:
        """The app's short name (``"fake"`` unless told otherwise)."""
        return self._name

    def fail_next(self, kind: FailureKind, op: Operation | None = None) -> None:
        """Make the next call of ``op`` (of any operation if None) fail with ``kind``, once.

        Calls queue up: two ``fail_next`` fail the next two matching calls.
        """
        self._pending.append((op, kind))

    def _failure(self, operation: Operation) -> FailureKind | None:
        for number, (op, kind) in enumerate(self._pending):
            if op in (None, operation):
                del self._pending[number]
                return kind
        return self._fail.get(operation)

    async def _enter(self, operation: Operation, source: Source, deadline: float) -> float:
        """Fail or wait as told, check the size; return the seconds left of the deadline."""
        kind = self._failure(operation)
        if kind == "timeout" or self._delay > deadline:
            await asyncio.sleep(max(deadline, 0.0))
            raise AppTimeout(f"the fake app did not answer within {deadline:g} s")
        if kind is not None:
            raise failure_of(kind, f"the fake app was told to fail ({kind})")
        await asyncio.sleep(self._delay)
        size = len(source) if isinstance(source, bytes) else source.seek(0, io.SEEK_END)
        if size > self._max_size:
            raise AppTooLarge(
                f"the file is {size} bytes, over the fake app's limit of {self._max_size}"
            )
        return deadline - self._delay

    def __getstate__(self) -> dict[str, object]:
        """Return what a job in another process needs: the settings, not the clock or plans."""
        state = dict(self.__dict__)
        state.update(_clock=_utc_now, _pending=[], _fail={}, last_results=())
        return state

    async def _off_loop[*A, T](
        self, seconds: float, work: Callable[[Budget, *A], T], *args: *A
    ) -> T:
        """Run ``work`` off the event loop, so it goes on; stop it at the deadline.

        Parsing a large file takes seconds of CPU: on the loop it would stall every other
        request. In a thread (the default), the interpreter's lock is still shared with the
        loop; at the deadline the call raises :class:`AppTimeout`, and the thread, which can't
        be killed, stops at its next mebibyte of XML. In a child process (``processes``), the
        loop shares nothing with it, and the child is killed at the deadline.
        """
        budget = Budget(self._max_elements)
        if self._processes:
            outcome = await _in_a_process(seconds, work, args, budget)
        else:
            try:
                async with asyncio.timeout(seconds):
                    outcome = await asyncio.to_thread(_job, work, args, budget)
            except TimeoutError:
                budget.stop()
                outcome = _Outcome(failure=("timeout", _late(seconds)))
        if outcome.failure is not None:
            raise failure_of(*outcome.failure)
        return cast(T, outcome.value)

    def _open(self, source: Source, budget: Budget) -> Document:
        package = Package(source, max_inflated=8 * self._max_size, budget=budget)
        _only_docx(package)
        return Document(package)

    async def apply(
        self,
        source: bytes,
        commands: Sequence[AppCommand],
        *,
        deadline: float = EDIT_DEADLINE,
        author: str | None = None,
    ) -> Edited:
        """Run a batch of commands on a .docx; return the new bytes, inspected.

        Raises:
            AppRefused: If the file is not a .docx, or a command is unknown, has bad parameters
                or can't be done; nothing is changed.
            AppTimeout: If told to, or ``delay`` is over the deadline.
            AppCrashed: If told to.
            AppTooLarge: If the file is over ``max_size``, or told to.
        """
        left = await self._enter("apply", source, deadline)
        who = (author or "").strip() or self._author
        now = self._clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

        edited, self.last_results = await self._off_loop(
            left, self._apply, source, tuple(commands), who, now
        )
        return edited

    def _apply(
        self, budget: Budget, source: bytes, commands: Sequence[AppCommand], who: str, now: str
    ) -> tuple[Edited, tuple[dict[str, JsonValue], ...]]:
        document = self._open(source, budget)
        batch = Batch(document, Track(who, now))
        results = tuple(self._run(batch, command) for command in commands)
        stamp_core(document.package, who, now)
        content = document.package.save()
        inspection = self._inspect(content, budget.again())
        return Edited(content=content, inspection=inspection), results

    def _run(self, batch: Batch, command: AppCommand) -> dict[str, JsonValue]:
        spec = COMMANDS.get(command.command)
        if spec is None:
            raise AppRefused(f"unknown command `{command.command}`")
        return spec.run(batch, Params(spec, command.params))

    async def inspect(self, source: Source, *, deadline: float = EDIT_DEADLINE) -> Inspection:
        """Return what FakeApp reads in a .docx: outline, text, review, pages, fingerprint.

        ``source`` may be a seekable binary file: it is read from its start, whatever its
        position, one part at a time.

        Raises:
            AppRefused: If the file is not a .docx, or told to.
            AppFailure: As :meth:`apply`.
        """
        left = await self._enter("inspect", source, deadline)
        if self._processes and not isinstance(source, bytes):
            source.seek(0)
            source = source.read()  # a child process is sent the bytes
        return await self._off_loop(left, self._inspect_job, source)

    def _inspect_job(self, budget: Budget, source: Source) -> Inspection:
        return self._inspect(source, budget)

    def _inspect(self, source: Source, budget: Budget) -> Inspection:
        document = self._open(source, budget)
        try:
            # It screens every part, even those FakeApp never reads (a corrupt thumbnail).
            digest = fingerprint(source)
        except UnsafeFile as error:
            if error.reason in _TOO_LARGE:
                raise AppTooLarge(str(error)) from error
            raise AppRefused(f"not a .docx: {error}") from error
        paragraphs = document.paragraphs()
        texts = [document.text(paragraph.element) for paragraph in paragraphs]
        headings = [
            "  " * (level - 1) + " ".join(text.split())
            for paragraph, text in zip(paragraphs, texts, strict=True)
            if (level := document.level(paragraph.element)) and text.strip()
        ]
        review = [
            ReviewItem(
                kind="comment",
                id=comment.id,
                author=comment.author,
                date=comment.date,
                text=comment.text,
                anchor=comment.anchor,
            )
            for comment in document.comments()
        ] + [
            ReviewItem(
                kind="change",
                id=change.id,
                author=change.author,
                date=change.date,
                text=change.text,
                change=change.kind,
            )
            for change in document.changes()
        ]
        return Inspection(
            outline="\n".join(headings)[:MAX_OUTLINE],
            text="\n".join(texts),
            review=review,
            pages=page_count(layout(texts)),
            styles=Styles(
                paragraph=tuple(document.style_names("paragraph")[:MAX_STYLES]),
                character=tuple(document.style_names("character")[:MAX_STYLES]),
            ),
            fingerprint=digest,
            about=self._about,
        )

    async def render(
        self, source: bytes, page: int, *, scale: float = 1.0, deadline: float = RENDER_DEADLINE
    ) -> bytes:
        """Return one page (from 1) as a PNG, A4 at 72 dpi times ``scale`` (clamped to 0.1-4).

        Raises:
            AppRefused: If there is no such page (``no page N``), the scale is not a number, or
                the file is not a .docx.
            AppFailure: As :meth:`apply`.
        """
        left = await self._enter("render", source, deadline)
        if not math.isfinite(scale):
            raise bad("`scale` must be a number")

        return await self._off_loop(left, self._render, source, page, scale)

    def _render(self, budget: Budget, source: bytes, page: int, scale: float) -> bytes:
        document = self._open(source, budget)
        paragraphs = document.paragraphs()
        lines = layout([document.text(paragraph.element) for paragraph in paragraphs])
        if not 1 <= page <= page_count(lines):
            raise AppRefused(f"no page {page}")
        shown = lines[(page - 1) * LINES_PER_PAGE : page * LINES_PER_PAGE]
        return png(shown, min(max(scale, 0.1), 4.0))

    async def commands(self, query: str = "") -> Sequence[CommandSpec]:
        """Return FakeApp's commands whose id or label contains ``query``, in any case."""
        wanted = query.lower()
        return [
            CommandSpec(id=c.id, label=c.label, params=c.params, mutates=c.mutates)
            for c in CATALOG
            if wanted in c.id.lower() or wanted in c.label.lower()
        ]


# ─── a job, in a thread or a child process ────────────────────────────────────


_CONTEXT: Final = multiprocessing.get_context("forkserver")
"""How a child process is started: forked from a server that imported FakeApp once."""

_CONTEXT.set_forkserver_preload([__name__])


@dataclass(frozen=True)
class _Outcome:
    """What a job did: its value, or how it failed and why."""

    value: object = None
    failure: tuple[FailureKind, str] | None = None


def _job[*A](work: Callable[[Budget, *A], object], args: tuple[*A], budget: Budget) -> _Outcome:
    """Run a job; return its value or its failure, which crosses a process as plain data."""
    try:
        return _Outcome(value=work(budget, *args))
    except AppFailure as failure:
        return _Outcome(failure=(failure.kind, failure.reason))


async def _in_a_process[*A](
    seconds: float, work: Callable[[Budget, *A], object], args: tuple[*A], budget: Budget
) -> _Outcome:
    """Run a job in a child process of its own; kill it at the deadline.

    A child that dies without an answer (killed for its memory) is answered at the deadline.
    """
    pool = _CONTEXT.Pool(1, maxtasksperchild=1)
    try:
        pending = pool.apply_async(_job, (work, args, budget))
        try:
            return await asyncio.to_thread(pending.get, max(seconds, 0.0))
        except multiprocessing.TimeoutError:
            return _Outcome(failure=("timeout", _late(seconds)))
    finally:
        await asyncio.to_thread(pool.terminate)


def _late(seconds: float) -> str:
    return f"the fake app did not answer within {seconds:g} s"


def _only_docx(package: Package) -> None:
    """Refuse a workbook or a deck: FakeApp reads Word documents (.docx) only."""
    try:
        relationships = package.read(RELATIONSHIPS) if package.has(RELATIONSHIPS) else None
        media = media_type_of(package.read(CONTENT_TYPES), relationships)
    except UnsafeFile:
        return  # not one of the native formats: the .docx reader says what it lacks
    if media != DOCX:
        raise AppRefused(
            f"FakeApp reads Word documents (.docx) only, and this is {kind_name(media)}: "
            "open it with an app that reads it (LibreOffice)"
        )
