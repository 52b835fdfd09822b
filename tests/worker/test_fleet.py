"""A fleet of real workers behind one adapter: a busy one's job goes to the next, a dead one is
skipped (ADR-0025).

Each worker is the real service on loopback over the quick stand-in, queueing nothing
(``queue=0``), so a second call while a job runs is refused busy at once, and asks to be retried
an hour later: a job that waited for it would hit the test's timeout.
"""

import asyncio
import socket

from artifactr.files.apps.worker import Worker
from tests.worker.conftest import TOKEN, MakeWorker
from tests.worker.test_service import busy


async def test_two_jobs_at_once_run_on_two_busy_workers_without_waiting(
    make_worker: MakeWorker, report: bytes
) -> None:
    slow = {"mode": "sleep", "env": {"QUICK_SLEEP": "1"}, "queue": 0, "retry_after": 3600}
    first, second = make_worker(**slow), make_worker(**slow)
    app = Worker([first.url, second.url], token=TOKEN)
    running = asyncio.ensure_future(app.inspect(report))
    await busy(first, running=1, waiting=0)
    # The first worker is busy: the second job goes to the second worker, not to a wait.
    both = await asyncio.gather(running, app.inspect(report))
    assert both[0].fingerprint == both[1].fingerprint


async def test_a_dead_worker_in_the_fleet_is_skipped(
    make_worker: MakeWorker, report: bytes
) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{unused.getsockname()[1]}"
    live = make_worker()
    app = Worker([dead, live.url], token=TOKEN)
    for _ in range(3):
        await app.inspect(report)
