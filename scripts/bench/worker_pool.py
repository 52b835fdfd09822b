"""Worker pool bench: LibreOffice jobs a second per core, without the pool and with it (issue 26).

It starts ``--workers`` LibreOffice workers without a pool and as many with one (``WORKER_POOL``
offices started ahead, each warmed up for Writer documents and used for one job), each a process
of its own on a port of 127.0.0.1 (``python -m worker.artifactr_files_worker``, as the image runs
it). A worker runs one job at a time, so each worker gets one client calling it in a loop; the
machine's cores are all busy when there are as many workers as cores (the default). The job is
the edit of the LibreOffice bench's side-by-side table: five commands on a ten-page document,
then the saved file inspected. The two configurations take turns, ``--seconds`` each, for
``--rounds`` rounds, so a machine others share weighs on both alike; in each turn the first job
of each worker is left out (a pool fills during the other configuration's turn). It prints, for
each, the jobs done, jobs a second, jobs a second per core (the cores this process may run on),
the median job, and the pool's gain as a ratio::

    uv run --no-sync python -m scripts.bench.worker_pool [--pool 1] [--workers <cores>]
        [--seconds 20] [--rounds 2]

``--quick`` is one worker of each kind, one turn of 2 s each.
"""

import os
import statistics
import sys
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field

import anyio

from artifactr.files.core.errors import AppFailure
from scripts.bench._harness import guarded, machine_load, parser
from scripts.bench.hostile import QUICK, Spawned, spawn
from scripts.bench.libreoffice import EDIT, edit_file


@dataclass
class Tally:
    """What one configuration's workers did over all its turns."""

    pool: int
    """Offices each worker keeps started ahead (0: none)."""
    seconds: float = 0.0
    """Seconds its workers were measured, summed over turns (each turn counts once)."""
    jobs: int = 0
    """Jobs done while measured."""
    latencies: list[float] = field(default_factory=list[float])
    """Each measured job's time, in seconds."""
    failures: int = 0
    """Jobs that failed."""

    def rate(self) -> float:
        """Return jobs a second, all its workers together."""
        return self.jobs / self.seconds if self.seconds else 0.0


async def turn(workers: Sequence[Spawned], seconds: float, tally: Tally, number: int) -> None:
    """Have one client a worker call it in a loop for ``seconds``; add what it did to ``tally``.

    Each client's first job is left out: its clock starts when that job ends.
    """
    spans: list[float] = []

    async def client(index: int, worker: Spawned) -> None:
        app = worker.app()
        source = edit_file(10_000 * (number + 1) + index)
        started: float | None = None
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            called = time.monotonic()
            try:
                await app.apply(source, EDIT, author="Bench")
            except AppFailure:
                tally.failures += 1
                continue
            ended = time.monotonic()
            if started is None:
                started = ended
                until = ended + seconds
                continue
            tally.jobs += 1
            tally.latencies.append(ended - called)
        spans.append(time.monotonic() - (started or time.monotonic()))

    async with anyio.create_task_group() as group:
        for index, worker in enumerate(workers):
            group.start_soon(client, index, worker)
    tally.seconds += statistics.mean(spans)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench and print its table."""
    cores = len(os.sched_getaffinity(0))
    arguments = parser(__doc__, quick="one worker of each kind, one turn of 2 s each")
    arguments.add_argument("--pool", type=int, default=1, help="offices a pooled worker keeps (1)")
    arguments.add_argument(
        "--workers", type=int, default=cores, help=f"workers of each kind ({cores}, the cores)"
    )
    arguments.add_argument("--seconds", type=float, default=20.0, help="seconds a turn (20)")
    arguments.add_argument("--rounds", type=int, default=2, help="turns of each configuration (2)")
    options = arguments.parse_args(argv)
    if options.quick:
        options.workers, options.seconds, options.rounds = 1, 2.0, 1
    tallies = [Tally(pool=0), Tally(pool=options.pool)]
    with ExitStack() as stack:
        fleets: list[list[Spawned]] = []
        for tally in tallies:
            # Named each time: a worker's pool is sized from the machine if unset (ADR-0033).
            env = {"WORKER_APP": "libreoffice", "WORKER_POOL": str(tally.pool)}
            cli = [sys.executable, str(QUICK)]
            fleets.append([stack.enter_context(spawn(cli, env)) for _ in range(options.workers)])
        for number in range(options.rounds):
            for tally, fleet in zip(tallies, fleets, strict=True):
                anyio.run(turn, fleet, options.seconds, tally, number)
    print(
        f"LibreOffice workers: {options.workers} of each kind, one client each, on {cores} "
        f"cores; the job: {len(EDIT)} commands on a 10-page document, then inspected\n"
    )
    print("| pool | jobs | jobs/s | jobs/s/core | median job | failed |")
    print("|---:|---:|---:|---:|---:|---:|")
    for tally in tallies:
        median = statistics.median(tally.latencies) if tally.latencies else float("nan")
        print(
            f"| {tally.pool} | {tally.jobs} | {tally.rate():.2f} | {tally.rate() / cores:.3f} "
            f"| {median:.2f} s | {tally.failures} |"
        )
    cold, pooled = tallies
    if cold.rate():
        print(f"\npool {pooled.pool}: {pooled.rate() / cold.rate():.2f}x the jobs/s/core of none")
    print(machine_load())
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))
