"""Fidelity: what a save through WordCraft keeps of real .docx files (RFC-0003, nightly report).

Each file goes through the WordCraft adapter as an edit with no commands: opened from bytes,
saved, read back and inspected, in a process of its own. The saved file is then compared with
the original, both read here with the standard library, never through the app:

- **text**: each paragraph's text (``w:t``; deleted text aside), in order, blank ones ignored;
- **comments**: each comment's author and text, whatever its id;
- **changes**: each tracked insertion's and deletion's kind, author and text, in order;
- **images**: the parts under ``media/``, by content, whatever their names.

It prints a Markdown table, a row a file, then the totals. ``--cli`` is WordCraft's command line:
by default ``$WORDCRAFT_CLI``, else the test stand-in, so the nightly job runs it against the real
app and a developer against the stand-in::

    python scripts/fidelity.py [PATH ...] [--cli wordcraft-cli] [--jobs 2] [--env NAME=VALUE]

``--app libreoffice`` runs the LibreOffice adapter instead, and two more stages per file: a
one-command edit (``paragraph.append``, the appended paragraph set aside when comparing), and
the adapter's inspection, whose text, comments and tracked changes are compared with the
original's (each original paragraph's text found in the inspection's text; comments by author
and text; changes by kind, author and text, in order)::

    python scripts/fidelity.py --app libreoffice [PATH ...] [--jobs 2]

With ``--app libreoffice``, .xlsx and .pptx files among the paths (Apache POI's ``poi-xlsx`` and
``poi-pptx`` beside the project) go to ``fidelity_sheets.py``: the same stages, compared with
openpyxl and python-pptx, with bare LibreOffice's ``--convert-to`` as the floor.
"""

import argparse
import hashlib
import io
import os
import shlex
import sys
import zipfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Final, Literal
from xml.etree import ElementTree

import anyio

from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.apps.wordcraft import Subprocess
from artifactr.files.core.app_port import EDIT_DEADLINE, App, AppCommand, Inspection
from artifactr.files.core.errors import AppFailure, UnsafeFile

ROOT: Final = Path(__file__).resolve().parents[1]
CORPUS: Final = ROOT.parent / "shared" / "corpus" / "real"
"""The real .docx files beside the project, read by default."""

STANDIN: Final = ROOT / "tests" / "wordcraft" / "standin.py"
"""The stand-in for ``wordcraft-cli``, run when no real one is named."""

Aspect = Literal["text", "comments", "changes", "images"]
"""What is compared between the original and the saved file."""

ASPECTS: Final[tuple[Aspect, ...]] = ("text", "comments", "changes", "images")
"""The aspects, in the table's order."""

Stage = Literal["edit", "inspect"]
"""A stage beyond the no-op save: a one-command edit, and the app's inspection."""

APPENDED: Final = "Fidelity check."
"""The paragraph the one-command edit appends, set aside when comparing."""

LIBREOFFICE_EDIT: Final = (AppCommand(command="paragraph.append", params={"text": APPENDED}),)
"""The one-command edit for LibreOffice."""

_RELATIONSHIPS: Final = "{http://schemas.openxmlformats.org/package/2006/relationships}"


@dataclass(frozen=True)
class Contents:
    """What the report compares in one .docx, read without the app."""

    text: tuple[str, ...]
    """The non-blank paragraphs' text, whitespace folded."""
    comments: tuple[tuple[str, str], ...]
    """Each comment's author and text, sorted."""
    changes: tuple[tuple[str, str, str], ...]
    """Each tracked change's kind (``ins``/``del``), author and text, in order."""
    images: tuple[str, ...]
    """The SHA-256 of each ``media/`` part, sorted."""


@dataclass
class Row:
    """One file's result."""

    name: str
    """The file's name."""
    kept: dict[Aspect, bool | None] = field(default_factory=dict[Aspect, bool | None])
    """Whether each aspect was kept; None where the original has none of it."""
    failure: str | None = None
    """Why the file could not be saved or read, if it could not."""
    stages: dict[Stage, dict[Aspect, bool | None]] = field(
        default_factory=dict[Stage, dict[Aspect, bool | None]]
    )
    """What the edit and the inspection kept, where they ran."""


def read(data: bytes) -> Contents:
    """Return the text, comments, tracked changes and images of a .docx, read without the app.

    Raises:
        zipfile.BadZipFile: If the bytes are not a zip.
        KeyError: If the package has no main document part.
        xml.etree.ElementTree.ParseError: If a part is not XML.
    """
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        main = _target(archive, "_rels/.rels", "/officeDocument")
        if main is None:
            raise KeyError("the package names no main document part")
        document = ElementTree.fromstring(archive.read(main))
        w = document.tag[: document.tag.index("}") + 1]
        rels = f"{Path(main).parent}/_rels/{Path(main).name}.rels"
        comments_part = _target(archive, rels, "/comments", Path(main).parent)
        notes: list[ElementTree.Element] = []
        if comments_part is not None:
            notes = list(ElementTree.fromstring(archive.read(comments_part)).iter(f"{w}comment"))
        images = sorted(
            hashlib.sha256(archive.read(name)).hexdigest()
            for name in archive.namelist()
            if "/media/" in f"/{name}" and not name.endswith("/")
        )
    kinds, texts = {f"{w}ins", f"{w}del"}, (f"{w}t", f"{w}delText")
    paragraphs = (" ".join(_text(p, f"{w}t").split()) for p in document.iter(f"{w}p"))
    return Contents(
        text=tuple(text for text in paragraphs if text),
        comments=tuple(sorted((c.get(f"{w}author", ""), _text(c, f"{w}t")) for c in notes)),
        changes=tuple(
            (element.tag[len(w) :], element.get(f"{w}author", ""), _text(element, *texts))
            for element in document.iter()
            if element.tag in kinds and element.find(f"{w}r") is not None
        ),
        images=tuple(images),
    )


def _text(element: ElementTree.Element, *tags: str) -> str:
    return "".join(node.text or "" for node in element.iter() if node.tag in tags)


def _target(archive: zipfile.ZipFile, rels: str, kind: str, folder: Path = Path()) -> str | None:
    if rels not in archive.namelist():
        return None
    for relationship in ElementTree.fromstring(archive.read(rels)).iter(
        f"{_RELATIONSHIPS}Relationship"
    ):
        if relationship.get("Type", "").endswith(kind):
            target = relationship.get("Target", "")
            return target.lstrip("/") if target.startswith("/") else str(folder / target)
    return None


def compare(original: Contents, saved: Contents) -> dict[Aspect, bool | None]:
    """Return, for each aspect, whether the saved file kept it; None where there was none."""
    return {
        aspect: (getattr(original, aspect) == getattr(saved, aspect))
        if getattr(original, aspect)
        else None
        for aspect in ASPECTS
    }


async def check(
    app: App, path: Path, deadline: float, edit: Sequence[AppCommand] | None = None
) -> Row:
    """Return what a save with no edits through the app keeps of one file.

    With ``edit``, also what that edit keeps (the :data:`APPENDED` paragraph aside) and what the
    app's inspection of the original reads.
    """
    row = Row(path.name)
    source = await anyio.Path(path).read_bytes()
    try:
        original = read(source)
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError) as error:
        row.failure = f"unreadable here: {error}"
        return row
    try:
        edited = await app.apply(source, [], deadline=deadline)
    except AppFailure as failure:
        row.failure = f"{failure.kind}: {failure.reason}"
        return row
    except UnsafeFile as refusal:
        row.failure = f"unsafe ({refusal.reason}): {refusal}"
        return row
    try:
        row.kept = compare(original, read(edited.content))
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError) as error:
        row.failure = f"saved file unreadable: {error}"
        return row
    if edit is not None:
        try:
            changed = await app.apply(source, edit, deadline=deadline)
            inspection = await app.inspect(source, deadline=deadline)
        except AppFailure as failure:
            row.failure = f"{failure.kind}: {failure.reason}"
            return row
        after = read(changed.content)
        kept = tuple(text for text in after.text if text != APPENDED)
        row.stages["edit"] = compare(original, replace(after, text=kept))
        row.stages["inspect"] = inspected(original, inspection)
    return row


def inspected(original: Contents, inspection: Inspection) -> dict[Aspect, bool | None]:
    """Return whether an inspection read the original's text, comments and tracked changes."""
    # Whitespace aside: the original's text is its w:t only, where the app reads tabs too.
    lines = {"".join(line.split()) for line in inspection.text.splitlines()}
    body = "".join(inspection.text.split())
    comments = tuple(
        sorted(
            (item.author or "", item.text) for item in inspection.review if item.kind == "comment"
        )
    )
    kinds = {"insert": "ins", "delete": "del"}
    changes = tuple(
        (kinds.get(item.change or "", ""), item.author or "", item.text)
        for item in inspection.review
        if item.kind == "change" and item.change is not None
    )
    read: dict[Aspect, bool | None] = {
        "text": all(
            (flat := "".join(text.split())) in lines or flat in body for text in original.text
        ),
        "comments": comments == original.comments,
        "changes": changes == original.changes,
        "images": None,
    }
    return {aspect: (read[aspect] if getattr(original, aspect) else None) for aspect in ASPECTS}


async def report(
    app: App,
    files: Sequence[Path],
    *,
    jobs: int = 2,
    deadline: float = EDIT_DEADLINE,
    edit: Sequence[AppCommand] | None = None,
) -> list[Row]:
    """Return a row for each file, saved (and edited, with ``edit``) ``jobs`` at a time."""
    rows: list[Row | None] = [None] * len(files)
    limiter = anyio.CapacityLimiter(jobs)

    async def one(index: int, path: Path) -> None:
        async with limiter:
            rows[index] = await check(app, path, deadline, edit)

    async with anyio.create_task_group() as tasks:
        for index, path in enumerate(files):
            tasks.start_soon(one, index, path)
    return [row for row in rows if row is not None]


def render(rows: Sequence[Row]) -> str:
    """Return the rows as a Markdown table, then the totals; a table a stage where edited."""
    if any(row.stages for row in rows):
        return render_stages(rows)
    marks = {True: "kept", False: "**lost**", None: "none"}
    lines = ["| file | " + " | ".join(ASPECTS) + " | note |", "|---" * (len(ASPECTS) + 2) + "|"]
    for row in rows:
        cells = ["failed"] * len(ASPECTS) if row.failure else [marks[row.kept[a]] for a in ASPECTS]
        note = (row.failure or "").replace("|", "\\|").replace("\n", " ")[:160]
        lines.append(f"| {row.name} | " + " | ".join(cells) + f" | {note} |")
    saved = [row for row in rows if not row.failure]
    lines += [
        "",
        f"**{len(rows)} files**: {len(saved)} saved, {len(rows) - len(saved)} failed.",
        "",
    ]
    lines += ["| aspect | kept | lost | none |", "|---|---|---|---|"]
    for aspect in ASPECTS:
        counts = Counter(row.kept[aspect] for row in saved)
        lines.append(f"| {aspect} | {counts[True]} | {counts[False]} | {counts[None]} |")
    kinds = Counter((row.failure or "").split(":", 1)[0] for row in rows if row.failure)
    if kinds:
        lines += [
            "",
            "Failures: " + ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items())),
        ]
    return "\n".join(lines)


STAGES: Final[tuple[tuple[str, Stage | None], ...]] = (
    ("save", None),
    ("edit", "edit"),
    ("inspect", "inspect"),
)


def render_stages(rows: Sequence[Row]) -> str:
    """Return a table a row a file with each stage's aspects, then the totals a stage."""
    marks = {True: "kept", False: "**lost**", None: "-"}
    heads = [f"{name} {aspect}" for name, _ in STAGES for aspect in ASPECTS]
    lines = ["| file | " + " | ".join(heads) + " | note |", "|---" * (len(heads) + 2) + "|"]
    done = [row for row in rows if not row.failure]

    def stage(row: Row, which: Stage | None) -> dict[Aspect, bool | None]:
        return row.kept if which is None else row.stages.get(which, {})

    for row in rows:
        cells = (
            ["failed"] * len(heads)
            if row.failure
            else [marks[stage(row, which).get(a)] for _, which in STAGES for a in ASPECTS]
        )
        note = (row.failure or "").replace("|", "\\|").replace("\n", " ")[:160]
        lines.append(f"| {row.name} | " + " | ".join(cells) + f" | {note} |")
    lines += ["", f"**{len(rows)} files**: {len(done)} done, {len(rows) - len(done)} failed.", ""]
    lines += ["| stage | aspect | kept | lost | none |", "|---|---|---|---|---|"]
    for name, which in STAGES:
        for aspect in ASPECTS:
            counts = Counter(stage(row, which).get(aspect) for row in done)
            lines.append(
                f"| {name} | {aspect} | {counts[True]} | {counts[False]} | {counts[None]} |"
            )
    return "\n".join(lines)


def files_in(paths: Sequence[Path]) -> list[Path]:
    """Return the .docx files named, and those in the directories named, sorted."""
    found: list[Path] = []
    for path in paths:
        found += sorted(path.glob("*.docx")) if path.is_dir() else [path]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Run the report; return 1 with ``--check`` if a file failed or lost anything, else 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "paths", nargs="*", type=Path, help=f"files or directories (default: {CORPUS})"
    )
    parser.add_argument(
        "--app",
        choices=("wordcraft", "libreoffice"),
        default="wordcraft",
        help="the adapter to run (default: wordcraft)",
    )
    parser.add_argument(
        "--cli",
        default=os.environ.get("WORDCRAFT_CLI"),
        help="WordCraft's command line (default: $WORDCRAFT_CLI, else the test stand-in)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="files saved at once (default: 2)")
    parser.add_argument("--deadline", type=float, default=EDIT_DEADLINE, help="seconds a file")
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="for the app"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if any file failed or lost")
    args = parser.parse_args(argv)
    command = shlex.split(args.cli) if args.cli else [sys.executable, str(STANDIN)]
    env = dict(pair.split("=", 1) for pair in args.env)
    files = [path for path in files_in(args.paths or [CORPUS]) if path.suffix.lower() == ".docx"]
    app: App = Subprocess(command, env=env)
    edit = None
    if args.app == "libreoffice":
        app, edit = LibreOffice(), LIBREOFFICE_EDIT
        if str(ROOT) not in sys.path:
            sys.path.insert(0, str(ROOT))  # run as a script: the project's root is not on the path
        from scripts import fidelity_sheets

        sheets = fidelity_sheets.files_in(args.paths or [])
        if sheets:
            rows_of_sheets = anyio.run(fidelity_sheets.report, sheets, args.jobs, args.deadline)
            print(fidelity_sheets.render(rows_of_sheets))
        if args.paths and not files:
            return 0
    rows = anyio.run(_report, app, files, args.jobs, args.deadline, edit)
    print(render(rows))
    lost = any(
        row.failure is not None
        or False in row.kept.values()
        or any(False in kept.values() for kept in row.stages.values())
        for row in rows
    )
    return 1 if args.check and lost else 0


async def _report(
    app: App,
    files: Sequence[Path],
    jobs: int,
    deadline: float,
    edit: Sequence[AppCommand] | None,
) -> list[Row]:
    try:
        return await report(app, files, jobs=jobs, deadline=deadline, edit=edit)
    finally:
        if isinstance(app, LibreOffice):
            await app.close()  # its offices reaped, each job's directory gone, before it returns


if __name__ == "__main__":
    sys.exit(main())
