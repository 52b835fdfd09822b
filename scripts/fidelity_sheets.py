"""Fidelity of workbooks and decks: what LibreOffice's adapter keeps of real .xlsx and .pptx files.

Run by ``scripts/fidelity.py`` for .xlsx and .pptx files (or on its own). Per file, through the
LibreOffice adapter: the inspection, a no-op save (``apply`` with no commands) and a one-command
edit (``cell.set`` of a cell past the used range, or ``slide.setNotes`` of the last slide, set
aside when comparing); and bare LibreOffice's ``soffice --convert-to`` of the same file, the
floor. The saved files are read back with openpyxl and python-pptx, here only, never through
the office, and compared with the original:

- a workbook's **sheets** (names, in order), **values** (each non-empty cell's value as last
  computed), **formulas** (each formula cell's formula, ``_xlfn.`` and spaces aside),
  **comments** (cell and text), **names** (defined names) and **images** (how many);
- a deck's **slides** (how many), **texts** (each slide's shapes' text), **notes** and
  **images** (how many pictures).

Every file either opens or is refused with a typed reason (``AppRefused``, ``UnsafeFile``...),
counted apart; an untyped failure is a failure of the adapter::

    python scripts/fidelity.py --app libreoffice ../shared/corpus/poi-xlsx ../shared/corpus/poi-pptx
"""

import argparse
import io
import math
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import anyio

from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.errors import AppFailure, AppRefused, UnsafeFile

ROOT: Final = Path(__file__).resolve().parents[1]
CORPORA: Final = (
    ROOT.parent / "shared" / "corpus" / "poi-xlsx",
    ROOT.parent / "shared" / "corpus" / "poi-pptx",
)
"""Apache POI's test workbooks and decks beside the project, read by default."""

WORKBOOK: Final = ("sheets", "values", "formulas", "comments", "names", "images")
DECK: Final = ("slides", "texts", "notes", "images")
STAGES: Final = ("save", "edit", "bare")

Read = dict[str, Any]

MAX_ROWS, MAX_COLUMNS = 2_000, 100
"""The cells of a sheet compared, at most: a fuzz case's declared range can hold billions."""

PICTURE: Final = 13
"""python-pptx's MSO_SHAPE_TYPE.PICTURE."""


def read_workbook(data: bytes) -> Read:
    """Return a workbook's aspects, read with openpyxl."""
    import openpyxl

    formulas: Any = openpyxl.load_workbook(io.BytesIO(data))
    values: Any = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
    found: Read = {
        "sheets": list(formulas.sheetnames),
        "values": {},
        "formulas": {},
        "comments": {},
        "names": sorted(formulas.defined_names.keys()),
        "images": _media(data, "xl/media/"),
    }
    for sheet in formulas.worksheets:
        shown = values[sheet.title]
        for row in sheet.iter_rows(max_row=MAX_ROWS, max_col=MAX_COLUMNS):
            for cell in row:
                where = f"{sheet.title}!{cell.coordinate}"
                if isinstance(cell.value, str) and cell.value.startswith("="):
                    found["formulas"][where] = cell.value.replace("_xlfn.", "").replace(" ", "")
                value = shown[cell.coordinate].value
                if value is not None and value != "":
                    found["values"][where] = value
                if cell.comment is not None:
                    found["comments"][where] = " ".join(cell.comment.text.split())
    return found


def read_deck(data: bytes) -> Read:
    """Return a deck's aspects, read with python-pptx."""
    import pptx

    deck: Any = pptx.Presentation(io.BytesIO(data))
    texts: list[list[str]] = []
    notes: list[str] = []
    pictures = 0
    for slide in deck.slides:
        shown: list[str] = []
        for shape in slide.shapes:
            if shape.has_text_frame and shape.text_frame.text.strip():
                shown.append(" ".join(shape.text_frame.text.split()))
            pictures += int(shape.shape_type) == PICTURE
        texts.append(sorted(shown))
        notes_text = ""
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            notes_text = " ".join(slide.notes_slide.notes_text_frame.text.split())
        notes.append(notes_text)
    return {"slides": len(texts), "texts": texts, "notes": notes, "images": pictures}


def _media(data: bytes, folder: str) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        return sum(1 for name in package.namelist() if name.startswith(folder))


def _same_value(before: Any, after: Any) -> bool:
    if isinstance(before, int | float) and isinstance(after, int | float):
        return math.isclose(float(before), float(after), rel_tol=1e-9, abs_tol=1e-9)
    return str(before) == str(after)


def kept(aspect: str, before: Read, after: Read) -> bool | None:
    """Return whether ``after`` keeps the aspect of ``before``; None if ``before`` has none."""
    old, new = before[aspect], after[aspect]
    if not old:
        return None
    if aspect == "values":
        return all(where in new and _same_value(value, new[where]) for where, value in old.items())
    if aspect in {"formulas", "comments"}:
        return all(new.get(where) == value for where, value in old.items())
    if aspect == "names":
        return set(old) <= set(new)
    if aspect == "images":
        return new >= old
    if aspect == "notes":
        return [note for note in old if note] == [note for note in new[: len(old)] if note] or (
            new[: len(old)] == old
        )
    return new == old


@dataclass
class Row:
    """One file's results."""

    name: str
    kind: str
    opened: str = "yes"
    aspects: dict[str, dict[str, bool | None]] = field(
        default_factory=dict[str, dict[str, bool | None]]
    )
    note: str = ""


def _edit(kind: str, original: Read) -> list[AppCommand]:
    if kind == "xlsx":
        sheet = original["sheets"][0] if original["sheets"] else "Sheet1"
        quoted = "'" + sheet.replace("'", "''") + "'"
        return [AppCommand(command="cell.set", params={"cell": f"{quoted}!ZZ9999", "value": 1})]
    slide = max(original["slides"], 1)
    return [AppCommand(command="slide.setNotes", params={"slide": slide, "text": "fidelity"})]


def _set_aside(kind: str, read: Read, original: Read) -> Read:
    if kind == "xlsx":
        return {
            **read,
            "values": {k: v for k, v in read["values"].items() if not k.endswith("!ZZ9999")},
        }
    notes = list(read["notes"])
    if notes and original["slides"]:
        notes[original["slides"] - 1] = original["notes"][original["slides"] - 1]
    return {**read, "notes": notes}


def bare(path: Path, kind: str, deadline: float) -> bytes | None:
    """Return bare LibreOffice's ``--convert-to`` of the file, or None if it made nothing."""
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder)
        try:
            subprocess.run(
                [
                    "soffice",
                    "--headless",
                    f"-env:UserInstallation={(target / 'profile').as_uri()}",
                    "--convert-to",
                    kind,
                    "--outdir",
                    str(target / "out"),
                    str(path),
                ],
                capture_output=True,
                timeout=deadline,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return None
        made = target / "out" / f"{path.stem}.{kind}"
        return made.read_bytes() if made.is_file() else None


async def check(office: LibreOffice, path: Path, deadline: float) -> Row:
    """Run one file through the adapter and bare LibreOffice; compare what each kept."""
    kind = path.suffix.lstrip(".").lower()
    reader: Callable[[bytes], Read] = read_workbook if kind == "xlsx" else read_deck
    aspects = WORKBOOK if kind == "xlsx" else DECK
    row = Row(path.name, kind)
    data = await anyio.Path(path).read_bytes()
    try:
        original = await anyio.to_thread.run_sync(reader, data)
    except Exception as error:  # a fuzz case openpyxl or python-pptx can't read
        original = None
        row.note = f"the reader can't read it: {type(error).__name__}"
    try:
        await office.inspect(data, deadline=deadline)
        saved = (await office.apply(data, [], deadline=deadline)).content
        edit = _edit(kind, original) if original is not None else []
        edited = (await office.apply(data, edit, deadline=deadline)).content
    except (AppRefused, UnsafeFile) as refusal:
        row.opened = f"refused ({type(refusal).__name__})"
        row.note = str(refusal)[:120]
        return row
    except AppFailure as failure:
        row.opened = f"failed ({type(failure).__name__})"
        row.note = str(failure)[:120]
        return row
    if original is None:
        return row
    floor = await anyio.to_thread.run_sync(bare, path, kind, deadline)
    for stage, content in (("save", saved), ("edit", edited), ("bare", floor)):
        if content is None:
            row.aspects[stage] = dict.fromkeys(aspects, False)
            continue
        try:
            read = await anyio.to_thread.run_sync(reader, content)
        except Exception:
            row.aspects[stage] = dict.fromkeys(aspects, False)
            continue
        if stage == "edit":
            read = _set_aside(kind, read, original)
        row.aspects[stage] = {aspect: kept(aspect, original, read) for aspect in aspects}
    return row


def _cell(value: bool | None) -> str:
    return "-" if value is None else "kept" if value else "**lost**"


def render(rows: Sequence[Row]) -> str:
    """Return the Markdown tables: a row a file of each kind, then the totals."""
    out: list[str] = []
    for kind, aspects in (("xlsx", WORKBOOK), ("pptx", DECK)):
        mine = [row for row in rows if row.kind == kind]
        if not mine:
            continue
        heads = [f"{stage} {aspect}" for stage in STAGES for aspect in aspects]
        out.append(f"| file | opens | {' | '.join(heads)} | note |")
        out.append("|---" * (len(heads) + 3) + "|")
        for row in mine:
            cells = [
                _cell(row.aspects.get(stage, {}).get(aspect))
                for stage in STAGES
                for aspect in aspects
            ]
            note = row.note.replace("|", "/").replace("\n", " ")
            out.append(f"| {row.name} | {row.opened} | {' | '.join(cells)} | {note} |")
        opened = Counter(row.opened.split(" ")[0] for row in mine)
        out.append("")
        out.append(
            f"**{len(mine)} .{kind} files**: {opened['yes']} open, {opened['refused']} refused "
            f"with a typed reason, {opened['failed']} failed."
        )
        out.append("")
        out.append("| stage | aspect | kept | lost | none |")
        out.append("|---|---|---|---|---|")
        for stage in STAGES:
            for aspect in aspects:
                seen = Counter(
                    _cell(row.aspects[stage][aspect]) for row in mine if stage in row.aspects
                )
                out.append(
                    f"| {stage} | {aspect} | {seen['kept']} | {seen['**lost**']} | {seen['-']} |"
                )
        out.append("")
    return "\n".join(out)


def files_in(paths: Sequence[Path]) -> list[Path]:
    """Return the .xlsx and .pptx files named, or in the folders named, sorted."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += [p for p in path.iterdir() if p.suffix.lower() in {".xlsx", ".pptx"}]
        elif path.suffix.lower() in {".xlsx", ".pptx"}:
            found.append(path)
    return sorted(found, key=lambda p: (p.suffix, p.name))


async def report(paths: Sequence[Path], jobs: int, deadline: float) -> list[Row]:
    """Check every file, ``jobs`` at a time; return the rows in order."""
    office = LibreOffice()
    rows: dict[Path, Row] = {}
    limit = anyio.Semaphore(jobs)

    async def one(path: Path) -> None:
        async with limit:
            try:
                rows[path] = await check(office, path, deadline)
            except Exception as error:  # untyped: the adapter's failure, reported as such
                rows[path] = Row(
                    path.name, path.suffix.lstrip("."), "failed (untyped)", {}, repr(error)[:120]
                )
            row = rows[path]
            kept_aspects = {
                stage: sorted(k for k, v in found.items() if v is False)
                for stage, found in row.aspects.items()
            }
            print(
                f"{len(rows)}/{len(paths)} {path.name}: {row.opened}; lost {kept_aspects}",
                file=sys.stderr,
            )

    try:
        async with anyio.create_task_group() as group:
            for path in paths:
                group.start_soon(one, path)
    finally:
        await office.close()  # its offices reaped, each job's directory gone, before it returns
    return [rows[path] for path in paths]


def main(argv: Sequence[str] | None = None) -> int:
    """Print the tables for the files named (default: the POI corpora)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--deadline", type=float, default=60.0)
    args = parser.parse_args(argv)
    files = files_in(args.paths or [corpus for corpus in CORPORA if corpus.is_dir()])
    if not files:
        print("no .xlsx or .pptx files here (the POI corpora are not beside the project)")
        return 0
    rows = anyio.run(report, files, args.jobs, args.deadline)
    print(render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
