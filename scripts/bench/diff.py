"""Benchmark: a revision diff of a long document, first and second time, and its memory.

Figures, each against a baseline measured in the same run (ADR-0011):

1. A diff of two revisions of a 500-page document (one paragraph changed on page 250), and of
   a 50-page one (changed on page 25), through
   :func:`~artifactr.files.native.diff.revision_diff`, on SQLite with the SQL render cache: how many
   pages the app rendered the first time (target: at most one per page per revision, 1,000)
   and the second time (target: none), and the second's time as a ratio of the first's.
2. The peak Python memory (tracemalloc) of the second diff of the 500-page document, as a ratio
   of the same diff of a 50-page one. Target: bounded, growing only with the text blobs, never
   with the renders (one page's PNG is held at a time).

The app is FakeApp for reading (real .docx bytes), with a stand-in ``render`` that counts its
calls and returns a small image-like value at once, so the figures are the diff's own costs,
not FakeApp's layout.

Run: ``uv run --no-sync python -m scripts.bench.diff [--quick]`` (``--quick``: 5 and 50 pages).
"""

import hashlib
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from tempfile import TemporaryDirectory

from artifactr import UserActor, Workspaces
from artifactr.core import Applied
from artifactr.sql import SqlStorage, create_sqlite_engine, migrate

from artifactr.files.apps.fake import LINES_PER_PAGE, FakeApp
from artifactr.files.core.app_port import RENDER_DEADLINE
from artifactr.files.core.documents import build_docx
from artifactr.files.core.manifests import DOCX, WordDocument
from artifactr.files.native import NativeFiles
from artifactr.files.native.diff import revision_diff
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from scripts.bench._harness import machine_load, parser, run

ACTOR = UserActor(id="bench")


class CountingRenders(FakeApp):
    """FakeApp that reads for real and renders a stand-in at once, counting the renders."""

    def __init__(self, changed_page: int) -> None:
        super().__init__()
        self.changed_page = changed_page
        self.renders = 0

    async def render(
        self, source: bytes, page: int, *, scale: float = 1.0, deadline: float = RENDER_DEADLINE
    ) -> bytes:
        """Return a stand-in page: the file's digest on the changed page, else the number."""
        self.renders += 1
        changed = page == self.changed_page and hashlib.sha256(source).digest()
        return b"\x89PNG" + (changed or page.to_bytes(4, "big"))


def paragraphs(pages: int, *, changed: int | None) -> list[str]:
    """Return one-line paragraphs filling ``pages``, with one changed on page ``changed``."""
    lines = [f"Line {n} of the document." for n in range(pages * LINES_PER_PAGE)]
    if changed is not None:
        lines[(changed - 1) * LINES_PER_PAGE] = f"A line changed on page {changed}."
    return lines


async def once(data: bytes) -> AsyncIterator[bytes]:
    """Yield the bytes as one chunk."""
    yield data


async def measure(pages: int, database: Path) -> dict[str, float]:
    """Return the figures of two diffs of a ``pages``-page document, changed mid-way."""
    middle = pages // 2
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{database}")
    await migrate(engine)
    await migrate_files(engine)
    app = CountingRenders(middle)
    files = NativeFiles(
        blobs=SqlBlobs(engine),
        app=app,
        leases=SqlLeases(engine),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
    )
    workspaces = Workspaces(SqlStorage(engine), types=[WordDocument])
    ws = await workspaces.open("t1", "w1", actor=ACTOR)
    before = build_docx(paragraphs(pages, changed=None))
    created = await files.upload(ws, "long.docx", once(before), media_type=DOCX)
    assert isinstance(created, Applied)
    checkout = await files.check_out(ws, created.artifact_id)
    after = build_docx(paragraphs(pages, changed=middle))
    await files.check_in(ws, checkout.id, once(after))
    started = time.perf_counter()
    first = await revision_diff(files, ws, created.artifact_id, 1, 2)
    first_time = time.perf_counter() - started
    first_renders = app.renders
    tracemalloc.start()
    started = time.perf_counter()
    second = await revision_diff(files, ws, created.artifact_id, 1, 2)
    second_time = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    await engine.dispose()
    assert first == second
    return {
        "pages": pages,
        "changed": len(first.pages),
        "first_renders": first_renders,
        "second_renders": app.renders - first_renders,
        "first_s": first_time,
        "second_s": second_time,
        "peak_mib": peak / 1024 / 1024,
    }


async def main(quick: bool) -> None:
    """Print the figures for 50 and 500 pages (5 and 50 in a quick run)."""
    small_pages, large_pages = (5, 50) if quick else (50, 500)
    with TemporaryDirectory() as folder:
        small = await measure(small_pages, Path(folder) / "small.db")
        large = await measure(large_pages, Path(folder) / "large.db")
    for figures in (small, large):
        print(
            f"{figures['pages']:.0f} pages: {figures['changed']:.0f} page(s) differ; renders "
            f"{figures['first_renders']:.0f} first, {figures['second_renders']:.0f} second; "
            f"{figures['first_s']:.2f} s first, {figures['second_s']:.2f} s second "
            f"({figures['second_s'] / figures['first_s']:.2f}x); "
            f"second's peak {figures['peak_mib']:.1f} MiB"
        )
    print(
        f"{large_pages} pages against {small_pages}: peak memory "
        f"{large['peak_mib'] / small['peak_mib']:.1f}x for 10x the pages"
    )
    print(machine_load())


if __name__ == "__main__":
    options = parser(__doc__, quick="5 and 50 pages").parse_args()
    raise SystemExit(run(lambda: main(options.quick)))
