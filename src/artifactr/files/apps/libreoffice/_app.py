"""The LibreOffice adapter of the App port: real pages and real edits (ADR-0008).

Each call is one job (:mod:`._process`): a fresh ``soffice --headless`` on a fresh profile, driven
over UNO by the driver under the system Python, killed with its process group when the call
ends. Renders export the whole document to PDF once per content digest, keep that PDF in a
bounded cache, and rasterise each page from it with ``pdftoppm``, so a long document costs one
office start-up, not one a page. A Writer document's first render is answered from the page it
asks for, exported alone by that same job before the whole export, which goes on in the
background for the cache: one export a digest at a time, at most ``exports`` at once, each
stopped by :meth:`LibreOffice.close`.
"""

import asyncio
import hashlib
import io
import logging
import math
import shutil
import subprocess
import zipfile
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Final

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from artifactr.files.apps import processes
from artifactr.files.apps.libreoffice import _calc, _catalog, _impress, _process
from artifactr.files.apps.libreoffice._availability import (
    SYSTEM_PYTHON,
    Availability,
    available,
    can_unshare,
    installed,
)
from artifactr.files.apps.libreoffice._png import png_from_ppm
from artifactr.files.apps.libreoffice._pool import Pool, PoolStatus
from artifactr.files.apps.libreoffice._sandbox import bare, can_sandbox
from artifactr.files.core.app_port import (
    EDIT_DEADLINE,
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
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTimeout, AppTooLarge, UnsafeFile
from artifactr.files.core.fingerprint import fingerprint
from artifactr.files.core.formats import (
    MAX_SNIFFED,
    RELATIONSHIPS,
    Sniffer,
    kind_name,
    media_type_of,
)
from artifactr.files.core.manifests import DOCX, MAX_OUTLINE, PPTX, XLSX
from artifactr.files.core.screen import CONTENT_TYPES

logger = logging.getLogger("artifactr.files.apps.libreoffice")

DEFAULT_AUTHOR: Final = "LibreOffice User"
"""Who edits when ``apply`` names nobody."""

MAX_FILE: Final = 64 * 1024 * 1024
"""The most bytes a file (in, saved, or its PDF) may have, by default."""

EXPORT_DEADLINE: Final = 120.0
"""Seconds an export to PDF may take, by default: a 180-page file takes 20 s on two cores."""

PDF_CACHE: Final = 256 * 1024 * 1024
"""The most bytes of PDFs the render cache keeps, by default."""

EXPORTS: Final = 2
"""The most exports to PDF that run at once, by default: each is an office."""

PAGE_PDF: Final = "page.pdf"
"""The file a pdf job exports the page asked for into, alone, before the whole document."""

DPI: Final = 96
"""Pixels per inch of a page rendered at scale 1."""

MIN_SCALE, MAX_SCALE = 0.1, 4.0
"""The scales a render is clamped to."""

EXTENSIONS: Final = {DOCX: "docx", XLSX: "xlsx", PPTX: "pptx"}
"""The formats the adapter reads (Writer, Calc, Impress), and each one's extension."""

POOL_WARM: Final = ("docx",)
"""What a pooled office warms up for by default: Writer documents."""

CATALOGS: Final[Mapping[str, Mapping[str, _catalog.Command]]] = {
    DOCX: _catalog.COMMANDS,
    XLSX: _calc.COMMANDS,
    PPTX: _impress.COMMANDS,
}
"""Each format's commands: a batch runs only the commands of its file's format."""

_EVERY_COMMAND: Final = {
    name: command for catalog in CATALOGS.values() for name, command in catalog.items()
}

_TOO_LARGE: Final = frozenset(
    {"too_many_entries", "part_too_large", "total_too_large", "inflate_ratio", "too_large"}
)


# ─── the driver's replies ─────────────────────────────────────────────────────


class _Item(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: str
    id: str
    author: str | None = None
    date: str | None = None
    text: str = ""
    anchor: str | None = None
    change: str | None = None


class _Read(BaseModel):
    model_config = ConfigDict(extra="ignore")

    outline: str = ""
    text: str = ""
    review: list[_Item] = []
    pages: int | None = None
    styles: Styles | None = None


class _Pdf(BaseModel):
    model_config = ConfigDict(extra="ignore")

    pages: int


@dataclass(frozen=True)
class _Exported:
    """The whole document as PDF, and its page count."""

    pdf: bytes
    pages: int


@dataclass(frozen=True)
class _Page:
    """A page exported alone ahead of the whole export, and the document's page count."""

    pdf: bytes | None
    """A one-page PDF; None if the document has no such page."""
    pages: int


@dataclass(frozen=True)
class _Flight:
    """A whole export under way, and the page its job exports alone first (None: none)."""

    task: "asyncio.Task[_Exported]"
    page: int | None
    early: "asyncio.Future[_Page]"


@dataclass(frozen=True)
class ExportStatus:
    """What the adapter's exports to PDF are doing, and what it keeps."""

    started: int
    """Whole exports started since the adapter was made (each one office job)."""
    running: int
    """Exports under way now, or waiting for their turn."""
    limit: int
    """The most that run at once."""
    kept: int
    """PDFs kept for further pages."""
    kept_bytes: int
    """Their bytes."""


# ─── the adapter ──────────────────────────────────────────────────────────────


class LibreOffice:
    """The :class:`~artifactr.files.core.app_port.App` port over LibreOffice, run headless per call.

    See :mod:`artifactr.files.apps.libreoffice` for the commands and how a job runs.

    Args:
        soffice: The office's program (``soffice``, or a path).
        python: The Python that imports ``uno`` (Debian's ``python3-uno`` is for
            ``/usr/bin/python3``).
        sandbox: Whether each job runs sealed under bubblewrap (``bwrap``: the system
            read-only, only its own directory writable, no network, no home, none of this
            application's files). None (the default) seals where bubblewrap runs and logs a
            warning once where it doesn't; True refuses to run a job without it
            (:class:`~artifactr.files.core.errors.AppCrashed`); False never seals.
        isolate_network: Where a job isn't sealed, whether it runs in a network namespace of its
            own (``unshare --net``, which needs root or user namespaces). None (the default)
            isolates where the platform allows and logs a warning once where it doesn't; True
            refuses to run a job without it; False never isolates.
        max_size: The most bytes a file, a saved file or a PDF may have.
        author: Who edits when ``apply`` names nobody.
        pdf_cache: The most bytes of PDFs kept for renders (0 keeps none).
        export_deadline: Seconds an export to PDF may take (a long document's first render);
            a render that stops waiting sooner leaves the export going, for the next call.
        early_page: Whether the first render of a Writer document (no PDF of it kept, none
            under way) is answered from the page asked for, exported alone by the export's job
            before the whole document (the PDF filter's ``PageRange``); the whole export goes
            on in the background for further pages. False: the render waits for the whole
            export. Workbooks and decks always wait for it.
        exports: The most exports to PDF that run at once (each an office, in the background
            too); more wait their turn. At least 1.
        deadline: Seconds the template profile's first start may take.
        prefix: A command each job's driver runs under, its arguments before the driver's (the
            worker's launcher, which sets resource limits the office inherits); none if empty.
        build: The build :meth:`about` reports, for provenance (a worker passes its image's
            digest, ``WORKER_BUILD``); the office's own build string, from its installation's
            files, if None.
        pool: How many offices to keep started ahead, each for exactly one job and then killed
            (0: each job starts its own); see :meth:`pool_status` and :meth:`close`.
        pool_memory: The most resident bytes the pool's idle offices may hold before it stops
            starting more (0: no cap).
        pool_warm: The formats (``docx``, ``xlsx``, ``pptx``) a pooled office warms up for
            while it waits for its job: it loads and stores a one-line document of each that
            its driver makes itself (never a user's), so its job doesn't pay the office's first
            load and store of that kind. Each costs memory while the office waits
            (:meth:`pool_status`); none (``()``) leaves every office cold.

    Raises:
        ValueError: If ``pool_warm`` names a format the adapter doesn't read.
    """

    def __init__(
        self,
        *,
        soffice: str = "soffice",
        python: str = SYSTEM_PYTHON,
        sandbox: bool | None = None,
        isolate_network: bool | None = None,
        max_size: int = MAX_FILE,
        author: str = DEFAULT_AUTHOR,
        pdf_cache: int = PDF_CACHE,
        export_deadline: float = EXPORT_DEADLINE,
        deadline: float = EDIT_DEADLINE,
        prefix: Sequence[str] = (),
        build: str | None = None,
        pool: int = 0,
        pool_memory: int = 0,
        pool_warm: Sequence[str] = POOL_WARM,
        early_page: bool = True,
        exports: int = EXPORTS,
    ) -> None:
        unknown = sorted(set(pool_warm) - set(EXTENSIONS.values()))
        if unknown:
            raise ValueError(
                f"pool_warm names {', '.join(unknown)}: a pooled office warms up for "
                "docx, xlsx or pptx only"
            )
        if exports < 1:
            raise ValueError(f"exports must be at least 1, not {exports}")
        self.soffice = soffice
        self.python = python
        self.sandbox = sandbox
        self.isolate_network = isolate_network
        self.max_size = max_size
        self.author = author
        self.pdf_cache = pdf_cache
        self.export_deadline = export_deadline
        self.deadline = deadline
        self.prefix = tuple(prefix)
        self.build = build
        self.pool_warm = tuple(pool_warm)
        self.early_page = early_page
        self.exports = exports
        self._slots = asyncio.Semaphore(exports)
        self._started = 0
        self._pool = Pool(pool, pool_memory, self._pool_runner)
        self._reaper = _process.Reaper()
        self._isolated: bool | None = None
        self._probed = False
        self._templated = False
        self._templating = asyncio.Lock()
        self._template: Path | None = None
        self._sealed: str | None = None
        self._about: About | None = None
        self._pdfs: OrderedDict[str, _Exported] = OrderedDict()
        self._exporting: dict[str, _Flight] = {}

    @property
    def name(self) -> str:
        """The app's short name."""
        return "libreoffice"

    @staticmethod
    def available(soffice: str = "soffice", python: str = SYSTEM_PYTHON) -> Availability:
        """Return whether the programs the adapter needs are here, and why not."""
        return available(soffice, python)

    async def sandboxed(self) -> bool:
        """Return whether jobs run sealed under bubblewrap.

        Raises:
            AppCrashed: If the sandbox is required and bubblewrap can't run here.
        """
        return await self._bwrap() is not None

    async def _bwrap(self) -> str | None:
        if not self._probed:
            found = shutil.which("bwrap") if self.sandbox is not False else None
            can = found is not None and await asyncio.to_thread(can_sandbox, found)
            if self.sandbox and not can:
                raise AppCrashed(
                    "libreoffice must run sealed, and bubblewrap can't run here "
                    "(apt-get install bubblewrap; it needs root or user namespaces)"
                )
            if self.sandbox is None and not can:
                logger.warning(
                    "libreoffice jobs run UNSEALED: bubblewrap is missing or can't run here"
                )
            self._sealed = found if can else None
            self._probed = True
        return self._sealed

    async def isolated(self) -> bool:
        """Return whether jobs run without a network: sealed, or in a namespace of their own.

        Raises:
            AppCrashed: If isolation is required and the platform can't give it.
        """
        if await self._bwrap() is not None:
            return True
        if self._isolated is None:
            can = self.isolate_network is not False and await asyncio.to_thread(can_unshare)
            if self.isolate_network and not can:
                raise AppCrashed(
                    "libreoffice must run without a network, and `unshare --net` can't here "
                    "(it needs root or user namespaces)"
                )
            if self.isolate_network is None and not can:
                logger.warning(
                    "libreoffice jobs run WITH the network: `unshare --net` is unavailable here"
                )
            self._isolated = can
        return self._isolated

    async def about(self) -> About:
        """Return the office's name, version and build, as ``soffice --version`` would say them.

        They are read from the installation's files, never by starting the office (which would
        run unsealed, ADR-0027); an office that is no installation's (a wrapper script) has no
        version or build then. The build is the one this adapter was given, where it was given one.
        """
        if self._about is None:
            found = await asyncio.to_thread(installed, self.soffice)
            build = self.build or found.build
            self._about = About(app="libreoffice", version=found.version, build=build)
        return self._about

    async def _sealing(self) -> list[str]:
        """Return what a helper program (``pdftoppm``) runs under: the jobs' sandbox, bare.

        Where jobs aren't sealed, it runs in a network namespace of its own if theirs do.
        """
        bwrap = await self._bwrap()
        if bwrap is not None:
            return bare(bwrap)
        return ["unshare", "--net", "--"] if await self.isolated() else []

    async def _runner(self) -> _process.Runner:
        runner = _process.Runner(
            soffice=self.soffice,
            python=self.python,
            isolate=await self.isolated(),
            bwrap=await self._bwrap(),
            max_file=self.max_size,
            prefix=self.prefix,
        )
        async with self._templating:
            # One first start for all jobs, whoever asks first and at once; without a template,
            # each job makes its own profile.
            if not self._templated:
                self._template = await _process.template(runner, self.deadline)
                self._templated = True
        return replace(runner, template=self._template)

    async def _pool_runner(self) -> _process.Runner:
        return replace(await self._runner(), warm=self.pool_warm)

    async def _pooled(self) -> _process.Office | None:
        """Return an office the pool started ahead for the next job, or None."""
        return await self._pool.take()

    def fill_pool(self) -> None:
        """Start the pool's offices now, in the background (else they start on first use)."""
        self._pool.fill()

    def pool_status(self) -> PoolStatus:
        """Return the pool's size, how many offices are ready, and their resident memory."""
        return self._pool.status()

    def export_status(self) -> ExportStatus:
        """Return how many exports to PDF were started and run now, and the PDFs kept."""
        return ExportStatus(
            started=self._started,
            running=len(self._exporting),
            limit=self.exports,
            kept=len(self._pdfs),
            kept_bytes=sum(len(kept.pdf) for kept in self._pdfs.values()),
        )

    async def exported(self) -> None:
        """Wait until every export to PDF under way has ended, kept or failed.

        Each ends within ``export_deadline``. A caller that runs one job at a time (the worker)
        waits for this before its next job: a render answered from its page alone leaves its
        whole export going.
        """
        flights = [asyncio.shield(flight.task) for flight in self._exporting.values()]
        await asyncio.gather(*flights, return_exceptions=True)

    def reaping(self) -> tuple[int, int]:
        """Return how many offices are being reaped now, and how many jobs answered first.

        An edit or an inspection answers as soon as its result is in hand; its office is
        reaped in the background, whole group and all (:meth:`reaped` waits for that).
        """
        return self._reaper.reaping, self._reaper.started

    async def reaped(self) -> None:
        """Return once every office whose job answered first is gone, its directory wiped."""
        await self._reaper.drained()

    async def close(self) -> None:
        """Stop the exports under way, kill the pool's offices and remove the template profile.

        An export's office is killed with its group, and its directory wiped, before this
        returns, as is every office still being reaped after its job answered; a render still
        waiting for an export fails with ``AppCrashed``. The adapter still works after this: a
        job starts its own office, on a new template.
        """
        stopping = [flight.task for flight in self._exporting.values()]
        for task in stopping:
            task.cancel()
        await asyncio.gather(*stopping, return_exceptions=True)
        await self._reaper.drained()
        await self._pool.close()
        if self._template is not None:
            await asyncio.to_thread(shutil.rmtree, self._template.parent, True)
        self._template, self._templated = None, False

    async def _bytes(self, source: Source) -> bytes:
        """Return the file's bytes, or refuse a file over the size limit."""
        if not isinstance(source, bytes):
            source = await asyncio.to_thread(_read_all, source, self.max_size)
        if len(source) > self.max_size:
            raise AppTooLarge(
                f"the file has {len(source)} bytes, over the limit of {self.max_size}"
            )
        return source

    async def _screen(self, source: Source, screened: str | None) -> tuple[bytes, str, str]:
        """Return the file's bytes, fingerprint and format, or refuse it before any office starts.

        A file the caller has screened (``screened``, its fingerprint) is not screened again:
        its format is read from its two small parts that name it.
        """
        content = await self._bytes(source)
        if screened is None:
            screened, media = await asyncio.to_thread(_fingerprint, content)
        else:
            media = await asyncio.to_thread(_format_of_screened, content)
        return content, screened, media

    async def apply(
        self,
        source: Source,
        commands: Sequence[AppCommand],
        *,
        deadline: float = EDIT_DEADLINE,
        author: str | None = None,
        screened: str | None = None,
    ) -> Edited:
        """Run a batch of commands on a file; return the saved file, inspected.

        The batch is atomic: every command runs on the loaded document, and the file is saved
        only if all succeed. Edits made while tracking changes, and comments, are by ``author``
        (trimmed; blank means the adapter's ``author``). The inspection is of the saved file,
        loaded again, so its ids are those the next call sees. ``screened`` is the file's
        fingerprint if the caller has screened it already (the worker has): it is not screened
        again, here or by :meth:`inspect` and :meth:`render`.

        Raises:
            AppRefused: If a command is unknown, has bad parameters or can't be done (``command
                2 (`table.setCell`): ...``), or the file can't be opened; nothing is saved.
            AppTimeout: If the deadline passes.
            AppCrashed: If the office dies or answers nonsense.
            AppTooLarge: If the file or the saved file is over ``max_size``.
        """
        _catalog.check(commands, _EVERY_COMMAND)
        _calc.check_formulas(commands)
        content, _, media = await self._screen(source, screened)
        _check_format(media, commands)
        who = (author or "").strip() or self.author
        reply = await _process.run(
            await self._runner(),
            "apply",
            content,
            office=await self._pooled(),
            deadline=deadline,
            reaper=self._reaper,
            commands=commands,
            author=who,
            output=f"out.{EXTENSIONS[media]}",
            file_format=EXTENSIONS[media],
        )
        saved = reply.output or b""
        return Edited(
            content=saved,
            inspection=self._inspection(
                reply.result, await asyncio.to_thread(_saved_fingerprint, saved), await self.about()
            ),
        )

    async def inspect(
        self, source: Source, *, deadline: float = EDIT_DEADLINE, screened: str | None = None
    ) -> Inspection:
        """Return what LibreOffice reads in a file: outline, text, review, pages, fingerprint.

        The text is the body in reading order (a table's rows as tab-separated cells), then the
        footnotes (``[1] ...``) and endnotes (``[i] ...``); tracked deletions are left out.
        Comments and tracked changes are numbered from 1 in the office's order, stable for a
        given file: ``comment.reply`` and ``changes.accept`` take these ids.

        Raises:
            AppRefused: If the file is not a .docx, .xlsx or .pptx, or the office can't open it.
            AppFailure: As :meth:`apply`.
        """
        content, digest, media = await self._screen(source, screened)
        reply = await _process.run(
            await self._runner(),
            "inspect",
            content,
            deadline=deadline,
            author=self.author,
            file_format=EXTENSIONS[media],
            office=await self._pooled(),
            reaper=self._reaper,
        )
        return self._inspection(reply.result, digest, await self.about())

    @staticmethod
    def _inspection(result: dict[str, JsonValue], digest: str, about: About) -> Inspection:
        try:
            read = _Read.model_validate(result)
        except ValidationError as error:
            raise AppCrashed(
                f"libreoffice's driver answered something unreadable: {error}"
            ) from None
        review = [
            ReviewItem(
                kind="comment" if item.kind == "comment" else "change",
                id=item.id,
                author=item.author,
                date=item.date,
                text=item.text,
                change="insert"
                if item.change == "insert"
                else "delete"
                if item.change == "delete"
                else None,
                anchor=item.anchor,
            )
            for item in read.review
        ]
        return Inspection(
            outline=read.outline[:MAX_OUTLINE],
            text=read.text,
            review=review,
            pages=read.pages,
            styles=read.styles,
            fingerprint=digest,
            about=about,
        )

    async def pdf(self, source: Source, *, deadline: float = RENDER_DEADLINE) -> bytes:
        """Return the file as PDF, from the cache if this content was exported before.

        Raises:
            AppRefused: If the file is not a .docx, .xlsx or .pptx, or the office can't open it.
            AppFailure: As :meth:`apply`.
        """
        found = await self._found(await self._bytes(source), None, screened=False)
        return (await self._whole(found, deadline)).pdf

    async def _found(
        self, content: bytes, page: int | None, *, screened: bool
    ) -> "_Exported | _Flight":
        """Return the content's PDF if it is kept, else its export under way, started if need be.

        An export runs as a task of its own, under ``export_deadline``: a caller whose deadline
        is shorter stops waiting (``AppTimeout``) but the export goes on, so the next call finds
        it done, and callers asking for the same content at once share it. A Writer document's
        export started for a render of ``page`` exports that page alone first
        (``early_page``).
        """
        about = await self.about()
        key = f"{hashlib.sha256(content).hexdigest()}:{about.version}:{about.build}"
        cached = self._pdfs.get(key)
        if cached is not None:
            self._pdfs.move_to_end(key)
            return cached
        # Screened only when no PDF is kept: a further page costs no screening.
        if screened:
            media = await asyncio.to_thread(_format_of_screened, content)
        else:
            _, media = await asyncio.to_thread(_fingerprint, content)
        runner = await self._runner()
        # No await from these looks to the registration: one export a content at a time.
        return (
            self._pdfs.get(key)
            or self._exporting.get(key)
            or self._begin(key, content, runner, media, page)
        )

    def _begin(
        self, key: str, content: bytes, runner: _process.Runner, media: str, page: int | None
    ) -> _Flight:
        alone = page if self.early_page and media == DOCX else None
        early: asyncio.Future[_Page] = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(
            self._exported(key, content, runner, EXTENSIONS[media], alone, early)
        )
        task.add_done_callback(_ended)
        flight = _Flight(task, alone, early)
        self._exporting[key] = flight
        self._started += 1
        return flight

    async def _exported(
        self,
        key: str,
        content: bytes,
        runner: _process.Runner,
        file_format: str,
        page: int | None,
        early: "asyncio.Future[_Page]",
    ) -> _Exported:
        def take(reply: _process.Reply) -> None:
            early.set_result(_Page(reply.output, _Pdf.model_validate(reply.result).pages))

        try:
            async with self._slots:
                reply = await _process.run(
                    runner,
                    "pdf",
                    content,
                    office=await self._pooled(),
                    deadline=self.export_deadline,
                    author=self.author,
                    output="out.pdf",
                    file_format=file_format,
                    page=page,
                    early=_process.Early(PAGE_PDF, take),
                )
        finally:
            del self._exporting[key]
        exported = _Exported(reply.output or b"", _Pdf.model_validate(reply.result).pages)
        self._keep(key, exported)
        return exported

    async def _whole(self, found: "_Exported | _Flight", deadline: float) -> _Exported:
        """Return the whole export: kept, or once the export under way ends."""
        if isinstance(found, _Flight):
            await _wait([found.task], deadline, self.export_deadline)
            found = _outcome(found.task)
        return found

    def _keep(self, key: str, exported: _Exported) -> None:
        if len(exported.pdf) > self.pdf_cache:
            return
        self._pdfs[key] = exported
        while sum(len(kept.pdf) for kept in self._pdfs.values()) > self.pdf_cache:
            self._pdfs.popitem(last=False)

    async def render(
        self,
        source: Source,
        page: int,
        *,
        scale: float = 1.0,
        deadline: float = RENDER_DEADLINE,
        screened: str | None = None,
    ) -> bytes:
        """Return one page (from 1) as a PNG at 96 dpi times ``scale`` (clamped to 0.1-4).

        The first render of a content exports the whole document to PDF (one office start-up);
        every other page of it comes from the cached PDF, through ``pdftoppm``. A Writer
        document's first render is answered from the page asked for, exported alone by the same
        job before the whole document (``early_page``), so it waits for the document's load and
        layout but not for the other pages' export; a render of another page meanwhile waits for
        the whole export, never starting a second. The deadline bounds the wait for the export
        (which goes on, for the next call, if the wait ends) and the rasterising of the page,
        each.

        Raises:
            AppRefused: If there is no such page, the scale is not a number, or the file can't
                be opened.
            AppFailure: As :meth:`apply`.
        """
        if not math.isfinite(scale):
            raise AppRefused("bad parameters: `scale` must be a number")
        content = await self._bytes(source)
        pdf, number = await self._page(content, page, deadline, screened is not None)
        dpi = DPI * min(max(scale, MIN_SCALE), MAX_SCALE)
        return await _rasterise(await self._sealing(), pdf, number, dpi, deadline)

    async def _page(
        self, content: bytes, page: int, deadline: float, screened: bool
    ) -> tuple[bytes, int]:
        """Return a PDF that holds the page, and the page's number in it."""
        found = await self._found(content, page, screened=screened)
        if isinstance(found, _Flight) and found.page == page:
            # Whichever comes first: the page alone, or the job's end (its failure, typed).
            await _wait([found.early, found.task], deadline, self.export_deadline)
            if found.early.done():
                alone = found.early.result()
                if alone.pdf is None:
                    raise AppRefused(f"no page {page}: the document has {alone.pages}")
                return alone.pdf, 1
        exported = await self._whole(found, deadline)
        if not 1 <= page <= exported.pages:
            raise AppRefused(f"no page {page}: the document has {exported.pages}")
        return exported.pdf, page

    async def commands(self, query: str = "") -> Sequence[CommandSpec]:
        """Return the adapter's commands whose id or label contains ``query``, in any case.

        Writer's come first, then a workbook's (labelled ``Workbook:``) and a deck's
        (``Deck:``); a batch may hold only the commands of its file's format.
        """
        wanted = query.lower()
        return [
            command.spec()
            for catalog in CATALOGS.values()
            for command in catalog.values()
            if wanted in command.id.lower() or wanted in command.label.lower()
        ]


# ─── helpers ──────────────────────────────────────────────────────────────────


def _ended(task: "asyncio.Task[_Exported]") -> None:
    """Log an export's failure: nobody may wait for it any more (a render had its page)."""
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.warning("libreoffice's export to PDF failed: %s: %s", type(error).__name__, error)


async def _wait(
    futures: "Sequence[asyncio.Future[_Exported] | asyncio.Future[_Page]]",
    deadline: float,
    export_deadline: float,
) -> None:
    """Wait until one of the futures is done, or refuse at the deadline; none is cancelled."""
    try:
        async with asyncio.timeout(deadline):
            await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
    except TimeoutError:
        raise AppTimeout(
            f"libreoffice's export to PDF took longer than {deadline:g} s; it goes on for "
            f"up to {export_deadline:g} s, so try again"
        ) from None


def _outcome(task: "asyncio.Task[_Exported]") -> _Exported:
    """Return a finished export's PDF, or raise its failure."""
    if task.cancelled():
        raise AppCrashed("libreoffice's export to PDF was stopped: the adapter was closed")
    return task.result()


def _read_all(source: IO[bytes], limit: int) -> bytes:
    source.seek(0)
    return source.read(limit + 1)


def _fingerprint(content: bytes) -> tuple[str, str]:
    sniffer = Sniffer()
    try:
        return fingerprint(content, check=sniffer), sniffer.media_type()
    except UnsafeFile as error:
        if error.reason in _TOO_LARGE:
            raise AppTooLarge(str(error)) from error
        raise AppRefused(f"not a .docx, .xlsx or .pptx: {error}") from error


def _format_of_screened(content: bytes) -> str:
    # The file was screened already (its limits hold): only its two naming parts are read.
    try:
        with zipfile.ZipFile(io.BytesIO(content)) as package:
            names = {name.casefold(): name for name in package.namelist()}
            parts = [
                package.read(names[name.casefold()])[: MAX_SNIFFED + 1]
                if name.casefold() in names
                else None
                for name in (CONTENT_TYPES, RELATIONSHIPS)
            ]
        return media_type_of(parts[0] or b"", parts[1])
    except (zipfile.BadZipFile, UnsafeFile) as error:
        raise AppRefused(f"not a .docx, .xlsx or .pptx: {error}") from error


def _check_format(media: str, commands: Sequence[AppCommand]) -> None:
    """Refuse a batch that holds a command of another format than its file's."""
    for index, step in enumerate(commands):
        other = next(of for of, catalog in CATALOGS.items() if step.command in catalog)
        if other != media:
            raise AppRefused(
                f"command {index} (`{step.command}`): a command for {kind_name(other)}, and "
                f"the file is {kind_name(media)}"
            )


def _saved_fingerprint(content: bytes) -> str:
    try:
        return fingerprint(content)
    except UnsafeFile as error:
        raise AppCrashed(
            f"libreoffice saved something that is not a .docx, .xlsx or .pptx: {error}"
        ) from error


async def _output(
    argv: Sequence[str], deadline: float, what: str, given: bytes | None = None
) -> bytes:
    """Return what a short program prints (given ``given`` on stdin), killed at the deadline.

    The program runs in a session of its own; it returns, or fails, only once every process of
    that session's group is gone.
    """
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.DEVNULL if given is None else subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as error:
        raise AppCrashed(f"{what} could not start: {error}") from error
    try:
        async with asyncio.timeout(deadline):
            out, _ = await process.communicate(given)
    except TimeoutError:
        raise AppTimeout(f"{what} took longer than {deadline:g} s and was stopped") from None
    finally:
        await processes.reap(process.pid, process.wait, what=what)
    if process.returncode:
        raise AppCrashed(f"{what} failed with exit status {process.returncode}")
    return out


async def _rasterise(
    sealing: Sequence[str], pdf: bytes, page: int, dpi: float, deadline: float
) -> bytes:
    # A PPM, written as a PNG here: pdftoppm's own PNG costs most of a page's time (_png). The
    # PDF is made from an untrusted document: pdftoppm runs sealed as the office does.
    argv = [*sealing, "pdftoppm", "-f", str(page), "-l", str(page), "-r", f"{dpi:g}", "-"]
    return await asyncio.to_thread(png_from_ppm, await _output(argv, deadline, "pdftoppm", pdf))
