"""A long document's first page, exported alone while its whole export goes on, on the real office.

The first render of a Writer document is answered from the page it asks for, exported alone
(the PDF filter's ``PageRange``) by the job that then exports the whole document for the cache;
further pages come from that one whole export. The adapter's ``export_status`` counts the whole
exports it started: the jobs these tests count. Documents here are 30 pages (the 200-page figure
is the benchmark's, ``scripts/bench/first_page.py``).
"""

import asyncio
import io
import logging
import random
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import docx
import pytest
from PIL import Image, ImageChops

from artifactr.files.apps.libreoffice import LibreOffice, _process
from artifactr.files.apps.libreoffice._process import TEMPLATE_PREFIX
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTooLarge
from tests.apps.libreoffice.conftest import need_office, saved
from tests.office import running

SLOW = 90.0
"""Seconds a 30-page export may take here, on two shared cores."""

pytestmark = pytest.mark.timeout(240)

WORDS = [
    "sales",
    "rose",
    "in",
    "the",
    "north",
    "and",
    "fell",
    "south",
    "as",
    "they",
    "do",
    "every",
    "year",
    "while",
    "costs",
    "held",
    "steady",
    "against",
    "forecasts",
    "revenue",
    "margins",
    "contract",
    "parties",
    "agree",
    "terms",
    "notice",
    "period",
    "clause",
]


def pages_document(count: int, seed: int = 0) -> bytes:
    """``count`` pages, each headed ``Page N`` on a new page; page 1 holds its heading alone.

    The other pages are prose (four paragraphs of words drawn by ``seed`` and the page), so the
    whole PDF is much larger than the file, and page 1's PDF much smaller.
    """
    document = docx.Document()
    for number in range(1, count + 1):
        heading = document.add_heading(f"Page {number}", 1)
        if number > 1:
            heading.paragraph_format.page_break_before = True
            draw = random.Random(seed * 1000 + number)
            for _ in range(4):
                document.add_paragraph(" ".join(draw.choices(WORDS, k=80)) + ".")
    return saved(document)


@pytest.fixture
def thirty() -> bytes:
    return pages_document(30)


async def until(ready: Callable[[], object], poll: float = 0.01) -> None:
    """Wait, polling, until ``ready()`` holds; fail after a minute."""
    for _ in range(int(60 / poll)):
        if ready():
            return
        await asyncio.sleep(poll)
    pytest.fail("not ready after 60 s")


def made(jobs: Path) -> list[Path]:
    """The job directories in ``jobs``: not the adapters' template profiles, nor sandbox probes."""
    others = (TEMPLATE_PREFIX, "libreoffice-probe-")
    return [path for path in jobs.iterdir() if not path.name.startswith(others)]


def pixels(png: bytes) -> Image.Image:
    with Image.open(io.BytesIO(png)) as image:
        return image.convert("RGB")


def same_pixels(one: bytes, other: bytes) -> bool:
    first, second = pixels(one), pixels(other)
    return first.size == second.size and ImageChops.difference(first, second).getbbox() is None


def text_of(pdf: bytes, page: int) -> str:
    argv = ["pdftotext", "-layout", "-f", str(page), "-l", str(page), "-", "-"]
    said = subprocess.run(argv, input=pdf, capture_output=True, check=True, timeout=60)
    return said.stdout.decode()


def page_count(pdf: bytes) -> int:
    said = subprocess.run(["pdfinfo", "-"], input=pdf, capture_output=True, check=True, timeout=60)
    line = next(line for line in said.stdout.decode().splitlines() if line.startswith("Pages:"))
    return int(line.split()[1])


# ─── the job ──────────────────────────────────────────────────────────────────


async def test_the_job_answers_the_page_alone_before_the_whole_export(
    office: LibreOffice, thirty: bytes
) -> None:
    # The driver's early answer: page 3 exported alone, as the whole export lays it out.
    runner = await office._runner()  # the adapter's runner: sealed, on its template
    early: list[_process.Reply] = []
    reply = await _process.run(
        runner,
        "pdf",
        thirty,
        deadline=SLOW,
        output="out.pdf",
        page=3,
        early=_process.Early("page.pdf", early.append),
    )
    [alone] = early
    assert alone.result == {"pages": 30, "page": 3}
    assert reply.result == {"pages": 30}
    assert alone.output is not None
    assert reply.output is not None
    assert page_count(alone.output) == 1
    assert page_count(reply.output) == 30
    assert text_of(alone.output, 1) == text_of(reply.output, 3)
    assert "Page 3" in text_of(alone.output, 1)
    assert len(alone.output) < len(reply.output)


# ─── through the adapter ──────────────────────────────────────────────────────


async def test_page_one_alone_is_page_one_of_the_whole_export_and_further_pages_reuse_it(
    office: LibreOffice, thirty: bytes
) -> None:
    first = await office.render(thirty, 1, deadline=SLOW)
    whole = await office.pdf(thirty, deadline=SLOW)  # the same job's whole export, waited for
    assert office.export_status().started == 1
    assert page_count(whole) == 30
    assert "Page 1" in text_of(whole, 1)
    # Page 1 again now comes from the kept whole export: the same pixels as the page alone.
    again = await office.render(thirty, 1)
    assert same_pixels(first, again)
    # Further pages come from the same export: no other job starts.
    last = await office.render(thirty, 30)
    second = await office.render(thirty, 2, scale=0.5)
    assert pixels(last).size == (816, 1056)
    assert pixels(second).size == (408, 528)
    with pytest.raises(AppRefused, match="no page 31: the document has 30"):
        await office.render(thirty, 31)
    status = office.export_status()
    assert (status.started, status.running, status.kept) == (1, 0, 1)
    assert status.kept_bytes == len(whole)


async def test_a_page_asked_for_alone_that_the_document_lacks_is_refused_at_once(
    office: LibreOffice, thirty: bytes
) -> None:
    with pytest.raises(AppRefused, match="no page 99: the document has 30"):
        await office.render(thirty, 99, deadline=SLOW)
    # The whole export went on: page 2 comes from it, with no second job.
    assert pixels(await office.render(thirty, 2, deadline=SLOW)).size == (816, 1056)
    assert office.export_status().started == 1


async def test_pages_one_and_two_asked_at_once_start_one_whole_export(
    office: LibreOffice, thirty: bytes
) -> None:
    one, two = await asyncio.gather(
        office.render(thirty, 1, deadline=SLOW), office.render(thirty, 2, deadline=SLOW)
    )
    assert office.export_status().started == 1
    assert not same_pixels(one, two)
    assert same_pixels(await office.render(thirty, 1), one)
    assert same_pixels(await office.render(thirty, 2), two)
    assert office.export_status().started == 1


async def under_way(office: LibreOffice) -> None:
    """Return once an export is under way (the test's timeout bounds the wait)."""
    for _ in range(100_000):
        if office.export_status().running:
            return
        await asyncio.sleep(0.01)


async def test_a_caller_can_wait_for_the_export_a_page_left_going(
    office: LibreOffice, thirty: bytes
) -> None:
    await office.exported()  # nothing under way: at once
    rendering = asyncio.ensure_future(office.render(thirty, 5, deadline=SLOW))
    await under_way(office)
    # Asked while the export is under way, however soon its page comes: it waits for the end.
    await office.exported()
    status = office.export_status()
    assert (status.started, status.running, status.kept) == (1, 0, 1)
    assert pixels(await rendering).size == (816, 1056)


async def test_without_the_early_page_page_one_waits_for_the_whole_export(
    jobs: Path, thirty: bytes
) -> None:
    need_office()
    office = LibreOffice(early_page=False)
    try:
        await office.render(thirty, 1, deadline=SLOW)
        # The export is kept once the page is answered: it came from the whole export.
        status = office.export_status()
        assert (status.started, status.running, status.kept) == (1, 0, 1)
    finally:
        await office.close()


async def test_a_whole_export_that_fails_after_the_page_is_typed_and_logged(
    office: LibreOffice, thirty: bytes, jobs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    whole = await office.pdf(thirty, deadline=SLOW)
    assert len(whole) > len(thirty) + 4000  # the whole PDF is larger than the file
    # A limit the file and page 1's PDF are under, and the whole PDF over.
    small = LibreOffice(max_size=(len(thirty) + len(whole)) // 2)
    try:
        with caplog.at_level(logging.WARNING, logger="artifactr.files.apps.libreoffice"):
            asked = asyncio.create_task(small.render(thirty, 1, deadline=SLOW))
            await until(lambda: small.export_status().running)
            # Page 2, asked while page 1's job runs, waits for its whole export: over the limit.
            with pytest.raises(AppTooLarge, match="over the limit"):
                await small.render(thirty, 2, deadline=SLOW)
            first = await asked
        assert same_pixels(first, await office.render(thirty, 1))
        assert any(
            "export to PDF failed: AppTooLarge" in record.getMessage() for record in caplog.records
        )
        assert small.export_status().kept == 0
    finally:
        await small.close()


# ─── bounds ───────────────────────────────────────────────────────────────────


async def test_close_stops_an_export_under_way_and_its_waiters_are_told(
    office: LibreOffice, thirty: bytes, jobs: Path
) -> None:
    waiting = asyncio.create_task(office.pdf(thirty, deadline=SLOW))
    # Its export is under way (the template profile made) and its job's processes run.
    await until(lambda: office.export_status().running and running(str(jobs)))
    # The export's office is starting or loading: its group is killed, its directory wiped.
    await office.close()
    with pytest.raises(AppCrashed, match="the adapter was closed"):
        await waiting
    assert office.export_status().running == 0
    assert made(jobs) == []
    # The adapter still works after it.
    assert pixels(await office.render(thirty, 1, deadline=SLOW)).size == (816, 1056)
    assert office.export_status().started == 2


async def test_no_more_exports_run_at_once_than_the_limit(jobs: Path) -> None:
    need_office()
    office = LibreOffice(exports=1)
    documents = [pages_document(3, seed) for seed in (1, 2, 3)]
    most = 0

    async def watch() -> None:
        nonlocal most
        # Each running job has a directory of its own here; the watch ends with the renders.
        for _ in range(100_000):
            most = max(most, len(made(jobs)))
            await asyncio.sleep(0.01)

    watcher = asyncio.create_task(watch())
    try:
        pages = await asyncio.gather(
            *(office.render(source, 2, deadline=SLOW * 2) for source in documents)
        )
        for source in documents:
            await office.pdf(source, deadline=SLOW)
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await office.close()
    assert len(set(pages)) == 3
    assert office.export_status().started == 3
    assert most == 1


async def test_a_job_stopped_while_its_office_starts_leaves_nothing(
    jobs: Path, tmp_path: Path
) -> None:
    need_office()
    office = LibreOffice()
    # A template profile of many files: copying it into the job takes a while, so the stop
    # comes while the job's office starts.
    big = tmp_path / "big" / "profile"
    (big / "user").mkdir(parents=True)
    for number in range(3000):
        (big / "user" / f"{number}.xcu").write_text("x" * 100)
    runner = replace(await office._runner(), template=big)
    try:
        job = asyncio.create_task(_process.run(runner, "pdf", b"never read", deadline=SLOW))
        await until(lambda: made(jobs), poll=0.002)
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job
        # The start ran to its end, then its office was killed and its directory wiped.
        assert running(str(jobs)) == []
        assert made(jobs) == []
    finally:
        await office.close()


def test_the_export_limit_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="exports must be at least 1, not 0"):
        LibreOffice(exports=0)
