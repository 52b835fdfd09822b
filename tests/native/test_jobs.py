"""Jobs: at most N files read at once, a bounded queue in order, the rest refused (ADR-0015)."""

import asyncio
import itertools

import pytest

from artifactr.files.core.errors import ServiceBusy
from artifactr.files.native.jobs import JOB_MEMORY, JOBS, QUEUE, Jobs, memory_budget


async def until_full(jobs: Jobs) -> None:
    """Wait until the jobs' slots and queue are all taken, as the callers' uploads will have them.

    A caller reaches the queue after its own I/O (a database's round trips, on PostgreSQL), so
    this waits for the event, bounded, never for a number of turns of the loop.
    """
    async with asyncio.timeout(30):
        for _ in itertools.count():
            if jobs.full:
                return
            await asyncio.sleep(0.005)


async def test_jobs_past_the_slots_wait_in_order_and_past_the_queue_are_refused() -> None:
    jobs = Jobs(1, 2)
    ran: list[str] = []
    go = asyncio.Event()

    async def job(name: str) -> None:
        async with jobs.turn():
            ran.append(name)
            await go.wait()

    first = asyncio.ensure_future(job("first"))
    await asyncio.sleep(0)
    waiting = [asyncio.ensure_future(job(name)) for name in ("second", "third")]
    await until_full(jobs)
    with pytest.raises(ServiceBusy) as caught:
        jobs.admit()
    assert caught.value.details() == {
        "reason": "1 files are being read and 2 wait",
        "retry_after": 2,
    }
    with pytest.raises(ServiceBusy):
        await job("fourth")
    go.set()
    await asyncio.gather(first, *waiting)
    assert ran == ["first", "second", "third"]
    assert not jobs.full


async def test_a_job_that_waits_past_its_wait_is_refused_and_leaves_the_queue() -> None:
    jobs = Jobs(1, 1, wait=0)
    async with jobs.turn():
        with pytest.raises(ServiceBusy) as caught:
            async with jobs.turn():
                pass
        assert caught.value.reason == "the file waited 0 s for its turn"
        assert not jobs.full
    async with jobs.turn():
        pass


def test_the_defaults_follow_the_cpus_and_the_budget_each_job() -> None:
    jobs = Jobs()
    assert (jobs.jobs, jobs.queue) == (JOBS, QUEUE)
    assert memory_budget(4) - memory_budget(3) == JOB_MEMORY
    for bad in ({"jobs": 0}, {"queue": -1}, {"wait": -1.0}):
        with pytest.raises(ValueError, match="jobs must be at least 1"):
            Jobs(**bad)
