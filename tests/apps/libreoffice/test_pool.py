"""The pool: offices started ahead, warmed up, each used for exactly one job and then killed.

A pooled office warms up on a document of its own before it says it is ready, and its job reads
the user's document alone, as a cold job's office would; its driver is gone, with its directory,
once its job is done, and the next job gets another. A job may take an office still starting.
The pool stops at its memory cap, skips an office that died while it waited, says why it can't
start or warm one up (and still serves jobs), and kills what it holds when closed.
"""

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from artifactr.files.apps.libreoffice import MAX_FILE, LibreOffice, machine_size
from artifactr.files.apps.libreoffice._availability import SYSTEM_PYTHON
from artifactr.files.apps.libreoffice._pool import Pool
from artifactr.files.apps.libreoffice._process import Runner, end, run
from artifactr.files.core.app_port import AppCommand
from artifactr.files.core.errors import AppCrashed, AppTimeout
from tests.apps.libreoffice.test_catalog import NOWHERE, script
from tests.documents import build_docx
from tests.office import need_office
from tests.pids import alive

READY = """echo '{"ready": true}'"""
"""What a driver says once its office answers."""


async def until(ready: Callable[[], bool], seconds: float = 60) -> None:
    """Wait, polling, until ``ready()`` holds; fail after ``seconds``."""
    for _ in range(int(seconds / 0.05)):
        if ready():
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"not ready after {seconds:g} s")


async def test_a_pooled_office_runs_one_document_and_never_a_second(office: LibreOffice) -> None:
    pooled = LibreOffice(pool=1)
    assert pooled.pool_warm == ("docx",)  # its offices warm up for Writer documents
    try:
        first = await pooled.inspect(build_docx(("First document.",)))
        assert "First document." in first.text
        await until(lambda: pooled.pool_status().ready == 1)
        status = pooled.pool_status()
        (waiting,) = status.pids
        assert (status.size, status.starting) == (1, 0)
        assert status.idle_memory > 0

        second = await pooled.inspect(build_docx(("Second document.",)))
        await pooled.reaped()  # it answered first: its office is reaped after

        assert second.text.splitlines() == ["Second document."]
        assert not alive(waiting)  # the office that read it is gone, so it reads nothing more
        await until(lambda: pooled.pool_status().ready == 1)
        assert pooled.pool_status().pids != (waiting,)
        edited = await pooled.apply(saved_report(), [], author="Ada")
        assert "Third document." in edited.inspection.text
    finally:
        await pooled.close()
    assert pooled.pool_status().ready == 0


def saved_report() -> bytes:
    return build_docx(("Third document.",))


async def test_a_warmed_up_office_edits_as_a_cold_one_and_a_job_takes_one_still_starting(
    office: LibreOffice,
) -> None:
    source = build_docx((("Heading1", "Terms"), "The fox pays on delivery.", "Thirty days."))
    edit = [
        AppCommand(command="changes.track", params={"value": True}),
        AppCommand(command="text.replaceAll", params={"find": "fox", "replace": "buyer"}),
        AppCommand(command="comment.add", params={"anchor": "Thirty", "text": "Why thirty?"}),
    ]
    cold = await office.apply(source, edit, author="Ada")
    pooled = LibreOffice(pool=1)
    try:
        pooled.fill_pool()
        await until(lambda: pooled.pool_status().ready == 1)
        warmed = await pooled.apply(source, edit, author="Ada")
        await until(lambda: pooled.pool_status().starting == 1)  # its replacement, not ready
        (starting,) = pooled.pool_status().pids
        inspected = await pooled.inspect(warmed.content)  # on the office still starting
        await pooled.reaped()
        assert not alive(starting)
    finally:
        await pooled.close()
    for edited in (warmed.inspection, inspected):
        assert (edited.text, edited.outline, edited.pages) == (
            cold.inspection.text,
            cold.inspection.outline,
            cold.inspection.pages,
        )
        assert [(item.kind, item.author, item.text) for item in edited.review] == [
            (item.kind, item.author, item.text) for item in cold.inspection.review
        ]
        assert "Warm-up." not in edited.text  # the warm-up's own document is never the job's


async def test_an_office_whose_warm_up_fails_still_runs_its_one_job(
    jobs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    need_office()
    # A format the driver has no warm-up for plays a warm-up that fails in the office.
    runner = Runner(
        soffice="soffice", python=SYSTEM_PYTHON, isolate=False, max_file=MAX_FILE, warm=("odg",)
    )

    async def made() -> Runner:
        return runner

    pool = Pool(1, 0, made)
    try:
        with caplog.at_level(logging.WARNING, "artifactr.files.apps.libreoffice"):
            pool.fill()
            await until(lambda: pool.status().ready == 1, 120)
        assert "could not warm an office up: KeyError: 'odg'" in caplog.text
        (taken,) = pool.status().pids
        reply = await run(
            runner,
            "inspect",
            build_docx(("Read all the same.",)),
            deadline=60,
            office=await pool.take(),
        )
        assert reply.result["text"] == "Read all the same."
        assert not alive(taken)
    finally:
        await pool.close()


async def test_an_office_that_never_says_it_is_ready_is_killed_and_the_pool_says_why(
    tmp_path: Path, jobs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    silent = script(tmp_path, "exec sleep 30", "silent")
    runner = Runner(soffice=NOWHERE, python=silent, isolate=False, max_file=1024)

    async def made() -> Runner:
        return runner

    pool = Pool(1, 0, made, deadline=0.3)
    with caplog.at_level(logging.WARNING, "artifactr.files.apps.libreoffice"):
        pool.fill()
        await until(lambda: "didn't answer in 0.3 s" in caplog.text)
    await until(lambda: pool.status().pids == () and left(jobs) == [])  # killed, and gone
    await pool.close()
    pool.fill()
    await asyncio.sleep(0)  # its office's driver is starting
    await pool.close()  # and stopped: nothing of it stays
    assert left(jobs) == []
    stopping = LibreOffice(python=script(tmp_path, "exit 0", "stopping"), pool=1, sandbox=False)
    with caplog.at_level(logging.WARNING, "artifactr.files.apps.libreoffice"):
        stopping.fill_pool()
        await until(lambda: "its office stopped: nothing in its logs" in caplog.text)
    assert stopping.pool_status().pids == ()
    await stopping.close()
    # A job that takes an office still starting waits for it within its own deadline.
    slow = LibreOffice(python=silent, pool=1, sandbox=False)
    try:
        slow.fill_pool()
        await until(lambda: slow.pool_status().starting == 1)
        caplog.clear()
        with pytest.raises(AppTimeout):
            await slow.inspect(build_docx(("Never read.",)), deadline=0.5)
        assert "could not start" not in caplog.text  # the job's office, not the pool's
    finally:
        await slow.close()


async def test_a_job_that_comes_while_the_pool_spawns_an_office_takes_that_office(
    tmp_path: Path, jobs: Path
) -> None:
    # Once its driver is spawned the office is ahead of any the job would start; a job that
    # came before the pool held it started a second office, and the pool's was left waiting.
    waiting = script(tmp_path, f"{READY}; exec sleep 30", "waiting")
    runner = Runner(soffice=NOWHERE, python=waiting, isolate=False, max_file=1024)

    async def made() -> Runner:
        return runner

    pool = Pool(1, 0, made)
    try:
        pool.fill()
        await asyncio.sleep(0)  # the filler has begun to spawn its office's driver
        assert pool.status().pids == ()  # which the pool does not hold yet
        office = await pool.take()
        assert office is not None
        assert office.process.returncode is None
        await end(office)
        assert not alive(office.process.pid)
    finally:
        await pool.close()
    assert left(jobs) == []


def left(jobs: Path) -> list[Path]:
    """Return what the jobs left in their directory."""
    return list(jobs.iterdir())


async def test_the_pool_stops_at_its_memory_cap_and_skips_an_office_that_died(
    tmp_path: Path, jobs: Path
) -> None:
    waiting = script(tmp_path, f"{READY}; sleep 30", "waiting")
    capped = LibreOffice(python=waiting, pool=2, pool_memory=1, sandbox=False)
    try:
        capped.fill_pool()
        capped.fill_pool()  # one filler at a time: the second call finds it running
        await until(lambda: capped.pool_status().ready == 1)
        await asyncio.sleep(0.2)
        assert capped.pool_status().ready == 1  # one office's memory is over the cap
    finally:
        await capped.close()
    dying = LibreOffice(python=script(tmp_path, f"{READY}; exit 0", "dying"), pool=1, sandbox=False)
    try:
        dying.fill_pool()
        await until(lambda: dying.pool_status().ready == 1)
        (pid,) = dying.pool_status().pids
        await until(lambda: not alive(pid))
        with pytest.raises(AppCrashed, match=r"stopped \(exit status 0\)"):
            await dying.inspect(build_docx(("Never read.",)))  # a fresh office, which dies too
    finally:
        await dying.close()


async def test_the_pool_says_why_it_cannot_start_an_office(
    jobs: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = LibreOffice(python=NOWHERE, pool=1, sandbox=False, isolate_network=False)
    with caplog.at_level(logging.WARNING, "artifactr.files.apps.libreoffice"):
        broken.fill_pool()
        await until(lambda: "could not start" in caplog.text)
    assert broken.pool_status().ready == 0
    await broken.close()
    unpooled = LibreOffice()
    unpooled.fill_pool()  # no pool: nothing starts
    await unpooled.close()
    status = unpooled.pool_status()
    assert (status.size, status.ready, status.idle_memory, status.pids) == (0, 0, 0, ())
    with pytest.raises(ValueError, match="pool_warm names odg, txt: a pooled office warms up"):
        LibreOffice(pool=1, pool_warm=("docx", "txt", "odg"))


def test_the_machine_sizes_the_pool_a_core_each_as_memory_allows_at_most_four() -> None:
    gib = 1024**3
    assert machine_size(cores=2, memory=24 * gib) == 2  # this machine: its cores decide
    assert machine_size(cores=8, memory=3 * gib) == 3  # a small memory: a GiB an office
    assert machine_size(cores=64, memory=256 * gib) == 4  # a large machine: no more than four
    assert machine_size(cores=1, memory=gib // 2) == 1  # always one: no job starts cold
    assert 1 <= machine_size() <= 4
