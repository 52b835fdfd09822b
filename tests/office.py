"""LibreOffice for the tests that need the real office: a skip where it can't run, never in CI.

Where ``soffice``, Debian's ``python3-uno`` or ``pdftoppm`` is missing, a test that needs them
skips with the reason, except in CI (``CI=true``), where the skip is a failure: CI installs them.
:func:`running` finds what a test's jobs left alive, by a path their command lines name.
"""

import os
from pathlib import Path

import pytest

from artifactr.files.apps.libreoffice import available

REQUIRED = os.environ.get("CI") == "true"
"""In CI the office must be here: a skip is a failure."""


def need_office() -> None:
    """Skip (fail in CI) where soffice, python3-uno or pdftoppm is missing."""
    found = available()
    if not found.ok:
        reason = "LibreOffice can't run here: " + "; ".join(found.missing)
        if REQUIRED:
            pytest.fail(reason + " (CI=true requires it)")
        pytest.skip(reason)


def running(marker: str) -> list[int]:
    """Return the pids of live processes whose command line names ``marker``."""
    pids: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            pids.append(int(entry.name))
    return pids
