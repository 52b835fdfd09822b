"""Worker load bench: many clients against one worker, then three, on loopback (RFC-0003).

A worker runs one job at a time and scales by adding workers, never by running jobs side by
side. This bench shows it: it starts one worker process, has ``--clients`` clients call
``inspect`` in a loop for ``--seconds``, then does the same against three worker processes on
three ports, each client spreading its calls over them in turn. A busy worker answers 503 with
``Retry-After``, which the package's adapter honours, so the tail latency shows the queue. It
prints the throughput (jobs a second) and the latency's 50th, 95th and 99th percentiles::

    uv run --no-sync python -m scripts.bench.worker_load [--clients 8] [--seconds 8] [--cli "..."]
    uv run --no-sync python -m scripts.bench.worker_load --app libreoffice [--clients 6]

The app is the quick stand-in by default (``tests/worker/quick.py``: the worker's own costs, a
process per job, with no document work); ``--cli`` names another (the full stand-in, or
WordCraft), and ``--app libreoffice`` makes the workers LibreOffice ones (a fresh office a job).
The whole run takes about twice ``--seconds``, plus start-up; ``--quick`` is 2 clients for a
second each way.
"""

import shlex
import statistics
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field

import anyio

from artifactr.files.core.documents import build_docx
from artifactr.files.core.errors import AppFailure, UnsafeFile
from scripts.bench._harness import guarded, machine_load, parser
from scripts.bench.hostile import QUICK, Spawned, spawn


@dataclass
class Run:
    """What one configuration did."""

    workers: int
    """How many worker processes."""
    clients: int
    """How many clients called them."""
    seconds: float = 0.0
    """How long the run took, to its last answer."""
    latencies: list[float] = field(default_factory=list[float])
    """Each successful call's time, in seconds."""
    failures: Counter[str] = field(default_factory=Counter[str])
    """Failed calls, by kind."""

    def throughput(self) -> float:
        """Return successful jobs a second."""
        return len(self.latencies) / self.seconds if self.seconds else 0.0

    def percentile(self, rank: int) -> float:
        """Return a latency percentile (1 to 99), in seconds."""
        if len(self.latencies) < 2:
            return self.latencies[0] if self.latencies else float("nan")
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[rank - 1]


async def load(workers: Sequence[Spawned], clients: int, seconds: float, document: bytes) -> Run:
    """Call the workers from ``clients`` clients for ``seconds``; return what happened."""
    run = Run(workers=len(workers), clients=clients)
    apps = [worker.app() for worker in workers]
    started = time.monotonic()
    until = started + seconds

    async def client(index: int) -> None:
        turn = index
        while time.monotonic() < until:
            app = apps[turn % len(apps)]
            turn += 1
            called = time.monotonic()
            try:
                await app.inspect(document)
            except UnsafeFile:
                run.failures["unsafe"] += 1
            except AppFailure as failure:
                run.failures[failure.kind] += 1
            else:
                run.latencies.append(time.monotonic() - called)

    async with anyio.create_task_group() as group:
        for index in range(clients):
            group.start_soon(client, index)
    run.seconds = time.monotonic() - started
    return run


def measure(
    cli: Sequence[str],
    counts: Sequence[int],
    clients: int,
    seconds: float,
    env: Mapping[str, str] | None = None,
) -> list[Run]:
    """Run the load against each count of workers in turn; return the runs.

    ``env`` is more variables for each worker (``WORKER_APP``).
    """
    document = build_docx()
    runs: list[Run] = []
    for count in counts:
        with ExitStack() as stack:
            workers = [stack.enter_context(spawn(cli, env)) for _ in range(count)]
            runs.append(anyio.run(load, workers, clients, seconds, document))
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench and print its table."""
    arguments = parser(__doc__, quick="2 clients, a second each way")
    arguments.add_argument("--clients", type=int, default=8, help="concurrent clients (8)")
    arguments.add_argument("--seconds", type=float, default=8.0, help="seconds per run (8)")
    arguments.add_argument("--cli", type=shlex.split, default=None, help="the app's command line")
    arguments.add_argument(
        "--app", choices=("wordcraft", "libreoffice"), default="wordcraft", help="the workers' app"
    )
    options = arguments.parse_args(argv)
    cli: list[str] = options.cli or [sys.executable, str(QUICK)]
    env = {"WORKER_APP": options.app}
    clients, seconds = (2, 1.0) if options.quick else (options.clients, options.seconds)
    runs = measure(cli, (1, 3), clients, seconds, env)
    app = (
        shlex.join(cli)
        if options.app == "wordcraft"
        else "libreoffice (soffice, a fresh one a job)"
    )
    print(f"app: {app}; one inspect a call; 127.0.0.1\n")
    print("| workers | clients | jobs | jobs/s | p50 | p95 | p99 | failed |")
    print("|--------:|--------:|-----:|-------:|----:|----:|----:|-------:|")
    for run in runs:
        failed = ", ".join(f"{kind} {count}" for kind, count in sorted(run.failures.items()))
        print(
            f"| {run.workers} | {run.clients} | {len(run.latencies)} | {run.throughput():.1f} "
            f"| {run.percentile(50) * 1000:.0f} ms | {run.percentile(95) * 1000:.0f} ms "
            f"| {run.percentile(99) * 1000:.0f} ms | {failed or 'none'} |"
        )
    one, three = runs
    if one.throughput():
        print(f"\nthree workers: {three.throughput() / one.throughput():.2f}x one worker's jobs/s")
    print(machine_load())
    return 0


if __name__ == "__main__":
    sys.exit(guarded(main))
