"""Standalone: the built wheel imports cleanly outside the project, migrations included.

Builds the wheel, installs it with artifactr-ai into a fresh virtual environment, and imports
``artifactr.files`` from another directory, so neither ``src/`` nor the project's own
environment can stand in for the installed package. Run by a test and by ``moon run :standalone``.
"""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

UV = os.environ.get("UV") or shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
"""The uv to build and install with: ``$UV``, the one on the path, or pip's user install."""

PROBE = """
import importlib.resources, artifactr, artifactr.files, artifactr.files.migrations
from artifactr.files.sql import migrate
versions = importlib.resources.files("artifactr.files.migrations") / "versions"
assert any(p.name.startswith("0001") for p in versions.iterdir()), "no migrations in the wheel"
print(artifactr.files.__file__)
"""


def main() -> int:
    """Build, install and import the wheel; return the process's exit code."""
    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        subprocess.run(
            [UV, "build", "--wheel", "--out-dir", str(where / "dist"), str(ROOT)],
            check=True,
            capture_output=True,
        )
        wheel = next((where / "dist").glob("*.whl"))
        venv = where / "venv"
        subprocess.run([UV, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
        python = venv / "bin" / "python"
        subprocess.run(
            [UV, "pip", "install", "-q", "-p", str(python), f"{wheel}[sqlite]"], check=True
        )
        found = subprocess.run(
            [str(python), "-c", PROBE], cwd=where, check=True, capture_output=True, text=True
        )
        print(found.stdout.strip())
        return 0 if str(venv) in found.stdout else 1


if __name__ == "__main__":
    sys.exit(main())
