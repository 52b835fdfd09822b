"""Settings: the worker's token, its app, and every limit, from the environment (RFC-0003).

The deployment sets them as environment variables (``worker/compose.yaml``); tests build
:class:`Settings` directly. Every limit has a default, named here, and a variable to change it:

====================== ============================ ==============================================
variable               default                      what it limits
====================== ============================ ==============================================
WORKER_TOKEN_FILE      (required, or WORKER_TOKEN)  the bearer token, from the deployment's secret
WORKER_APP             ``wordcraft``                the app: ``wordcraft`` or ``libreoffice``
WORDCRAFT_CLI          ``wordcraft-cli``            WordCraft's command line (split like a shell)
LIBREOFFICE_SOFFICE    ``soffice``                  LibreOffice's program
LIBREOFFICE_PYTHON     ``/usr/bin/python3``         the Python with Debian's ``python3-uno``
WORKER_PDF_CACHE       64 MiB                       LibreOffice's PDFs kept for the next render
WORKER_POOL            a core each, at most 4       LibreOffice offices started ahead, one job each
WORKER_POOL_MEMORY     0 (no cap)                   bytes the pool's idle offices may hold
WORKER_POOL_WARM       ``docx``                     formats a pooled office warms up for, or none
WORKER_PASS_ENV        (none)                       names of variables passed on to the app
WORKER_BUILD           (none)                       the image's digest, for provenance
WORKER_HOST/PORT       127.0.0.1, 8000              where it listens
WORKER_EDIT_DEADLINE   30 s                         an edit, inspection or listing, at most
WORKER_RENDER_DEADLINE 10 s                         a render, at most
WORKER_QUEUE           4                            calls waiting while a job runs
WORKER_QUEUE_WAIT      5 s                          how long a call waits for its turn
WORKER_UPLOAD_TIMEOUT  30 s                         how long a call's body may take to arrive
WORKER_RETRY_AFTER     2 s                          the ``Retry-After`` of a busy reply
WORKER_MAX_FILE        64 MiB                       the file going in, and the saved file
WORKER_MAX_REPLY       64 MiB                       what the app writes on stdout in one job
WORKER_MAX_CALL        1 MiB                        the call's line of JSON
WORKER_CPU             the deadline, rounded up     the app's CPU seconds (``RLIMIT_CPU``)
WORKER_MEMORY          1 GiB                        the app's address space (``RLIMIT_AS``)
WORKER_FILE_SIZE       128 MiB                      any file the app writes (``RLIMIT_FSIZE``)
WORKER_OPEN_FILES      64                           the app's file descriptors (``RLIMIT_NOFILE``)
WORKER_MAX_DEPTH       256                          XML nesting (:mod:`.screen`)
WORKER_MAX_ELEMENTS    8,000,000                    XML elements in a package
WORKER_MAX_TOKEN       8 MiB                        one XML token
WORKER_MAX_PIXELS      100,000,000                  an image's declared pixels
WORKER_MAX_NESTING     2                            packages inside packages
====================== ============================ ==============================================

One worker runs one app. LibreOffice's jobs (:class:`artifactr.files.apps.libreoffice.LibreOffice`)
run its driver under the same launcher and limits as WordCraft's, with the CPU time of the
longest deadline (the driver and the office it starts each get it). 1 GiB of address space is
enough for the office: measured with LibreOffice 7.4, 512 MiB aborts it at start, 768 MiB
inspects and renders a short document, 1 GiB a 124-page one with a 6,000 x 6,000 picture.

The token must be at least :data:`MIN_TOKEN` characters: the deployment generates it
(``openssl rand -hex 32``), and a short one is refused at start.
"""

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, get_args

from artifactr.files.apps.jobs import MAX_FILE, MAX_REPLY
from artifactr.files.apps.libreoffice import machine_size
from artifactr.files.core.app_port import EDIT_DEADLINE, RENDER_DEADLINE

from .screen import (
    DEFAULT_SCREENING,
    MAX_DEPTH,
    MAX_ELEMENTS,
    MAX_NESTING,
    MAX_PIXELS,
    MAX_TOKEN,
    Screening,
)

_MIB: Final = 1024 * 1024

MIN_TOKEN: Final = 32
"""The fewest characters a bearer token may have."""

QUEUE: Final = 4
"""Calls that may wait while a job runs; one more is refused as busy at once."""

QUEUE_WAIT: Final = 5.0
"""Seconds a call waits for its turn before it is refused as busy."""

UPLOAD_TIMEOUT: Final = 30.0
"""Seconds a call's body may take to arrive once its turn has come: a stalled upload never
holds the worker."""

RETRY_AFTER: Final = 2
"""Seconds a busy reply asks the caller to wait (``Retry-After``)."""

MAX_CALL: Final = _MIB
"""Bytes the call's line of JSON may take."""

WorkerApp = Literal["wordcraft", "libreoffice"]
"""The apps a worker can run."""

APPS: Final[tuple[WorkerApp, ...]] = get_args(WorkerApp)
"""The apps a worker can run, as ``WORKER_APP`` names them."""

POOL_WARM: Final = ("docx",)
"""The formats a pooled office warms up for, by default (``WORKER_POOL_WARM``)."""

WARM_FORMATS: Final = ("docx", "xlsx", "pptx")
"""The formats a pooled office can warm up for."""

PDF_CACHE: Final = 64 * _MIB
"""Bytes of PDFs LibreOffice keeps in the worker, so the next page of a file needs no office."""

MEMORY: Final = 1024 * _MIB
"""Bytes of address space the app may map (``RLIMIT_AS``)."""

FILE_SIZE: Final = 2 * MAX_FILE
"""Bytes of any one file the app may write (``RLIMIT_FSIZE``)."""

OPEN_FILES: Final = 64
"""File descriptors the app may hold (``RLIMIT_NOFILE``)."""


class Misconfigured(ValueError):
    """A setting is missing or not valid: the worker doesn't start."""


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything the worker is told: its token, its app, and its limits."""

    token: str = field(repr=False)
    """The bearer token every call must carry."""
    app: WorkerApp = "wordcraft"
    """The app every job runs in."""
    cli: tuple[str, ...] = ("wordcraft-cli",)
    """WordCraft's command line; ``mcp`` and ``--author`` follow it."""
    soffice: str = "soffice"
    """LibreOffice's program."""
    uno_python: str = "/usr/bin/python3"
    """The Python that imports ``uno``, which runs LibreOffice's driver."""
    pdf_cache: int = PDF_CACHE
    """Bytes of PDFs LibreOffice keeps for the next render of the same file."""
    pool: int = field(default_factory=machine_size)
    """LibreOffice offices started ahead, each for exactly one job and then killed; filled as
    the worker starts. One a core, as the machine's memory allows, at most 4, by default
    (ADR-0033)."""
    pool_memory: int = 0
    """The most resident bytes the pool's idle offices may hold (0: no cap)."""
    pool_warm: tuple[str, ...] = POOL_WARM
    """The formats a pooled office warms up for, on a document of its own, while it waits."""
    app_env: Mapping[str, str] = field(default_factory=dict[str, str])
    """Variables set for the app, over a minimal environment."""
    build: str | None = None
    """The app's build (the image's digest), recorded in every inspection."""
    host: str = "127.0.0.1"
    """Where the worker listens."""
    port: int = 8000
    """The port it listens on."""
    edit_deadline: float = EDIT_DEADLINE
    """Seconds an edit, an inspection or a listing may take, at most."""
    render_deadline: float = RENDER_DEADLINE
    """Seconds a render may take, at most."""
    queue: int = QUEUE
    """Calls that may wait while a job runs."""
    queue_wait: float = QUEUE_WAIT
    """Seconds a call waits for its turn."""
    upload_timeout: float = UPLOAD_TIMEOUT
    """Seconds a call's body may take to arrive."""
    retry_after: int = RETRY_AFTER
    """Seconds a busy reply asks the caller to wait."""
    max_file: int = MAX_FILE
    """Bytes of the file going in, and of the saved file."""
    max_reply: int = MAX_REPLY
    """Bytes the app may write on stdout in one job."""
    max_call: int = MAX_CALL
    """Bytes of the call's line of JSON."""
    cpu: int | None = None
    """Seconds of CPU time the app may use; the job's deadline, rounded up, if None."""
    memory: int = MEMORY
    """Bytes of address space the app may map."""
    file_size: int = FILE_SIZE
    """Bytes of any one file the app may write."""
    open_files: int = OPEN_FILES
    """File descriptors the app may hold."""
    screening: Screening = DEFAULT_SCREENING
    """The limits every file is screened against before the app sees it."""

    def __post_init__(self) -> None:
        if len(self.token) < MIN_TOKEN:
            raise Misconfigured(f"the token must have at least {MIN_TOKEN} characters")

    def cpu_for(self, deadline: float) -> int:
        """Return the CPU seconds a job with this deadline may use."""
        return self.cpu if self.cpu is not None else max(1, math.ceil(deadline))

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> "Settings":
        """Return the settings the environment gives (the table in the module's docstring).

        Raises:
            Misconfigured: If there is no token, or a number isn't one.
        """
        read = _Reader(environ)
        screening = Screening(
            max_depth=read.integer("WORKER_MAX_DEPTH", MAX_DEPTH),
            max_elements=read.integer("WORKER_MAX_ELEMENTS", MAX_ELEMENTS),
            max_token=read.integer("WORKER_MAX_TOKEN", MAX_TOKEN),
            max_pixels=read.integer("WORKER_MAX_PIXELS", MAX_PIXELS),
            max_nesting=read.integer("WORKER_MAX_NESTING", MAX_NESTING),
        )
        passed = [name.strip() for name in environ.get("WORKER_PASS_ENV", "").split(",")]
        cpu = environ.get("WORKER_CPU")
        app = environ.get("WORKER_APP", "wordcraft")
        if app not in APPS:
            raise Misconfigured(f"WORKER_APP must be one of {', '.join(APPS)}, not {app!r}")
        return cls(
            token=_token(environ),
            app=app,
            soffice=environ.get("LIBREOFFICE_SOFFICE", "soffice"),
            uno_python=environ.get("LIBREOFFICE_PYTHON", "/usr/bin/python3"),
            pdf_cache=read.integer("WORKER_PDF_CACHE", PDF_CACHE),
            pool=read.integer("WORKER_POOL", machine_size(), least=0),  # 0: no pool
            pool_memory=read.integer("WORKER_POOL_MEMORY", 0),
            pool_warm=_warm(environ.get("WORKER_POOL_WARM")),
            cli=tuple(shlex.split(environ.get("WORDCRAFT_CLI", "wordcraft-cli"))),
            app_env={name: environ[name] for name in passed if name in environ},
            build=environ.get("WORKER_BUILD") or None,
            host=environ.get("WORKER_HOST", "127.0.0.1"),
            port=read.integer("WORKER_PORT", 8000),
            edit_deadline=read.number("WORKER_EDIT_DEADLINE", EDIT_DEADLINE),
            render_deadline=read.number("WORKER_RENDER_DEADLINE", RENDER_DEADLINE),
            queue=read.integer("WORKER_QUEUE", QUEUE),
            queue_wait=read.number("WORKER_QUEUE_WAIT", QUEUE_WAIT),
            upload_timeout=read.number("WORKER_UPLOAD_TIMEOUT", UPLOAD_TIMEOUT),
            retry_after=read.integer("WORKER_RETRY_AFTER", RETRY_AFTER),
            max_file=read.integer("WORKER_MAX_FILE", MAX_FILE),
            max_reply=read.integer("WORKER_MAX_REPLY", MAX_REPLY),
            max_call=read.integer("WORKER_MAX_CALL", MAX_CALL),
            cpu=None if cpu is None else read.integer("WORKER_CPU", 0),
            memory=read.integer("WORKER_MEMORY", MEMORY),
            file_size=read.integer("WORKER_FILE_SIZE", FILE_SIZE),
            open_files=read.integer("WORKER_OPEN_FILES", OPEN_FILES),
            screening=screening,
        )


def _warm(value: str | None) -> tuple[str, ...]:
    """Return the formats ``WORKER_POOL_WARM`` names (commas between them; ``none``: none)."""
    if value is None:
        return POOL_WARM
    named = tuple(name.strip() for name in value.split(",") if name.strip())
    if named == ("none",):
        return ()
    unknown = [name for name in named if name not in WARM_FORMATS]
    if unknown or not named:
        raise Misconfigured(
            f"WORKER_POOL_WARM must name {', '.join(WARM_FORMATS)} (commas between them) "
            f"or none, not {value!r}"
        )
    return named


def _token(environ: Mapping[str, str]) -> str:
    path = environ.get("WORKER_TOKEN_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as error:
            raise Misconfigured(f"the token file {path} can't be read: {error}") from error
    token = environ.get("WORKER_TOKEN", "").strip()
    if not token:
        raise Misconfigured("no token: set WORKER_TOKEN_FILE (a secret's file) or WORKER_TOKEN")
    return token


@dataclass(frozen=True)
class _Reader:
    environ: Mapping[str, str]

    def integer(self, name: str, default: int, least: int = 1) -> int:
        value = self.environ.get(name)
        if value is None:
            return default
        try:
            number = int(value)
        except ValueError:
            raise Misconfigured(f"{name} must be a whole number, not {value!r}") from None
        if number < least:
            said = "positive" if least == 1 else f"at least {least}"
            raise Misconfigured(f"{name} must be {said}, not {number}")
        return number

    def number(self, name: str, default: float) -> float:
        value = self.environ.get(name)
        if value is None:
            return default
        try:
            number = float(value)
        except ValueError:
            raise Misconfigured(f"{name} must be a number, not {value!r}") from None
        if not (math.isfinite(number) and number > 0):
            raise Misconfigured(f"{name} must be a positive number, not {value}")
        return number
