"""Benchmark: an edit through NativeFiles against a bare commit, and a check-in's memory.

Three figures, each against a baseline measured in the same run (RFC-0003 phase 2):

1. An edit through :meth:`NativeFiles.edit` with an instant app (no parsing, no process), on
   SQLite and PostgreSQL, as a ratio of a bare ``Workspace.commit`` of a JSON Patch of the same
   size. Target: at most 3x. What the ratio buys: the lease, the blob puts (content, text,
   review, commands) and the read of the base.
3. An edit of a one-page document through :meth:`NativeFiles.edit` with LibreOffice on a pooled
   office, ready (on SQLite), as a ratio of the same command as a job on one warm office driven
   over UNO (issue 42). Target: at most 1.5x. Skipped, with a line, where no office runs.
2. A check-in of 100 MiB streamed through :meth:`NativeFiles.check_in`, with its peak Python
   memory (tracemalloc) beside a 10 MiB and a 1 GiB one. Target: flat in file size.

Run: ``uv run --no-sync python -m scripts.bench.edit [--quick]`` (PostgreSQL from
``ARTIFACTR_TEST_POSTGRES_URL``, or the local default, in a schema of its own dropped after;
skipped with a note when it does not answer). ``--quick``: 5 edits, check-ins of 10 and 20 MiB;
``--office``: the third figure alone.
"""

import asyncio
import io
import itertools
import os
import statistics
import time
import tracemalloc
import uuid
import zipfile
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import IO

from artifactr import UserActor, Workspaces
from artifactr.core import EditArtifact, JsonPatch
from artifactr.sql import SqlStorage, create_sqlite_engine, migrate
from artifactr.workspace import Workspace
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.apps.libreoffice import LibreOffice, available
from artifactr.files.core.app_port import (
    EDIT_DEADLINE,
    About,
    App,
    AppCommand,
    CommandSpec,
    Edited,
    Inspection,
)
from artifactr.files.core.documents import build_docx
from artifactr.files.core.fingerprint import ZipLimits, fingerprint
from artifactr.files.core.manifests import WordDocument
from artifactr.files.core.revisions import revision_patch
from artifactr.files.native import NativeFiles
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from scripts.bench._harness import (
    POSTGRES,
    machine_load,
    parser,
    postgres_answers,
    postgres_schema,
    run,
    schema_engine,
)
from scripts.bench.libreoffice import Warm, one_page, ready

EDITS = 100
"""Edits each way, taken in turns."""
MIB = 1024 * 1024
CHECK_INS = (10 * MIB, 100 * MIB, 1024 * MIB)
"""The check-in sizes: the 8 MiB spool rolls to disk in each, so the peak must not grow."""
QUICK_EDITS = 5
OFFICE_EDITS = 15
"""Edits through a pooled LibreOffice, each against the warm office's."""
QUICK_CHECK_INS = (10 * MIB, 20 * MIB)
ACTOR = UserActor(id="bench")


def docx(words: str, *, media: int = 0) -> bytes:
    """Return a small real document, with ``media`` bytes of an incompressible stored picture."""
    out = io.BytesIO(build_docx([words]))
    if media:
        with zipfile.ZipFile(out, "a") as package:
            package.writestr(
                zipfile.ZipInfo("word/media/image1.bin"), os.urandom(media), zipfile.ZIP_STORED
            )
    return out.getvalue()


class InstantApp:
    """An app that answers at once: each edit flips between two prepared documents."""

    name = "instant"

    def __init__(self) -> None:
        self._documents = [docx("one"), docx("two")]
        self._next = 0

    def _inspection(self, content: bytes) -> Inspection:
        return Inspection(
            outline="Heading",
            text="words",
            fingerprint=fingerprint(content),
            about=About(app=self.name, version="1"),
        )

    async def apply(
        self,
        source: bytes,
        commands: Sequence[AppCommand],
        *,
        deadline: float = EDIT_DEADLINE,
        author: str | None = None,
    ) -> Edited:
        """Return the other prepared document."""
        self._next = 1 - self._next
        content = self._documents[self._next]
        return Edited(content=content, inspection=self._inspection(content))

    async def inspect(
        self, source: bytes | IO[bytes], *, deadline: float = EDIT_DEADLINE
    ) -> Inspection:
        """Answer without reading the file past its first bytes."""
        return Inspection(fingerprint=uuid.uuid4().hex * 2, about=About(app=self.name, version="1"))

    async def render(
        self, source: bytes, page: int, *, scale: float = 1.0, deadline: float = 10.0
    ) -> bytes:
        """Render nothing: the benchmark doesn't ask."""
        return b""

    async def commands(self, query: str = "") -> Sequence[CommandSpec]:
        """List no commands."""
        return ()


@asynccontextmanager
async def database(kind: str, scratch: Path) -> AsyncGenerator[AsyncEngine]:
    """Yield a migrated, empty database: a SQLite file or a PostgreSQL schema of its own."""
    if kind == "sqlite":
        engine = create_sqlite_engine(f"sqlite+aiosqlite:///{scratch / 'bench.db'}")
        try:
            await migrate(engine)
            await migrate_files(engine)
            yield engine
        finally:
            await engine.dispose()
        return
    async with postgres_schema() as schema:
        engine = schema_engine(POSTGRES, schema)
        try:
            await migrate(engine)
            await migrate_files(engine)
            yield engine
        finally:
            await engine.dispose()


def service(engine: AsyncEngine, app: App, *, max_size: int = 512 * MIB) -> NativeFiles:
    """Return NativeFiles over the SQL adapters."""
    return NativeFiles(
        blobs=SqlBlobs(engine),
        app=app,
        leases=SqlLeases(engine),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
        max_size=max_size,
        limits=ZipLimits(max_part_size=2048 * MIB, max_total_size=2048 * MIB),
    )


async def once(data: bytes) -> AsyncIterator[bytes]:
    """Yield the bytes as one chunk."""
    yield data


async def timed_edit(files: NativeFiles, ws: Workspace, artifact_id: str, version: int) -> float:
    """Return the seconds one edit through NativeFiles takes."""
    command = AppCommand(command="edit.replaceAll", params={"text": "one", "with": "two"})
    started = time.perf_counter()
    await files.edit(ws, artifact_id, base_version=version, commands=[command])
    return time.perf_counter() - started


async def timed_commit(ws: Workspace, artifact_id: str, version: int) -> float:
    """Return the seconds one bare commit of a same-sized revision patch takes."""
    head = await ws.get(WordDocument, artifact_id)
    after = head.data.model_copy(
        update={"fingerprint": uuid.uuid4().hex * 2, "outline": f"Heading {version}"}
    )
    patch: JsonPatch = revision_patch(head.data.content.sha256, after)
    started = time.perf_counter()
    await ws.commit(EditArtifact(artifact_id=artifact_id, base_version=version, patch=patch))
    return time.perf_counter() - started


async def edit_ratio(kind: str, scratch: Path, count: int = EDITS) -> None:
    """Print the edit-to-bare-commit ratio on one database."""
    async with database(kind, scratch) as engine:
        files = service(engine, InstantApp())
        workspaces = Workspaces(SqlStorage(engine), types=[WordDocument])
        ws = await workspaces.open("t", "edits", actor=ACTOR)
        edited = await files.upload(ws, "a.docx", once(docx("one")))
        bare = await files.upload(ws, "b.docx", once(docx("one")))
        assert edited.type == "applied"
        assert bare.type == "applied"
        # Taken in turns, so a moment of load on the machine falls on both alike.
        edits: list[float] = []
        commits: list[float] = []
        for version in range(1, count + 1):
            edits.append(await timed_edit(files, ws, edited.artifact_id, version))
            commits.append(await timed_commit(ws, bare.artifact_id, version))
        ratio = statistics.median(edits) / statistics.median(commits)
        verdict = "ok" if ratio <= 3 else "over the 3x target"
        print(
            f"{kind:8} edit {statistics.median(edits) * 1000:7.2f} ms  "
            f"bare commit {statistics.median(commits) * 1000:7.2f} ms  "
            f"ratio {ratio:4.2f}x ({verdict}; median of {count})"
        )


async def office_edit(scratch: Path, rounds: int) -> None:
    """Print a pooled LibreOffice edit through NativeFiles against the warm-office floor.

    Each round, in turns: one ``paragraph.append`` on a one-page document through
    :meth:`NativeFiles.edit` on SQLite (the lease, the app's job on a pooled office that is
    ready, the blobs, the commit), and the same command on the same kind of file as a job on one
    long-lived warm office driven over UNO (the driver's own load, command, store and report:
    the physical floor of an office-based edit). Target: at most 1.5x.
    """
    if not available():
        print("office   skipped: LibreOffice can't run here")
        return
    app = LibreOffice(pool=1)
    warm = await asyncio.to_thread(Warm)
    try:
        async with database("sqlite", scratch) as engine:
            files = service(engine, app)
            workspaces = Workspaces(SqlStorage(engine), types=[WordDocument])
            ws = await workspaces.open("t", "office", actor=ACTOR)
            uploaded = await files.upload(ws, "a.docx", once(one_page(0)))
            assert uploaded.type == "applied"
            edits: list[float] = []
            floors: list[float] = []
            for number in range(rounds):
                command = AppCommand(
                    command="paragraph.append", params={"text": f"Added {number}."}
                )
                await ready(app)
                await app.reaped()
                started = time.perf_counter()
                await files.edit(
                    ws, uploaded.artifact_id, base_version=number + 1, commands=[command]
                )
                edits.append(time.perf_counter() - started)
                floors.append(
                    await asyncio.to_thread(warm.job, "apply", one_page(number), [command])
                )
    finally:
        await asyncio.to_thread(warm.close)
        await app.close()
    ratios = [ours / floor for ours, floor in zip(edits, floors, strict=True)]
    ratio = statistics.median(ratios)
    verdict = "ok" if ratio <= 1.5 else "over the 1.5x target"
    print(
        f"office   pooled edit through NativeFiles {statistics.median(edits) * 1000:7.1f} ms  "
        f"warm office {statistics.median(floors) * 1000:7.1f} ms  "
        f"ratio {ratio:4.2f}x ({verdict}; median of {rounds})"
    )


async def stream_file(data_size: int) -> AsyncIterator[bytes]:
    """Yield a valid document of about ``data_size`` bytes without holding it: a stored part.

    A small real document's parts, then a stored part of ``data_size`` random bytes, made
    chunk by chunk, then the central directory of them all.
    """
    chunk = os.urandom(MIB)
    count = data_size // MIB
    crc = 0
    for _ in range(count):
        crc = zlib.crc32(chunk, crc)
    prefix = build_docx(["A large file."])
    end_at = prefix.rindex(b"PK\x05\x06")
    entries = int.from_bytes(prefix[end_at + 10 : end_at + 12], "little")
    directory_at = int.from_bytes(prefix[end_at + 16 : end_at + 20], "little")
    local, central = prefix[:directory_at], prefix[directory_at:end_at]
    name = b"word/media/big.bin"
    size = count * MIB
    offset = len(local)
    header = (
        b"PK\x03\x04"
        + (20).to_bytes(2, "little")
        + bytes(4)
        + bytes(4)
        + crc.to_bytes(4, "little")
        + size.to_bytes(4, "little")
        + size.to_bytes(4, "little")
        + len(name).to_bytes(2, "little")
        + bytes(2)
        + name
    )
    yield local + header
    for _ in range(count):
        yield chunk
    entry = (
        b"PK\x01\x02"
        + (20).to_bytes(2, "little")
        + (20).to_bytes(2, "little")
        + bytes(4)
        + bytes(4)
        + crc.to_bytes(4, "little")
        + size.to_bytes(4, "little")
        + size.to_bytes(4, "little")
        + len(name).to_bytes(2, "little")
        + bytes(8)
        + bytes(4)
        + offset.to_bytes(4, "little")
        + name
    )
    directory = central + entry
    start = offset + len(header) + size
    end = (
        b"PK\x05\x06"
        + bytes(4)
        + (entries + 1).to_bytes(2, "little")
        + (entries + 1).to_bytes(2, "little")
        + len(directory).to_bytes(4, "little")
        + start.to_bytes(4, "little")
        + bytes(2)
    )
    yield directory + end


async def check_in_memory(scratch: Path, sizes: Sequence[int] = CHECK_INS) -> None:
    """Print the peak memory of a 10 MiB, a 100 MiB and a 1 GiB check-in on SQLite."""
    peaks: dict[int, float] = {}
    for size in sizes:
        async with database("sqlite", scratch / str(size)) as engine:
            files = service(engine, InstantApp(), max_size=2 * sizes[-1])
            ws = await Workspaces(SqlStorage(engine), types=[WordDocument]).open(
                "t", "check-in", actor=ACTOR
            )
            uploaded = await files.upload(ws, "a.docx", once(docx("one")))
            assert uploaded.type == "applied"
            checkout = await files.check_out(ws, uploaded.artifact_id)
            tracemalloc.start()
            started = time.perf_counter()
            result = await files.check_in(ws, checkout.id, stream_file(size))
            took = time.perf_counter() - started
            peak = tracemalloc.get_traced_memory()[1] / MIB
            tracemalloc.stop()
            peaks[size] = peak
            print(
                f"check-in {size // MIB:4d} MiB: {result.status}, {took:5.2f} s, "
                f"peak {peak:6.1f} MiB"
            )
    for smaller, larger in itertools.pairwise(sizes):
        grew = peaks[larger] - peaks[smaller]
        print(
            f"peak memory grew {grew:+.1f} MiB from {smaller // MIB} MiB to {larger // MIB} MiB"
            " (target: flat)"
        )


async def main(quick: bool, office_only: bool = False) -> None:
    """Run the benchmarks (``office_only``: the pooled LibreOffice edit alone)."""
    edits, sizes = (QUICK_EDITS, QUICK_CHECK_INS) if quick else (EDITS, CHECK_INS)
    with TemporaryDirectory() as scratch:
        root = Path(scratch)
        if office_only:
            await office_edit(root, QUICK_EDITS if quick else OFFICE_EDITS)
            print(machine_load())
            return
        (root / "pg").mkdir()
        await edit_ratio("sqlite", root, edits)
        if await postgres_answers():
            await edit_ratio("postgres", root / "pg", edits)
        else:
            print(f"postgres: skipped, nothing answers at {POSTGRES}")
        (root / "office").mkdir()
        await office_edit(root / "office", QUICK_EDITS if quick else OFFICE_EDITS)
        for size in sizes:
            (root / str(size)).mkdir()
        await check_in_memory(root, sizes)
    print(machine_load())


if __name__ == "__main__":
    arguments = parser(__doc__, quick="5 edits, check-ins of 10 and 20 MiB")
    arguments.add_argument(
        "--office", action="store_true", help="only the pooled LibreOffice edit (figure 3)"
    )
    options = arguments.parse_args()
    raise SystemExit(run(lambda: main(options.quick, options.office)))
