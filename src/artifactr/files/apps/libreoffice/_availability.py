"""What LibreOffice needs here: the office, a Python with ``uno``, and poppler (ADR-0008).

:func:`available` says whether the adapter can run on this machine and, if not, what to install,
and which kinds of file its office opens; :func:`can_unshare` whether its jobs can run without a
network. :func:`installed` reads the office's version and kinds from its installation's files,
never starting it (ADR-0027): ``soffice --version`` would start the whole office, unsealed.
"""

import html
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SYSTEM_PYTHON: Final = "/usr/bin/python3"
"""The Python that has Debian's ``python3-uno``."""

KINDS: Final = (
    ("docx", "writer", "libreoffice-writer"),
    ("xlsx", "calc", "libreoffice-calc"),
    ("pptx", "impress", "libreoffice-impress"),
)
"""Each kind of file, the office's module that opens it (its ``share/registry/<module>.xcd``),
and the package that brings that module."""


@dataclass(frozen=True)
class Installation:
    """What the office's installation says of itself, as ``soffice --version`` would."""

    version: str | None
    """Its version (``7.4.7.2``), or None if its files don't say."""
    build: str | None
    """Its build (``40(Build:2)``), or None."""
    kinds: tuple[str, ...]
    """The kinds it opens (``docx``, ``xlsx``, ``pptx``): its Writer, Calc and Impress."""


def installed(soffice: str = "soffice") -> Installation:
    """Return the version, build and kinds the office's installation files say, starting nothing.

    The program is followed to the installation's ``program`` folder: its ``versionrc`` holds
    the build, ``../share/registry/main.xcd`` the product's version, and each module installed
    its own ``<module>.xcd`` there. A program that is no installation's (a wrapper script) says
    nothing: no version, no build, no kinds.
    """
    found = shutil.which(soffice)
    program = Path(found).resolve().parent if found is not None else Path("/nonexistent")
    registry = program.parent / "share" / "registry"
    build = _setting(_read(program / "versionrc"), r"^buildid=(.+)$")
    main = _read(registry / "main.xcd")
    version = _setting(main, r'<prop oor:name="ooSetupVersionAboutBox">\s*<value>([^<]+)<')
    suffix = _setting(main, r'<prop oor:name="ooSetupVersionAboutBoxSuffix">\s*<value>([^<]+)<')
    kinds = tuple(kind for kind, module, _ in KINDS if (registry / f"{module}.xcd").is_file())
    return Installation(version and version + (suffix or ""), build, kinds)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _setting(text: str, pattern: str) -> str | None:
    found = re.search(pattern, text, re.MULTILINE)
    return html.unescape(found[1].strip()) if found else None


@dataclass(frozen=True)
class Availability:
    """Whether LibreOffice can run here, and if not, why not."""

    soffice: str | None
    """The office's program, if found."""
    python: str | None
    """The Python with ``uno``, if found."""
    pdftoppm: str | None
    """Poppler's rasteriser, if found."""
    missing: tuple[str, ...]
    """What is missing, in words, with the package that brings it."""
    kinds: tuple[str, ...] = ()
    """The kinds of file the office here opens (``docx``, ``xlsx``, ``pptx``)."""
    lacking: tuple[str, ...] = ()
    """The kinds it can't open, each with the package that brings its module: the office
    refuses such a file, though the other kinds still run."""

    @property
    def ok(self) -> bool:
        """Whether the adapter can run here: the office, ``uno`` and ``pdftoppm`` are here."""
        return not self.missing

    @property
    def opens(self) -> str:
        """The kinds the office opens and those it can't, in words (``docx, xlsx; not pptx``)."""
        said = ", ".join(self.kinds) or "nothing"
        return f"{said}; not {', '.join(self.lacking)}" if self.lacking else said

    def __bool__(self) -> bool:
        return self.ok


def available(soffice: str = "soffice", python: str = SYSTEM_PYTHON) -> Availability:
    """Return whether ``soffice``, a Python with ``uno`` and ``pdftoppm`` are here, or why not.

    It says too which kinds of file the office opens: Writer's, Calc's and Impress's are each
    a package of their own, and a kind whose package is missing is refused by the office.
    """
    missing: list[str] = []
    office = shutil.which(soffice)
    if office is None:
        packages = " ".join(package for _, _, package in KINDS)
        missing.append(f"no `{soffice}` on the PATH (apt-get install {packages})")
    interpreter = shutil.which(python)
    if interpreter is None:
        missing.append(f"no Python at `{python}` (apt-get install python3-uno)")
    elif not _has_uno(interpreter):
        missing.append(f"`{python}` can't import uno (apt-get install python3-uno)")
        interpreter = None
    raster = shutil.which("pdftoppm")
    if raster is None:
        missing.append("no `pdftoppm` on the PATH (apt-get install poppler-utils)")
    kinds = installed(soffice).kinds if office is not None else ()
    lacking = tuple(
        f"{kind} (apt-get install {package})" for kind, _, package in KINDS if kind not in kinds
    )
    return Availability(office, interpreter, raster, tuple(missing), kinds, lacking)


def _has_uno(python: str) -> bool:
    check = subprocess.run(
        [python, "-c", "import uno"], capture_output=True, timeout=30, check=False
    )
    return check.returncode == 0


def can_unshare() -> bool:
    """Return whether a job can run in a network namespace of its own (``unshare --net``)."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return False
    probe = subprocess.run(
        [unshare, "--net", "--", "true"], capture_output=True, timeout=30, check=False
    )
    return probe.returncode == 0
