"""The benches can't rot: each runs as the docs say, answers ``--help`` and prints its figures.

Every ``scripts/bench/*.py`` (but ``_`` modules) is found by glob, so a bench added later is
checked too. Each runs as a process of its own, ``python -m scripts.bench.<name> --quick``, the
way the docs run it: it must exit 0 and print its figures, named (a table's header, a figure's
label), never judged by their values: speed is the benches' to show, not the gate's to assert.
The quick runs are parametrized, so pytest-xdist runs them side by side with the rest. Every
command line the README and the docs (but the ADRs) give for a bench runs as written (with
``--help``). A bench interrupted while it holds a PostgreSQL schema drops it.
"""

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.databases import POSTGRES_URL, REQUIRE_POSTGRES, need_postgres
from tests.office import need_office

ROOT: Final = Path(__file__).resolve().parents[1]
BENCH: Final = ROOT / "scripts" / "bench"
BENCHES: Final = sorted(path.stem for path in BENCH.glob("*.py") if not path.name.startswith("_"))
"""Every bench, whoever added it."""

OFFICE: Final = {"cluster", "first_page", "libreoffice", "sheets", "worker_pool"}
"""The benches that run LibreOffice: they skip where it can't run (never in CI)."""

POSTGRES: Final = {"blobs", "edit", "oracle", "wopi"}
"""The benches that measure PostgreSQL too, when it answers."""

FIGURES: Final[dict[str, tuple[str, ...]]] = {
    "blobs": ("put", "bare w", "floor w", "sqlite       1 MiB"),
    "cluster": ("SUMMARY servers: two/one", "SUMMARY workers: two/one", "the third worker adds"),
    "diff": ("page(s) differ", "renders", "peak memory"),
    "edit": ("sqlite   edit", "bare commit", "check-in", "peak memory grew"),
    "first_page": ("page 1      alone", "whole export", "whole PDF", "further"),
    "hostile": ("| file", "zip-bomb", "the next job, a sound document"),
    "libreoffice": ("first page", "edit x5", "long file", "inspect", "| job | warm office"),
    "oracle": ("hidden p50", "GET content", "POST checkout"),
    "sheets": ("edit x5", "slide 1/40", "long sheet"),
    "soak": ("| minute | server RSS MiB", "operations:", "last half"),
    "uploads": ("| uploads |", "budget", "p99 at"),
    "webdav": ("1-page save", "PUT ", "GET ", "peak memory grew"),
    "wopi": (
        "PutFile p50",
        "CheckFileInfo p50",
        "Lock p50",
        "RefreshLock p50",
        "GetLock p50",
        "Unlock p50",
        "bare commit, synced p50",
        "bare commit, unsynced p50",
        "a repeated Lock's CPU p50",
    ),
    "worker_load": ("| workers | clients |", "three workers"),
    "worker_pool": ("| pool | jobs |", "jobs/s/core"),
}
"""What each bench of this project prints: its figures' names (a new bench needs only output)."""

DOCUMENTED: Final = re.compile(r"python (-m scripts\.bench\.(\w+)|scripts/bench/(\w+)\.py)")
"""A bench's command line in the docs: as a module, or as a path."""


def _documented() -> dict[str, set[str]]:
    """Return each bench the README and the docs run, with the forms they run it in.

    ADRs are left out: an accepted one is never rewritten, and says what was run then.
    """
    forms: dict[str, set[str]] = {}
    docs = ROOT / "docs"
    pages = [ROOT / "README.md", *sorted(set(docs.rglob("*.md")) - set(docs.glob("adr/*.md")))]
    for page in pages:
        for found in DOCUMENTED.finditer(page.read_text()):
            name = found[2] or found[3]
            forms.setdefault(name, set()).add("module" if found[2] else "path")
    return forms


def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_benches_are_found() -> None:
    """The glob finds this project's benches, so a bench that stops being one is noticed."""
    assert set(FIGURES) <= set(BENCHES)


def test_every_bench_the_docs_run_exists() -> None:
    """A command line in the docs names a bench that is there."""
    documented = _documented()
    assert documented, "the docs run no bench"
    assert set(documented) <= set(BENCHES), set(documented) - set(BENCHES)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", BENCHES)
def test_a_bench_answers_help_and_prints_its_figures_when_quick(name: str) -> None:
    """``--help`` in every form the docs use, then ``--quick``: exit 0, figures printed."""
    if name in OFFICE:
        need_office()
    for form in sorted(_documented().get(name, {"module"})):
        argv = ["-m", f"scripts.bench.{name}"] if form == "module" else [f"scripts/bench/{name}.py"]
        helped = _run([*argv, "--help"], timeout=120)
        assert helped.returncode == 0, f"{' '.join(argv)} --help:\n{helped.stderr}"
        assert "--quick" in helped.stdout
    ran = _run(["-m", f"scripts.bench.{name}", "--quick"], timeout=280)
    assert ran.returncode == 0, f"{name} --quick exited {ran.returncode}:\n{ran.stderr[-4000:]}"
    assert re.search(r"\d", ran.stdout), f"{name} --quick printed no figure:\n{ran.stdout}"
    for figure in FIGURES.get(name, ()):
        assert figure in ran.stdout, f"{name} --quick didn't print {figure!r}:\n{ran.stdout}"
    if name in FIGURES:
        assert "load average" in ran.stdout, "the machine's load is printed beside the figures"
    if name in POSTGRES and (POSTGRES_URL or REQUIRE_POSTGRES):
        assert "postgres" in ran.stdout
        assert "postgres: skipped" not in ran.stdout


async def _schemas(url: str, prefix: str) -> list[str]:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            rows = await connection.execute(
                text("SELECT nspname FROM pg_namespace WHERE nspname LIKE :prefix"),
                {"prefix": prefix + "%"},
            )
            return [str(row[0]) for row in rows]
    finally:
        await engine.dispose()


@pytest.mark.postgres
@pytest.mark.timeout(300)
async def test_a_bench_stopped_while_it_holds_a_schema_drops_it() -> None:
    """SIGTERM in the middle of the PostgreSQL figures: the bench cleans up and says so."""
    url = need_postgres()
    environ = {**os.environ, "ARTIFACTR_TEST_POSTGRES_URL": url}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "scripts.bench.edit",
        cwd=ROOT,
        env=environ,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    prefix = f"bench_{process.pid}_"
    try:
        while not await _schemas(url, prefix):
            assert process.returncode is None, "the bench ended before it made its schema"
            await asyncio.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, said = await process.communicate()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode == 130, said
    assert b"interrupted: cleaned up" in said
    assert await _schemas(url, prefix) == []
