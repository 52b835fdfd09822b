"""The pool: offices started ahead, each used for exactly one job and then killed.

A pooled office's driver is gone, with its directory, once its job is done, and the next job
gets another; the pool stops at its memory cap, skips an office that died while it waited, says
why it can't start one, and kills what it holds when closed.
"""

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from artifactr.files.apps.libreoffice import LibreOffice
from artifactr.files.core.errors import AppCrashed
from tests.apps.libreoffice.test_catalog import NOWHERE, script
from tests.documents import build_docx
from tests.pids import alive


async def until(ready: Callable[[], bool], seconds: float = 60) -> None:
    """Wait, polling, until ``ready()`` holds; fail after ``seconds``."""
    for _ in range(int(seconds / 0.05)):
        if ready():
            return
        await asyncio.sleep(0.05)
    pytest.fail(f"not ready after {seconds:g} s")


async def test_a_pooled_office_runs_one_document_and_never_a_second(office: LibreOffice) -> None:
    pooled = LibreOffice(pool=1)
    try:
        first = await pooled.inspect(build_docx(("First document.",)))
        assert "First document." in first.text
        await until(lambda: pooled.pool_status().ready == 1)
        status = pooled.pool_status()
        (waiting,) = status.pids
        assert status.size == 1
        assert status.idle_memory > 0

        second = await pooled.inspect(build_docx(("Second document.",)))

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


async def test_the_pool_stops_at_its_memory_cap_and_skips_an_office_that_died(
    tmp_path: Path, jobs: Path
) -> None:
    waiting = script(tmp_path, "sleep 30", "waiting")
    capped = LibreOffice(python=waiting, pool=2, pool_memory=1, sandbox=False)
    try:
        capped.fill_pool()
        capped.fill_pool()  # one filler at a time: the second call finds it running
        await until(lambda: capped.pool_status().ready == 1)
        await asyncio.sleep(0.2)
        assert capped.pool_status().ready == 1  # one office's memory is over the cap
    finally:
        await capped.close()
    dying = LibreOffice(python=script(tmp_path, "exit 0", "dying"), pool=1, sandbox=False)
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
