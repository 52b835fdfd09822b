"""What LibreOffice needs here: the office, a Python with ``uno``, and poppler (ADR-0008).

:func:`available` says whether the adapter can run on this machine and, if not, what to install;
:func:`can_unshare` whether its jobs can run without a network.
"""

import shutil
import subprocess
from dataclasses import dataclass
from typing import Final

SYSTEM_PYTHON: Final = "/usr/bin/python3"
"""The Python that has Debian's ``python3-uno``."""


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

    @property
    def ok(self) -> bool:
        """Whether everything the adapter needs is here."""
        return not self.missing

    def __bool__(self) -> bool:
        return self.ok


def available(soffice: str = "soffice", python: str = SYSTEM_PYTHON) -> Availability:
    """Return whether ``soffice``, a Python with ``uno`` and ``pdftoppm`` are here, or why not."""
    missing: list[str] = []
    office = shutil.which(soffice)
    if office is None:
        missing.append(f"no `{soffice}` on the PATH (apt-get install libreoffice-writer)")
    interpreter = shutil.which(python)
    if interpreter is None:
        missing.append(f"no Python at `{python}` (apt-get install python3-uno)")
    elif not _has_uno(interpreter):
        missing.append(f"`{python}` can't import uno (apt-get install python3-uno)")
        interpreter = None
    raster = shutil.which("pdftoppm")
    if raster is None:
        missing.append("no `pdftoppm` on the PATH (apt-get install poppler-utils)")
    return Availability(office, interpreter, raster, tuple(missing))


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
