"""A LibreOffice worker (``WORKER_APP=libreoffice``): the real office behind the same service.

The worker keeps its token, screening, deadlines and limits, and runs each job through the
LibreOffice adapter, whose driver starts under the worker's launcher. Each test runs the real
office (a few seconds a start here), so the tests are few and each checks several things; they
skip where the office can't run, except in CI. No process of a job may outlive its test, and the
worker's temporary directory must be empty after it.
"""

import asyncio
import shlex
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from worker.artifactr_files_worker.service import _libreoffice

from artifactr.files.apps import processes
from artifactr.files.apps.jobs import CommandsJob
from artifactr.files.apps.libreoffice import LibreOffice, _process
from artifactr.files.apps.worker import Worker
from artifactr.files.core.app_port import AppCommand, CommandSpec
from artifactr.files.core.errors import AppCrashed, AppRefused, AppTimeout, UnsafeFile
from artifactr.files.core.screen import screen
from tests.office import need_office, running
from tests.pids import alive
from tests.worker.conftest import TOKEN, MakeWorker, counting

PNG = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.timeout(180)  # each test starts offices: seconds each on a busy machine


def an_office_that_hangs(folder: Path) -> Path:
    """Return a ``soffice`` whose office, started for a job, stops itself before it starts.

    Stopped (``SIGSTOP``), it never answers the job's driver, which waits for it as long as it
    lives; only a kill ends it. ``--version`` and the template's first start run the real office.
    """
    need_office()
    office = shutil.which("soffice")
    assert office is not None
    program = folder / "soffice"
    program.write_text(
        "#!/bin/sh\n"
        'case "$*" in *--accept=*) kill -STOP $$ ;; esac\n'
        f'exec {shlex.quote(office)} "$@"\n'
    )
    program.chmod(0o755)
    return program


@pytest.fixture
def leftovers(scratch: Path) -> Iterator[Path]:
    """The worker's temporary directory; no process that names it may outlive the test."""
    yield scratch
    assert running(str(scratch)) == []


async def test_a_libreoffice_worker_edits_renders_and_lists_the_offices_own_commands(
    make_worker: MakeWorker, leftovers: Path, report: bytes
) -> None:
    served = make_worker("libreoffice", build="sha256:0123abcd")
    office = served.app()
    assert office.name == "libreoffice"
    listed = {spec.id for spec in await office.commands("table")}
    assert {"table.setCell", "table.insertRow", "table.deleteRow"} <= listed
    with counting(screen) as screenings:
        edited = await office.apply(
            report,
            [
                AppCommand(command="changes.track", params={"value": True}),
                AppCommand(command="text.replaceAll", params={"find": "Draft", "replace": "Final"}),
            ],
            author="Ada Lovelace",
        )
    # The upload is screened by the worker alone, and the file the office saved once.
    assert screenings.count == 2
    assert edited.inspection.about.app == "libreoffice"
    assert edited.inspection.about.build == "sha256:0123abcd"  # WORKER_BUILD, for provenance
    assert "Final figures follow." in edited.inspection.text
    assert {item.author for item in edited.inspection.review} == {"Ada Lovelace"}
    with counting(screen) as screenings:
        page = await office.render(edited.content, 1, scale=0.5)
    assert page.startswith(PNG)
    assert screenings.count == 1
    # The next page of the same file comes from the worker's PDF, without an office.
    with (
        counting(_process.run) as jobs,
        pytest.raises(AppRefused, match="no page 2: the document has 1"),
    ):
        await office.render(edited.content, 2)
    assert jobs.count == 0
    # A WordCraft adapter pointed at it is told so, not handed the office's results.
    with pytest.raises(AppCrashed, match="the worker runs libreoffice, not wordcraft"):
        await Worker(served.url, token=TOKEN).commands()


async def test_what_the_office_cant_do_is_typed_and_its_limits_hold(
    make_worker: MakeWorker, leftovers: Path, report: bytes, tmp_path: Path
) -> None:
    office = make_worker("libreoffice").app()
    with pytest.raises(AppRefused, match="unknown command"):
        await office.apply(report, [AppCommand(command="edit.replaceAll")])
    with pytest.raises(UnsafeFile) as unsafe:
        await office.inspect(b"")
    assert unsafe.value.reason == "not_a_zip"
    # The job's office hangs at its start, so the job can never end by itself: the deadline
    # ended it, and the stopped office is gone with its job (``leftovers``).
    hung = make_worker("libreoffice", soffice=str(an_office_that_hangs(tmp_path))).app()
    with pytest.raises(AppTimeout, match=r"deadline of 0\.5 s"):
        await hung.inspect(report, deadline=0.5)
    assert running(str(leftovers)) == []
    # Its driver starts under the launcher: in 512 MiB of address space the office can't start.
    starved = make_worker("libreoffice", memory=512 * 2**20).app()
    with pytest.raises(AppCrashed, match="soffice exited"):
        await starved.inspect(report)


async def test_a_libreoffice_worker_edits_a_workbook_and_renders_a_deck(
    make_worker: MakeWorker, leftovers: Path
) -> None:
    from tests.sheets import build_pptx, build_xlsx

    office = make_worker("libreoffice").app()
    assert {"cell.set", "slide.move"} <= {spec.id for spec in await office.commands()}
    edited = await office.apply(
        build_xlsx(), [AppCommand(command="cell.set", params={"cell": "B3", "value": 450})]
    )
    assert "4\tTotal\t1650 (=SUM(B2:B3))" in edited.inspection.text
    with pytest.raises(AppRefused, match="a command for a Word document"):
        await office.apply(build_xlsx(), [AppCommand(command="fields.update")])
    deck = build_pptx(2)
    assert (await office.inspect(deck)).outline == "1. Quarterly review\n2. Topic 2"
    assert (await office.render(deck, 2, scale=0.5)).startswith(PNG)


async def test_a_pooled_worker_keeps_an_office_ready_and_runs_each_job_on_one_of_its_own(
    leftovers: Path, make_worker: MakeWorker, report: bytes
) -> None:
    # ``leftovers`` first: it looks for live offices once the worker has stopped, its pool too.
    office = make_worker("libreoffice", pool=1).app()  # warmed up for Writer, under the launcher
    assert "Final figures follow." not in (await office.inspect(report)).text
    waiting = await started_ahead(leftovers)
    edited = await office.apply(
        report,
        [AppCommand(command="text.replaceAll", params={"find": "Draft", "replace": "Final"})],
    )
    assert "Final figures follow." in edited.inspection.text
    # The edit answered before its office was reaped; the next job waits until it is gone.
    assert "Final figures follow." not in (await office.inspect(report)).text
    assert not any(alive(pid) for pid in waiting)  # the office that ran the edit is gone
    assert set(await started_ahead(leftovers)).isdisjoint(waiting)  # and another waits


async def started_ahead(scratch: Path) -> list[int]:
    """Wait until an office started ahead runs in the worker's scratch; return its processes."""
    for _ in range(600):
        if found := running(str(scratch)):
            return found
        await asyncio.sleep(0.05)
    pytest.fail("no office was started ahead")


def awaiting(task: "asyncio.Task[object]", name: str) -> bool:
    """Return whether ``task`` is suspended in a coroutine called ``name``, however deep."""
    said = task.get_coro()
    while said is not None:
        if getattr(said, "__qualname__", "") == name:
            return True
        said = getattr(said, "cr_await", None)
    return False


async def test_the_next_libreoffice_job_waits_until_the_office_answered_first_is_reaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An office that answered first, its kill held back: it is being reaped while the next
    # job comes. The kill lands only once that job waits for the reaping.
    office = LibreOffice(exports=1)
    lingering = tmp_path / "driver.sh"
    lingering.write_text("""#!/bin/sh\nsleep 30 & echo '{"ok": true, "result": {}}'\n""")
    lingering.chmod(0o755)
    runner = _process.Runner(
        soffice="/bin/echo", python=str(lingering), isolate=False, max_file=1024
    )
    held: list[asyncio.Task[object]] = []
    seen: list[tuple[int, int]] = []
    kill_group = processes._kill_group

    def late(pgid: int) -> None:
        if seen or (held and awaiting(held[0], "Reaper.drained")):
            kill_group(pgid)

    monkeypatch.setattr(processes, "_kill_group", late)
    await _process.run(runner, "inspect", b"any", deadline=30, reaper=office._reaper)
    assert office.reaping() == (1, 1)
    listing = office.commands

    async def commands(query: str = "") -> Sequence[CommandSpec]:
        seen.append(office.reaping())
        return await listing(query)

    monkeypatch.setattr(office, "commands", commands)
    with tempfile.TemporaryFile() as upload:
        job = asyncio.create_task(_libreoffice(office, CommandsJob(), upload, 30, None))
        held.append(job)
        result = await job
    assert result.commands
    assert seen == [(0, 1)]  # the job ran once the office before it was gone
    assert running(str(lingering.parent)) == []
    await office.close()
