"""FakeApp's failure modes (told to fail, slow, too large) and parsing within bounds and the
deadline.

Every edit is checked by reading the result independently, with python-docx or lxml, never
through FakeApp.
"""

import asyncio
import io
import re
import tempfile
import threading
import time
import zipfile
from datetime import UTC, datetime
from typing import Any

import pytest

from artifactr.files import (
    AppCommand,
    AppCrashed,
    AppFailure,
    AppRefused,
    AppTimeout,
    AppTooLarge,
)
from artifactr.files.apps.fake import DEFAULT_MAX_ELEMENTS, FakeApp
from tests.apps.fake.conftest import rezip
from tests.documents import build_docx, package

# ─── failure modes ────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    ("kind", "error"),
    [("refused", AppRefused), ("crashed", AppCrashed), ("too_large", AppTooLarge)],
)
async def test_an_app_told_to_fail_raises_the_typed_failure(
    kind: Any, error: type[AppFailure]
) -> None:
    app = FakeApp(fail={"apply": kind, "inspect": kind, "render": kind})
    source = build_docx()
    for call in (app.apply(source, []), app.inspect(source), app.render(source, 1)):
        with pytest.raises(error, match=re.escape(f"the fake app was told to fail ({kind})")):
            await call


async def test_a_timeout_waits_until_the_deadline() -> None:
    app = FakeApp(fail={"render": "timeout"})
    started = time.monotonic()
    with pytest.raises(AppTimeout, match=r"did not answer within 0\.05 s"):
        await app.render(build_docx(), 1, deadline=0.05)
    assert time.monotonic() - started >= 0.05
    assert (await app.inspect(build_docx())).pages == 1


async def test_fail_next_fails_only_the_next_matching_call() -> None:
    app = FakeApp()
    source = build_docx()
    app.fail_next("crashed", "render")
    app.fail_next("refused")
    with pytest.raises(AppRefused):
        await app.inspect(source)
    await app.inspect(source)
    with pytest.raises(AppCrashed):
        await app.render(source, 1)
    await app.render(source, 1)


async def test_a_slow_app_answers_within_its_deadline_or_times_out_at_it() -> None:
    app = FakeApp(delay=0.05)
    started = time.monotonic()
    await app.inspect(build_docx(), deadline=1)
    assert time.monotonic() - started >= 0.05
    with pytest.raises(AppTimeout):
        await app.apply(build_docx(), [], deadline=0.01)


async def test_a_file_over_the_size_limit_is_too_large() -> None:
    source = build_docx()
    app = FakeApp(max_size=len(source) - 1)
    with pytest.raises(AppTooLarge, match=f"the file is {len(source)} bytes"):
        await app.inspect(source)


async def test_a_zip_whose_parts_inflate_too_far_is_too_large() -> None:
    source = rezip(build_docx(), replace={"word/media/zeros.bin": bytes(100_000)})
    app = FakeApp(max_size=len(source))
    with pytest.raises(AppTooLarge, match="inflate to"):
        await app.apply(source, [])


def test_the_app_has_its_name() -> None:
    assert FakeApp().name == "fake"
    assert FakeApp(name="wordcraft").name == "wordcraft"


# ─── parsing off the loop, within bounds and the deadline ────────────────────


def many_paragraphs(count: int) -> bytes:
    """Return a .docx whose body holds ``count`` empty paragraphs, stored: no ratio refuses it."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(package("<w:p/>" * count))) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target,
    ):
        for info in source.infolist():
            target.writestr(info.filename, source.read(info))
    return out.getvalue()


class Gated(io.BytesIO):
    """A file whose reading waits until the test opens its gate: a parse blocks in it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reading = threading.Event()
        self.gate = threading.Event()

    def read(self, size: int | None = -1, /) -> bytes:
        self.reading.set()
        # On the loop, the parse would hold the loop here and nothing could open the gate.
        assert self.gate.wait(timeout=60), "the gate was never opened: the loop was blocked"
        return super().read(size)


async def test_a_large_document_is_parsed_off_the_event_loop() -> None:
    source = Gated(many_paragraphs(20_000))
    inspected = asyncio.ensure_future(FakeApp().inspect(source))
    await asyncio.to_thread(source.reading.wait)
    # The parse is under way, waiting in its read: the loop still runs, and opens the gate.
    assert not inspected.done()
    source.gate.set()
    assert (await inspected).pages > 400


async def test_a_document_over_the_element_limit_is_too_large_before_it_is_built() -> None:
    app = FakeApp(max_elements=10_000)
    await app.inspect(many_paragraphs(9_000))
    for call in (
        app.inspect(many_paragraphs(20_000)),
        app.apply(many_paragraphs(20_000), [AppCommand(command="caret.docEnd")]),
        app.render(many_paragraphs(20_000), 1),
    ):
        with pytest.raises(AppTooLarge, match="10,000 XML elements"):
            await call


def test_the_default_element_limit_holds_what_a_long_document_has() -> None:
    assert DEFAULT_MAX_ELEMENTS == 500_000


async def test_a_parse_past_its_deadline_times_out_at_the_deadline() -> None:
    source = Gated(many_paragraphs(20_000))
    try:
        # The parse can't end before the gate opens, after the call: it gave up at its deadline.
        with pytest.raises(AppTimeout):
            await FakeApp().inspect(source, deadline=0.05)
    finally:
        source.gate.set()


# ─── parsing in a child process a job (ADR-0015) ──────────────────────────────


async def test_in_child_processes_it_inspects_edits_and_draws_as_in_threads() -> None:
    source = build_docx()
    own, children = (
        FakeApp(),
        FakeApp(processes=True, clock=lambda: datetime(2026, 1, 1, tzinfo=UTC)),
    )
    assert await children.inspect(source) == await own.inspect(source)
    with tempfile.TemporaryFile() as file:  # a spooled upload is sent as its bytes
        file.write(source)
        file.seek(5)
        assert await children.inspect(file) == await own.inspect(source)
    batch = [AppCommand(command="edit.replaceAll", params={"text": "the", "with": "a"})]
    edited, theirs = await children.apply(source, batch), await own.apply(source, batch)
    assert children.last_results == own.last_results != ()
    assert edited.inspection.text == theirs.inspection.text != (await own.inspect(source)).text
    assert (await children.render(source, 1))[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(AppRefused, match="no page 9"):
        await children.render(source, 9)


async def test_a_child_past_its_deadline_is_killed_and_times_out() -> None:
    app = FakeApp(processes=True)
    with pytest.raises(AppTimeout, match=r"within 0\.05 s"):
        await app.inspect(many_paragraphs(400_000), deadline=0.05)
    assert (await app.inspect(build_docx())).pages == 1  # the next job has a child of its own


@pytest.mark.parametrize(
    ("build", "named"), [("xlsx", "an Excel workbook"), ("pptx", "a PowerPoint")]
)
async def test_a_workbook_or_a_deck_is_refused_with_a_reason_that_says_so(
    app: FakeApp, build: str, named: str
) -> None:
    from tests.sheets import build_pptx, build_xlsx

    source = build_xlsx() if build == "xlsx" else build_pptx()
    for call in (app.inspect(source), app.apply(source, []), app.render(source, 1)):
        with pytest.raises(
            AppRefused, match=f"FakeApp reads Word documents \\(.docx\\) only, and this is {named}"
        ):
            await call
