"""Standalone: the built wheel installs with each extra and imports outside the project.

Builds the wheel once and checks it ships ``artifactr/files/**`` alone (never
``artifactr/__init__.py``, which artifactr-ai owns). Then, in one fresh virtual environment
and from another directory, so neither ``src/`` nor the project's own environment can stand in
for the installed package, it installs the bare wheel and then each extra in turn, at the
versions ``uv.lock`` pins, and imports what that extra brings: bare, the core imports and an
extra's name is an ImportError naming the extra; ``fastapi``, the router; ``worker``, the
WordCraft adapters; ``mcp``, the MCP tools; ``sqlite``, the SQL adapters with their migrations,
run on a file; ``postgres``, asyncpg; ``s3``, the S3 blobs; ``serve``, the served job. Run by
the test command and by ``moon run :standalone``.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Final

ROOT = Path(__file__).resolve().parents[1]

UV = os.environ.get("UV") or shutil.which("uv") or str(Path.home() / ".local" / "bin" / "uv")
"""The uv to build and install with: ``$UV``, the one on the path, or pip's user install."""

BARE: Final = """
import artifactr.files
from artifactr.files import FakeApp, NativeFiles, WordDocument, fingerprint, integration_gate
extras = [("SqlBlobs", "[sqlite]"), ("files_router", "[fastapi]"), ("Subprocess", "[worker]")]
for name, extra in extras:
    try:
        getattr(artifactr.files, name)
    except ImportError as missing:
        assert extra in str(missing), missing
    else:
        raise AssertionError(f"{name} imported without its extra")
print(artifactr.files.__file__)
"""
"""What the bare wheel imports, and how it refuses an extra's names."""

PROBES: Final = {
    "fastapi": "from artifactr.files import files_router; import artifactr.files.fastapi.portal",
    "worker": "from artifactr.files import Subprocess, Worker",
    "mcp": "import artifactr.files.mcp",
    "sqlite": """
import asyncio, importlib.resources
from artifactr.sql import create_sqlite_engine, migrate
from artifactr.files import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
versions = importlib.resources.files("artifactr.files.migrations") / "versions"
assert any(p.name.startswith("0001") for p in versions.iterdir()), "no migrations in the wheel"
async def main():
    engine = create_sqlite_engine("sqlite+aiosqlite:///probe.db")
    await migrate(engine)
    await migrate_files(engine)
    await engine.dispose()
asyncio.run(main())
""",
    "postgres": "import asyncpg, artifactr.files.sql",
    "s3": "from artifactr.files import S3Blobs; S3Blobs.from_url('s3://probe?region=us-east-1')",
    "serve": "import artifactr.files.programs.serve",
}
"""Each extra, in the order installed, and what it must then import."""


def check_wheel(wheel: Path) -> None:
    """Fail unless the wheel ships artifactr/files alone, with its migrations and py.typed."""
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {name for name in names if not name.startswith("artifactr_files_ai-")}
    assert "artifactr/__init__.py" not in shipped, "the wheel ships artifactr/__init__.py"
    strays = sorted(name for name in shipped if not name.startswith("artifactr/files/"))
    assert not strays, f"the wheel ships more than artifactr/files: {strays}"
    # LibreOffice's driver is run from the installed package by the system Python; the portal
    # renders its templates and serves its stylesheet from the installed package.
    needs = [
        "migrations/env.py",
        "py.typed",
        "apps/libreoffice/driver/__main__.py",
        "fastapi/templates/file.html",
        "fastapi/static/portal.css",
    ]
    for needed in [f"artifactr/files/{name}" for name in needs]:
        assert needed in shipped, f"the wheel lacks {needed}"


def main() -> int:
    """Build, check, install and import the wheel with each extra; return the exit code."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        where = Path(scratch)
        subprocess.run(
            [UV, "build", "-q", "--wheel", "-p", sys.executable, "--out-dir", str(where), ROOT],
            check=True,
            capture_output=True,
        )
        wheel = next(where.glob("*.whl"))
        check_wheel(wheel)
        pins = where / "pins.txt"
        export = ["export", "-q", "--locked", "--no-dev", "--all-extras", "--no-emit-project"]
        subprocess.run([UV, *export, "--no-hashes", "-o", str(pins)], cwd=ROOT, check=True)
        venv = where / "venv"
        subprocess.run([UV, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
        python = str(venv / "bin" / "python")
        steps = [("", BARE), *PROBES.items()]
        for extra, probe in steps:
            wanted = f"{wheel}[{extra}]" if extra else str(wheel)
            subprocess.run(
                [UV, "pip", "install", "-q", "-p", python, "-c", str(pins), wanted], check=True
            )
            found = subprocess.run(
                [python, "-c", probe], cwd=where, capture_output=True, text=True, check=False
            )
            if found.returncode != 0:
                print(f"with [{extra}]: {found.stderr}", file=sys.stderr)
                return 1
            print(f"{extra or 'bare'}: imports {found.stdout.strip()}".rstrip())
    print(f"standalone: {len(steps)} installs in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
