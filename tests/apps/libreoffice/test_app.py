"""The LibreOffice adapter on the real office: inspect, render, each command, and its failures.

Each test starts as few offices as it can (one start is a second or more): a test batches the
commands of one family and reads every change back, with python-docx and with the inspection
of the saved file, which the adapter makes by loading the saved file again.
"""

import asyncio
import io
import re
import shutil
import socket
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docx
import pytest
from PIL import Image

from artifactr.files import AppCommand
from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.apps.libreoffice._process import TEMPLATE_PREFIX, Runner, _answer, end, start
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTimeout, AppTooLarge
from tests import hostile
from tests.apps.libreoffice.conftest import (
    linking_document,
    need_office,
    saved,
    shown_document,
    toc_document,
)
from tests.apps.libreoffice.test_catalog import NOWHERE, script
from tests.apps.libreoffice.test_pool import until
from tests.office import running
from tests.pids import alive

SLOW = 45.0
"""Seconds a first render may take here: a whole office start-up on a busy machine."""


# Each test starts a real office (or a few): one to ten seconds a start on two shared cores.
pytestmark = pytest.mark.timeout(180)


def command(name: str, **params: object) -> AppCommand:
    return AppCommand.model_validate({"command": name, "params": params})


def reread(content: bytes) -> docx.document.Document:
    return docx.Document(io.BytesIO(content))


def size(png: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(png)) as image:
        assert image.format == "PNG"
        return image.size


# ─── reading ──────────────────────────────────────────────────────────────────


async def test_inspect_reads_headings_text_tables_footnotes_comments_changes_and_pages(
    office: LibreOffice, reviewed: bytes
) -> None:
    inspection = await office.inspect(io.BytesIO(reviewed))
    assert inspection.outline == "Quarterly report\nSummary\n  Details"
    assert inspection.text.splitlines() == [
        "Quarterly report",
        "Summary",
        "The quick brown fox jumps over the lazy dog. Quickly.",
        "Details",
        "Draft figures follow.",
        "Region\tSales",
        "North\t12",
        "Closing words.",
        "[1] Source: the annual survey.",
    ]
    comments = [item for item in inspection.review if item.kind == "comment"]
    changes = [item for item in inspection.review if item.kind == "change"]
    assert [(c.id, c.author, c.text, c.anchor) for c in comments] == [
        ("1", "Grace", "Check the figures", "Draft figures follow.")
    ]
    assert [(c.id, c.author, c.date, c.text, c.change) for c in changes] == [
        ("1", "Linus", "2026-01-02T03:04:05Z", " Quickly.", "insert"),
        ("2", "Linus", "2026-01-02T03:04:05Z", " Slowly.", "delete"),
    ]
    assert inspection.pages == 1
    assert inspection.about.app == "libreoffice"
    assert inspection.about.version is not None
    assert inspection.about.version[0].isdigit()
    assert inspection.about.build  # the office's own, from soffice --version


async def test_a_build_it_is_given_is_the_build_it_reports(office: LibreOffice) -> None:
    stamped = LibreOffice(build="sha256:0123abcd")
    assert (await stamped.about()).build == "sha256:0123abcd"
    assert (await stamped.about()).version == (await office.about()).version


async def test_render_gives_real_pages_at_each_scale_from_one_export(
    office: LibreOffice, long_document: bytes
) -> None:
    first = await office.render(long_document, 1, deadline=SLOW)
    # python-docx's template is US Letter: 8.5 x 11 inches at 96 dpi.
    assert size(first) == (816, 1056)
    assert size(await office.render(long_document, 3, scale=0.5)) == (408, 528)
    assert size(await office.render(long_document, 2, scale=100)) == (3264, 4224)
    with pytest.raises(AppRefused, match="no page 4: the document has 3"):
        await office.render(long_document, 4)
    pdf = await office.pdf(long_document)
    assert pdf.startswith(b"%PDF")
    # Every page came from the one PDF, exported once and kept.
    assert await office.pdf(long_document) is pdf
    inspection = await office.inspect(long_document)
    assert inspection.pages == 3


async def test_pages_rendered_at_once_share_one_export(
    office: LibreOffice, long_document: bytes
) -> None:
    one, two = await asyncio.gather(
        office.render(long_document, 1, scale=0.2, deadline=SLOW),
        office.render(long_document, 2, scale=0.2, deadline=SLOW),
    )
    assert size(one) == size(two) == (164, 212)
    assert one != two


async def test_the_pdf_cache_keeps_no_more_than_its_bytes(
    jobs: Path, report: bytes, long_document: bytes
) -> None:
    need_office()
    office = LibreOffice(pdf_cache=0)

    async def cached(source: bytes) -> bool:
        # With no office to run, only a kept PDF can answer.
        office.soffice = "/nonexistent/soffice"
        try:
            await office.pdf(source)
        except AppCrashed:
            return False
        finally:
            office.soffice = "soffice"
        return True

    first = await office.pdf(report)
    assert first.startswith(b"%PDF")
    assert not await cached(report)
    office.pdf_cache = len(first) + 1
    await office.pdf(report)
    assert await cached(report)
    await office.pdf(long_document)
    assert not await cached(report)


# ─── commands ─────────────────────────────────────────────────────────────────


async def test_text_commands_replace_and_format_found_text(
    office: LibreOffice, report: bytes
) -> None:
    edited = await office.apply(
        report,
        [
            command("text.replaceAll", find="FOX", replace="cat"),
            command("text.replace", find="o", replace="0", occurrence=3, matchCase=True),
            command("text.setBold", find="quick"),
            command("text.setItalic", find="Draft", occurrence=1),
            command("text.setItalic", find="lazy", value=False),
        ],
    )
    assert "The quick br0wn cat jumps over the lazy dog." in edited.inspection.text
    assert "Quarterly report" in edited.inspection.text
    document = reread(edited.content)
    runs = {run.text: run for paragraph in document.paragraphs for run in paragraph.runs}
    assert runs["quick"].bold is True
    assert runs["Draft"].italic is True
    assert not runs["lazy"].italic


async def test_paragraph_commands_insert_set_style_delete_and_break_pages(
    office: LibreOffice, report: bytes
) -> None:
    edited = await office.apply(
        report,
        [
            command("paragraph.insertBefore", heading="details", text="Before the details."),
            command("paragraph.insertAfter", paragraph="Draft", text="After the draft."),
            command("paragraph.insertAfter", heading="Summary", text="Under the summary."),
            command("paragraph.append", text="Appendix", style="Heading 1"),
            command("paragraph.setText", paragraph="Closing", text="Final words."),
            command("paragraph.setStyle", paragraph="Final words", style="Heading 2"),
            command("paragraph.setStyle", heading="Details", style="Body"),
            command("paragraph.delete", paragraph="quick brown fox"),
            command("page.insertBreak", heading="Appendix"),
        ],
    )
    inspection = edited.inspection
    assert inspection.outline == "Quarterly report\nSummary\n  Final words.\nAppendix"
    lines = inspection.text.splitlines()
    assert lines[:7] == [
        "Quarterly report",
        "Summary",
        "Under the summary.",
        "Before the details.",
        "Details",
        "Draft figures follow.",
        "After the draft.",
    ]
    assert "quick brown fox" not in inspection.text
    assert inspection.pages == 2
    document = reread(edited.content)
    styles = {p.text: p.style.name if p.style else "" for p in document.paragraphs}
    assert styles["Appendix"] == "Heading 1"
    assert styles["Final words."] == "Heading 2"
    assert styles["Under the summary."] == styles["Draft figures follow."]
    # LibreOffice writes the break as a page break ending the paragraph before.
    with zipfile.ZipFile(io.BytesIO(edited.content)) as package:
        body = package.read("word/document.xml").decode()
    assert '<w:br w:type="page"/>' in body[body.index("Final words.") : body.index("Appendix")]


async def test_an_appended_paragraph_takes_the_last_paragraphs_body_style_found_from_the_end(
    office: LibreOffice,
) -> None:
    quoted = docx.Document()
    quoted.add_heading("Sayings", 1)
    for number in range(30):
        quoted.add_paragraph(f"Saying {number}.", style="Quote")
    after_a_table = docx.Document()
    after_a_table.add_paragraph("Figures.", style="Quote")
    after_a_table.add_table(rows=1, cols=1).cell(0, 0).text = "12"
    ending_in_a_heading = docx.Document()
    ending_in_a_heading.add_heading("Last words", 1)
    styles: list[str] = []
    for document in (quoted, after_a_table, ending_in_a_heading):
        edited = await office.apply(saved(document), [command("paragraph.append", text="Added.")])
        added = reread(edited.content).paragraphs[-1]
        assert added.text == "Added."
        styles.append(added.style.name if added.style else "")
    # A body paragraph's style goes on; after a table or a heading, the body's default.
    assert styles == ["Quote", "Normal", "Normal"]


async def test_review_commands_track_comment_reply_resolve_and_delete_by_the_author(
    office: LibreOffice, reviewed: bytes
) -> None:
    edited = await office.apply(
        reviewed,
        [
            command("changes.track", value=True),
            command("comment.add", anchor="lazy dog", text="Which dog?"),
            command("comment.reply", id="2", text="The lazy one."),
            command("comment.resolve", id=2),
            command("comment.delete", id="1"),
            command("text.replaceAll", find="Closing", replace="Final"),
        ],
        author="Ada Agent",
    )
    review = edited.inspection.review
    comments = {item.text: item for item in review if item.kind == "comment"}
    assert set(comments) == {"Which dog?", "The lazy one."}
    assert {c.author for c in comments.values()} == {"Ada Agent"}
    assert {c.anchor for c in comments.values()} == {"lazy dog"}
    ours = [item for item in review if item.kind == "change" and item.author == "Ada Agent"]
    assert sorted((c.change, c.text) for c in ours) == [("delete", "Closing"), ("insert", "Final")]
    with zipfile.ZipFile(io.BytesIO(edited.content)) as package:
        extended = package.read("word/commentsExtended.xml").decode()
        settings = package.read("word/settings.xml").decode()
    assert 'w15:done="1"' in extended
    assert "trackRevisions" in settings


async def test_changes_are_accepted_and_rejected_one_by_one_by_their_ids(
    office: LibreOffice, reviewed: bytes
) -> None:
    edited = await office.apply(
        reviewed, [command("changes.accept", id="1"), command("changes.reject", id="2")]
    )
    assert [item.kind for item in edited.inspection.review] == ["comment"]
    assert "lazy dog. Quickly. Slowly." in edited.inspection.text


async def test_every_change_is_accepted_or_rejected_at_once(
    office: LibreOffice, reviewed: bytes
) -> None:
    accepted, rejected = await asyncio.gather(
        office.apply(reviewed, [command("changes.acceptAll")]),
        office.apply(reviewed, [command("changes.rejectAll"), command("changes.rejectAll")]),
    )
    assert "lazy dog. Quickly.\n" in accepted.inspection.text
    assert "lazy dog. Slowly.\n" in rejected.inspection.text
    for edited in (accepted, rejected):
        assert [item.kind for item in edited.inspection.review] == ["comment"]


async def test_table_commands_insert_fill_and_delete_rows(
    office: LibreOffice, report: bytes
) -> None:
    edited = await office.apply(
        report,
        [
            command("table.insertRow", table=1, row=2, cells=["South", "7"]),
            command("table.insertRow", table=1, row=1, before=True),
            command("table.setCell", table=1, row=1, column=1, text="Regions"),
            command("table.setCell", table=1, row=4, column=2, text="8"),
            command("table.deleteRow", table=1, row=2),
        ],
    )
    (table,) = reread(edited.content).tables
    assert [[cell.text for cell in row.cells] for row in table.rows] == [
        ["Regions", ""],
        ["North", "12"],
        ["South", "8"],
    ]


async def test_fields_and_the_table_of_contents_are_updated(office: LibreOffice) -> None:
    source = saved(toc_document())
    edited = await office.apply(source, [command("fields.update"), command("toc.update")])
    assert "Stale contents" not in edited.inspection.text
    assert "Summary\t1" in edited.inspection.text.splitlines()


async def test_a_batch_is_atomic_and_its_refusal_names_the_failing_command(
    office: LibreOffice, report: bytes
) -> None:
    batch = [
        command("text.replaceAll", find="fox", replace="cat"),
        command("paragraph.append", text="More."),
        command("table.setCell", table=2, row=1, column=1, text="x"),
    ]
    with pytest.raises(AppRefused, match=r"command 2 \(`table.setCell`\): no table 2"):
        await office.apply(report, batch)


REFUSALS = [
    ([command("paragraph.delete", heading="Nowhere")], "no heading `Nowhere`; the headings"),
    ([command("paragraph.delete", paragraph="o", occurrence=9)], "only 4 paragraphs"),
    ([command("text.replace", find="zebra", replace="x")], "not found: `zebra`"),
    ([command("text.replace", find="fox", replace="x", occurrence=2)], "occurs 1 times"),
    ([command("paragraph.setStyle", heading="Summary", style="Nope")], "no paragraph style"),
    ([command("comment.resolve", id="3")], "no comment `3` \\(there are 0\\)"),
    ([command("toc.update")], "no table of contents"),
    ([command("table.insertRow", table=1, row=1, cells=["a", "b", "c"])], "2 columns"),
    ([command("table.setCell", table=1, row=9, column=1, text="x")], "no cell at row 9"),
]
"""Batches the document can't do, and why the office says so."""


@pytest.mark.parametrize(("batch", "reason"), REFUSALS, ids=[r for _, r in REFUSALS])
async def test_a_command_the_document_cannot_do_is_refused_with_the_reason(
    office: LibreOffice, report: bytes, batch: list[AppCommand], reason: str
) -> None:
    with pytest.raises(AppRefused) as refused:
        await office.apply(report, batch)
    assert re.search(reason, refused.value.reason), refused.value.reason


WITHIN_A_BATCH = [
    [command("changes.accept", id="1"), command("changes.accept", id="1")],
    [command("comment.delete", id="1"), command("comment.reply", id="1", text="x")],
    [command("changes.acceptAll"), command("changes.reject", id="2")],
]


@pytest.mark.parametrize("batch", WITHIN_A_BATCH, ids=["accept", "comment", "all"])
async def test_settled_changes_and_deleted_comments_keep_their_ids_within_a_batch(
    office: LibreOffice, reviewed: bytes, batch: list[AppCommand]
) -> None:
    with pytest.raises(AppRefused, match="earlier in this batch"):
        await office.apply(reviewed, batch)


async def test_a_single_table_row_and_a_lone_paragraph_are_refused(office: LibreOffice) -> None:
    document = docx.Document()
    document.add_table(rows=1, cols=1)
    document.add_paragraph("Between.")
    document.add_table(rows=1, cols=1)
    source = saved(document)
    results = await asyncio.gather(
        office.apply(source, [command("table.deleteRow", table=1, row=1)]),
        office.apply(source, [command("paragraph.delete", paragraph="Between")]),
        return_exceptions=True,
    )
    reasons = [str(result) for result in results]
    assert "only one row" in reasons[0]
    assert "stands alone" in reasons[1]


# ─── failures ─────────────────────────────────────────────────────────────────


async def test_a_file_the_office_cannot_open_is_refused(office: LibreOffice) -> None:
    with pytest.raises(AppRefused, match=r"not a \.docx"):
        await office.inspect(b"this is not a document")
    with pytest.raises(AppRefused, match="LibreOffice can't open the file"):
        await office.render(hostile.sound_docx(), 1)


async def test_a_job_past_its_deadline_is_killed_with_its_whole_group(
    office: LibreOffice, report: bytes, jobs: Path
) -> None:
    with pytest.raises(AppTimeout, match=r"deadline of 0\.5 s"):
        await office.inspect(report, deadline=0.5)
    # A render that stops waiting leaves the export going: the next render gets its page.
    with pytest.raises(AppTimeout, match="so try again"):
        await office.render(report, 1, deadline=0.5)
    assert size(await office.render(report, 1, deadline=SLOW)) == (816, 1056)
    with pytest.raises(AppTimeout, match=r"deadline of 0\.1 s"):
        await LibreOffice(export_deadline=0.1).render(report, 1, deadline=0.5)
    # The jobs fixture checks no process of these jobs is left and their directories are gone.


@pytest.mark.timeout(120)
async def test_jobs_that_fail_side_by_side_under_load_leave_nothing_behind(
    office: LibreOffice,
    report: bytes,
    jobs: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A driver that starts an office on the job's profile and dies while it starts: a crash
    # whose office is mid start-up when the group is killed.
    crashing = tmp_path / "crash.sh"
    crashing.write_text(
        '#!/bin/sh\nsoffice --headless --norestore "-env:UserInstallation=file://$2/profile" '
        '>"$2/soffice.log" 2>&1 &\n'
        "sleep 0.3\nexit 3\n"
    )
    crashing.chmod(0o755)
    crash = LibreOffice(python=str(crashing))
    sound = hostile.sound()
    # Two busy loops keep both cores busy, so a killed office takes long to tear down.
    hogs = [
        await asyncio.create_subprocess_exec(sys.executable, "-c", "while True: pass")
        for _ in range(2)
    ]
    # A job wipes its directory last: a process that names it then has outlived its job.
    outlived: list[int] = []
    wipe = shutil.rmtree

    def wiping(path: str, *args: Any, **kwargs: Any) -> None:
        outlived.extend(running(str(path)))
        wipe(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", wiping)
    try:
        for _ in range(4):
            outcomes = await asyncio.gather(
                office.inspect(sound, deadline=SLOW),
                office.inspect(sound, deadline=SLOW),
                # Deadlines inside an office's start-up, which takes longer than 0.4 s even
                # from the template profile: each ends the job at another point of its start.
                office.inspect(report, deadline=0.1),
                office.inspect(report, deadline=0.25),
                office.inspect(report, deadline=0.4),
                crash.inspect(report, deadline=SLOW),
                crash.inspect(report, deadline=SLOW),
                return_exceptions=True,
            )
            kinds = [type(outcome) for outcome in outcomes]
            assert kinds == [AppRefused] * 2 + [AppTimeout] * 3 + [AppCrashed] * 2, outcomes
            assert all("exit status 3" in str(outcome) for outcome in outcomes[5:])
            # Every job has returned: none of their processes, nor their directories, is left.
            assert leftovers(jobs) == ([], [])
    finally:
        for hog in hogs:
            hog.kill()
            await hog.wait()
    # Nor was any process alive when its own job wiped its directory, while the others ran.
    assert outlived == []


async def test_a_job_answers_first_and_its_office_is_reaped_after_whole(
    office: LibreOffice, jobs: Path, report: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A job wipes its directory last: a process that names it then has outlived its reaping.
    outlived: list[int] = []
    wipe = shutil.rmtree

    def wiping(path: str, *args: Any, **kwargs: Any) -> None:
        outlived.extend(running(str(path)))
        wipe(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", wiping)
    edited = await office.apply(report, [command("paragraph.append", text="Reaped after.")])
    assert office.reaping()[1] == 1  # the reply came first; its office is reaped after
    inspected = await office.inspect(edited.content)
    assert "Reaped after." in inspected.text
    assert office.reaping()[1] == 2
    await office.reaped()
    assert office.reaping() == (0, 2)
    assert leftovers(jobs) == ([], [])
    # A job that fails is reaped before its failure is told.
    with pytest.raises(AppRefused, match="no heading"):
        await office.apply(report, [command("paragraph.delete", heading="Nowhere")])
    assert office.reaping() == (0, 2)
    assert leftovers(jobs) == ([], [])
    assert outlived == []


async def test_a_cold_job_knows_its_processes_once_its_office_is_ready(
    tmp_path: Path, jobs: Path
) -> None:
    # A driver whose office runs in a session of its own, as a sandbox's does, and names the
    # job's directory until told to stop: then only its session says it is the job's.
    driver = script(
        tmp_path,
        'mkfifo "$2/go"\n'
        """setsid sh -c 'echo up >"$0/up"; read go <"$0/go"; exec sleep 300' "$2" &\n"""
        'while [ ! -s "$2/up" ]; do sleep 0.01; done\n'
        """echo '{"ready": true}'\n"""
        "read job\n"
        """echo '{"ok": true, "result": {"job": "done"}}'\n"""
        "exec sleep 300",
    )
    runner = Runner(soffice=NOWHERE, python=driver, isolate=False, max_file=1024)
    office = await start(runner)
    try:
        assert await _answer(office, {"op": "inspect"}, None, 1024) == {"job": "done"}
        group = str(office.process.pid)
        (helper,) = [pid for pid, _, session in office.known if session != group]
        await asyncio.to_thread((office.directory / "go").write_text, "go\n")
        named = str(office.directory).encode()
        await until(lambda: named not in Path(f"/proc/{helper}/cmdline").read_bytes())
    finally:
        await end(office)
    assert not alive(helper)  # its session was known: the kill found it, and waited for it


def leftovers(jobs: Path) -> tuple[list[int], list[Path]]:
    """Return the live processes and the directories that jobs made in ``jobs`` left.

    The adapters' template profiles are theirs, made once and copied into each job: not a job's.
    """
    made = [path for path in jobs.iterdir() if not path.name.startswith(TEMPLATE_PREFIX)]
    return running(str(jobs)), made


async def test_a_reply_or_a_file_over_the_limit_is_too_large(office: LibreOffice) -> None:
    document = docx.Document()
    for _ in range(200):
        document.add_paragraph("All work and no play. " * 20)
    source = saved(document)
    small = LibreOffice(max_size=len(source) + 100)
    with pytest.raises(AppTooLarge, match="reply is over the size limit"):
        await small.inspect(source)
    with pytest.raises(AppTooLarge, match="over the limit"):
        await LibreOffice(max_size=len(source) - 1).inspect(source)


# ─── the network ──────────────────────────────────────────────────────────────


class Listener:
    """A TCP listener on loopback that records every connection it gets."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port: int = self.server.getsockname()[1]
        self.received: list[bytes] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.server.accept()
            except TimeoutError:
                continue
            with connection:
                connection.settimeout(1)
                try:
                    self.received.append(connection.recv(200))
                except OSError:
                    self.received.append(b"")

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join()
        self.server.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    listening = Listener()
    yield listening
    listening.stop()


async def test_a_document_that_names_urls_reaches_nothing_and_still_renders(
    office: LibreOffice, listener: Listener, tmp_path: Path
) -> None:
    source = linking_document(f"http://127.0.0.1:{listener.port}")
    png = await office.render(source, 1, deadline=SLOW)
    edited = await office.apply(source, [command("text.replaceAll", find="page", replace="leaf")])
    assert listener.received == []
    assert size(png) == (816, 1056)
    assert "A leaf that points elsewhere." in edited.inspection.text
    assert await office.isolated()
    # The same file through a bare office does reach the listener: the document is live.
    (tmp_path / "linking.docx").write_bytes(source)
    await asyncio.to_thread(
        subprocess.run,
        [
            "soffice",
            "--headless",
            f"-env:UserInstallation={(tmp_path / 'profile').as_uri()}",
            "--convert-to",
            "pdf",
            "--outdir",
            str(tmp_path),
            str(tmp_path / "linking.docx"),
        ],
        capture_output=True,
        timeout=50,
        check=False,
    )
    assert listener.received


async def test_the_text_holds_what_fields_and_content_controls_show_in_reading_order(
    office: LibreOffice,
) -> None:
    lines = (await office.inspect(shown_document())).text.splitlines()
    assert lines[0] == "Dear «FirstName», hi."
    assert re.fullmatch(r"Signed on \d{1,2} \w+ \d{4} by the parties\.", lines[1])
    assert lines[2:6] == [
        "Author: Grace Hopper; title: The Contract",
        "Plan: Choose an item. (pick one).",
        "Notes: Rich words here end.",
        "A paragraph in a block control.",
    ]
