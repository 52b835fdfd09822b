"""Benchmark: workbooks and decks through the LibreOffice adapter, against bare LibreOffice.

Measured in one run, rounds interleaved, each side the median of its rounds (ADR-0021):

1. **Edit**: five Calc commands on a one-sheet workbook through ``apply`` (which recalculates,
   saves and inspects the saved file), against a bare UNO load, ``calculateAll`` and save of the
   same file by a minimal script under the system Python. Target: at most 1.5x.
2. **First slide**: ``render(page 1)`` of a new 40-slide deck through the adapter, against bare
   ``soffice --convert-to pdf`` then ``pdftoppm`` of page 1, on a copy of a profile initialised
   once (as the adapter's jobs copy theirs). Target: at most 1.3x. Bare on a new profile is
   printed beside it, not the baseline: it initialises the profile and starts again.
3. **A long sheet**: the inspection of a 10,000-row sheet (three columns, one a formula): its
   time, and the driver's peak memory (the job's largest resident set, from ``/proc``).

Run: ``uv run --no-sync python -m scripts.bench.sheets [--rounds 3] [--rows 10000]``
(``--quick``: one round, 200 rows).
"""

import asyncio
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable
from pathlib import Path
from typing import Final

from artifactr.files.apps.libreoffice import LibreOffice, available
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.documents import Cell, build_pptx, build_xlsx
from scripts.bench._harness import judged, machine_load, parser, run

BARE_UNO: Final = """
import os, subprocess, sys, time, uno
directory, pipe = sys.argv[1], sys.argv[2]
office = subprocess.Popen(["soffice", "--headless", "--norestore", "--nologo", "--nodefault",
    "-env:UserInstallation=" + uno.systemPathToFileUrl(directory + "/profile"),
    "--accept=pipe,name=" + pipe + ";urp;"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    start_new_session=True)
local = uno.getComponentContext()
manager = local.ServiceManager
resolver = manager.createInstanceWithContext("com.sun.star.bridge.UnoUrlResolver", local)
while True:
    try:
        context = resolver.resolve("uno:pipe,name=" + pipe + ";urp;StarOffice.ComponentContext")
        break
    except Exception:
        time.sleep(0.05)
desktop = context.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", context)
def prop(name, value):
    p = uno.createUnoStruct("com.sun.star.beans.PropertyValue"); p.Name = name; p.Value = value
    return p
source = uno.systemPathToFileUrl(directory + "/in.xlsx")
document = desktop.loadComponentFromURL(source, "_blank", 0, (prop("Hidden", True),))
document.calculateAll()
document.storeToURL(uno.systemPathToFileUrl(directory + "/out.xlsx"),
    (prop("FilterName", "Calc MS Excel 2007 XML"),))
os.killpg(office.pid, 9)
"""
"""A bare UNO load, recalculation and save: start, connect, load, calculate, store, kill."""

EDIT: Final = [
    AppCommand(command="cell.set", params={"cell": "B3", "value": 450}),
    AppCommand(command="cell.set", params={"cell": "C4", "value": '=IF(B4>1000,"high","low")'}),
    AppCommand(command="range.setBold", params={"range": "A1:B1"}),
    AppCommand(command="range.setNumberFormat", params={"range": "B2:B4", "format": "#,##0"}),
    AppCommand(command="cells.replaceAll", params={"find": "Food", "replace": "Meals"}),
]
"""The five commands of the edit."""


def workbook(number: int) -> bytes:
    """Return a one-sheet workbook whose content differs by ``number``."""
    rows: list[list[Cell]] = [
        ["Item", "Cost"],
        ["Rent", 1200 + number],
        ["Food", 300],
        ["Total", "=SUM(B2:B3)"],
    ]
    return build_xlsx({"Budget": rows})


def deck(number: int, slides: int = 40) -> bytes:
    """Return a deck of ``slides`` slides whose content differs by ``number``."""
    return build_pptx(
        [(f"Slide {n} of review {number}", f"Point {n}a\nPoint {n}b") for n in range(slides)]
    )


def long_sheet(rows: int) -> bytes:
    """Return a workbook of one sheet of ``rows`` rows: a label, a number and a formula."""
    header: list[Cell] = ["Item", "Cost", "Double"]
    lines: list[list[Cell]] = [[f"item {n}", n, f"=B{n + 2}*2"] for n in range(rows)]
    body = [header, *lines]
    return build_xlsx({"Long": body})


def bare_save(source: bytes) -> None:
    """Load, recalculate and save the workbook over UNO, the bare way."""
    with tempfile.TemporaryDirectory() as directory:
        (Path(directory) / "in.xlsx").write_bytes(source)
        subprocess.run(
            ["/usr/bin/python3", "-c", BARE_UNO, directory, f"bench-{uuid.uuid4().hex}"],
            capture_output=True,
            check=True,
            timeout=120,
        )


def initialised_profile(folder: Path) -> Path:
    """Return an office profile initialised once (``--terminate_after_init``), in ``folder``.

    A bare ``soffice`` on a new profile initialises it, then starts again: a cost the adapter's
    jobs never pay (they copy a template profile initialised once). The fair baseline copies
    this one, as the adapter does.
    """
    profile = folder / "template"
    subprocess.run(
        [
            "soffice",
            "--headless",
            "--terminate_after_init",
            f"-env:UserInstallation={profile.as_uri()}",
        ],
        capture_output=True,
        check=True,
    )
    return profile


def bare_render(source: bytes, template: Path | None = None) -> None:
    """Render page 1 the bare way: ``soffice --convert-to pdf`` then ``pdftoppm``.

    On a copy of ``template`` (a profile initialised once), or on a new profile if None.
    """
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        (folder / "in.pptx").write_bytes(source)
        if template is not None:
            shutil.copytree(template, folder / "profile")
        subprocess.run(
            [
                "soffice",
                "--headless",
                f"-env:UserInstallation={(folder / 'profile').as_uri()}",
                "--convert-to",
                "pdf",
                "--outdir",
                directory,
                str(folder / "in.pptx"),
            ],
            capture_output=True,
            check=True,
        )
        pdf = str(folder / "in.pdf")
        argv = ["pdftoppm", "-f", "1", "-l", "1", "-r", "96", "-png", pdf, str(folder / "page")]
        subprocess.run(argv, capture_output=True, check=True)


async def timed(work: Awaitable[object]) -> float:
    """Return how many seconds a piece of work took."""
    start = time.perf_counter()
    await work
    return time.perf_counter() - start


def _resident(marker: str) -> int:
    """Return the resident kilobytes of the processes whose command line names ``marker``."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() not in (entry / "cmdline").read_bytes():
                continue
            status = (entry / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total


async def peak(work: Awaitable[object], marker: str) -> tuple[float, int]:
    """Return how long ``work`` took and the most memory (KiB) its jobs held at once."""
    task = asyncio.ensure_future(timed(work))
    most = 0
    while not task.done():
        most = max(most, await asyncio.to_thread(_resident, marker))
        await asyncio.sleep(0.1)
    return await task, most


async def main(rounds: int, rows: int) -> bool:
    """Run the figures and print them; return whether a target is missed."""
    found = available()
    if not found:
        raise SystemExit("LibreOffice can't run here: " + "; ".join(found.missing))
    app = LibreOffice(export_deadline=300)
    try:
        return await measure(app, rounds, rows)
    finally:
        await app.close()


async def measure(app: LibreOffice, rounds: int, rows: int) -> bool:
    """Run the figures on ``app`` and print them; return whether a target is missed."""
    await app.about()
    await app.isolated()
    edits: list[float] = []
    bare_saves: list[float] = []
    renders: list[float] = []
    bare_renders: list[float] = []
    fresh_renders: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as directory:
        template = await asyncio.to_thread(initialised_profile, Path(directory))
        for number in range(rounds):
            source = workbook(number)
            bare_saves.append(await timed(asyncio.to_thread(bare_save, source)))
            edits.append(await timed(app.apply(source, EDIT, author="Bench", deadline=120)))
            slides = deck(number)
            bare_renders.append(await timed(asyncio.to_thread(bare_render, slides, template)))
            renders.append(await timed(app.render(slides, 1, deadline=120)))
            fresh_renders.append(await timed(asyncio.to_thread(bare_render, slides)))
    seconds, memory = await peak(app.inspect(long_sheet(rows), deadline=300), "libreoffice-")

    edit_ratio = statistics.median(edits) / statistics.median(bare_saves)
    render_ratio = statistics.median(renders) / statistics.median(bare_renders)
    print(
        f"edit x5      adapter {statistics.median(edits):6.2f} s  bare UNO load+recalc+save ",
        end="",
    )
    print(f"{statistics.median(bare_saves):6.2f} s  ratio {edit_ratio:4.2f}x  (target <= 1.5x)")
    print(
        f"slide 1/40   adapter {statistics.median(renders):6.2f} s  bare convert+pdftoppm     ",
        end="",
    )
    bare = statistics.median(bare_renders)
    print(f"{bare:6.2f} s  ratio {render_ratio:4.2f}x  (target <= 1.3x)")
    fresh = statistics.median(fresh_renders)
    print(
        f"             bare on a new profile {fresh:6.2f} s (it initialises the profile, then "
        f"starts again): adapter {statistics.median(renders) / fresh:4.2f}x, not the baseline"
    )
    print(
        f"long sheet   {rows} rows inspected in {seconds:5.2f} s, "
        f"peak memory {memory / 1024:6.1f} MiB"
    )
    print(f"rounds: {rounds}; isolated network: {await app.isolated()}; {machine_load()}")
    return edit_ratio > 1.5 or render_ratio > 1.3


if __name__ == "__main__":
    arguments = parser(__doc__, quick="one round, 200 rows")
    arguments.add_argument("--rounds", type=int, default=3, help="rounds of each figure")
    arguments.add_argument("--rows", type=int, default=10_000, help="rows of the long sheet")
    options = arguments.parse_args()
    rounds, rows = (1, 200) if options.quick else (options.rounds, options.rows)
    sys.exit(run(lambda: judged(main(rounds, rows), options.quick)))
