"""Cluster bench: two servers against one, two and three workers against one, on loopback.

It starts a deployment as processes of their own (ADR-0025): a fresh PostgreSQL database,
``serve --migrate`` once, two server replicas (``python -m artifactr.files.programs.serve``) and
three workers (``python -m worker.artifactr_files_worker``), each on a free port of 127.0.0.1,
and measures in one run:

- servers: the same mixed load (leases, downloads, page views, check-outs and check-ins) from
  ``--clients`` clients, each on a file of its own, spread over one replica, then over two:
  requests per second, the ratio, and the p99 latency of the small requests (leases);
- workers: the same LibreOffice jobs (inspections of a short document) through the adapter,
  from two callers a worker, over one worker, then two, then three: jobs per second, two's
  ratio to one, and what the third adds. The target, at least 1.6x, is judged only where two
  cores were free. Two workers can double one's jobs only where the machine has twice the
  cores one worker's stage kept busy (its job's office, the next office its pool starts, the
  callers): the line gives the ceiling the free cores allow (their count over one worker's busy
  cores, at most 2x) and how much of it two workers reached.

It prints the machine's load average before and after, the free cores it saw (from
``/proc/stat`` once the warm jobs' pools have settled, before the workers' stages), each stage's
busy cores (the CPU time of the workers' process trees and the callers over the stage's time),
then one line starting ``SUMMARY`` per figure::

    export ARTIFACTR_TEST_POSTGRES_URL=postgresql+asyncpg://postgres@host/db
    python -m scripts.bench.cluster [--quick] [--seconds 15] [--clients 8] [--pool 1]

The workers are LibreOffice's (``WORKER_APP=libreoffice``), each with ``--pool`` offices
started ahead; ``--worker-app wordcraft`` makes them WordCraft's, running ``--cli`` (the quick
stand-in, ``tests/worker/quick.py``, if unset). ``--quick`` runs each stage a second and judges
nothing. Everything it starts is stopped, and its database dropped, even when interrupted. The
cluster test (``tests/cluster/``) starts its deployment with :func:`deployment` too.
"""

import asyncio
import os
import secrets
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Generator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Self

import anyio
import httpx2
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from artifactr.files.apps.worker import Worker
from artifactr.files.core.documents import build_docx
from artifactr.files.core.manifests import DOCX
from scripts.bench._harness import guarded, machine_load, parser, verdict

ROOT: Final = Path(__file__).resolve().parents[2]
"""The repository, where ``worker/`` is."""

QUICK: Final = ROOT / "tests" / "worker" / "quick.py"
"""The quick stand-in for ``wordcraft-cli``: the worker's mechanics, quick jobs."""

START_TIMEOUT: Final = 180.0
"""Seconds a process may take to answer before it is taken not to start."""

TOKEN: Final = "cluster-token-" + "0123456789abcdef" * 3
"""The workers' bearer token."""

SERVE: Final = ("-m", "artifactr.files.programs.serve")
"""The server's command line after the interpreter."""


def free_port() -> int:
    """Return a port of 127.0.0.1 nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Process:
    """One process of the deployment: a server or a worker, on its own port, restartable."""

    name: str
    """What it is: ``server-1``, ``worker-2``."""
    command: list[str]
    """Its command line."""
    env: dict[str, str]
    """Its environment."""
    url: str
    """Its base URL."""
    ready: str
    """The path that answers once it serves."""
    log: Path
    """Where its output goes, appended to across restarts."""
    cwd: Path = ROOT
    """Where it runs."""
    popen: subprocess.Popen[bytes] | None = None
    """The running process, if any."""

    def start(self) -> None:
        """Start it and wait until it answers.

        Raises:
            RuntimeError: If it exits or doesn't answer in time, with its log.
        """
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(
                self.command, cwd=self.cwd, env=self.env, stdout=out, stderr=out
            )
        started = time.monotonic()
        while time.monotonic() - started < START_TIMEOUT and self.popen.poll() is None:
            try:
                with urllib.request.urlopen(self.url + self.ready, timeout=2):
                    return
            except urllib.error.HTTPError:
                return
            except OSError:
                time.sleep(0.05)
        said = self.log.read_text(errors="replace")[-4000:]
        raise RuntimeError(f"{self.name} didn't start ({self.popen.poll()}):\n{said}")

    def kill(self) -> None:
        """Kill it at once (``kill -9``) with every process it started, as a crash would.

        A worker's offices run in sessions of their own: killed with it, as its container's
        end would kill them, they don't live on.
        """
        if self.popen is None or self.popen.poll() is not None:
            return
        # Frozen first, so that none of them starts another while the tree is read.
        tree = [self.popen.pid]
        while True:
            for pid in tree:
                _signal(pid, signal.SIGSTOP)
            grown = [self.popen.pid, *descendants(self.popen.pid)]
            if set(grown) <= set(tree):
                break
            tree = grown
        for pid in tree:
            _signal(pid, signal.SIGKILL)
        self.popen.wait()

    def stop(self) -> None:
        """Stop it, killing it if it doesn't stop in time, and whatever it left running."""
        if self.popen is None or self.popen.poll() is not None:
            return
        started = descendants(self.popen.pid)
        self.popen.terminate()
        try:
            self.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()
        for pid in started:
            _signal(pid, signal.SIGKILL)


def descendants(pid: int) -> list[int]:
    """Return the processes ``pid`` started, and theirs, read from ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found: list[int] = []
    waiting = [pid]
    while waiting:
        for child in children.get(waiting.pop(), []):
            found.append(child)
            waiting.append(child)
    return found


def _signal(pid: int, number: signal.Signals) -> None:
    with suppress(ProcessLookupError):
        os.kill(pid, number)


@dataclass
class Deployment:
    """A running deployment: its servers and workers, and the settings they share."""

    servers: list[Process]
    """The server replicas."""
    workers: list[Process]
    """The workers."""
    env: dict[str, str]
    """The settings every replica has (``ARTIFACTR_FILES_*``)."""
    secrets: dict[str, str] = field(default_factory=dict[str, str])
    """The secrets by name: ``secret`` and ``wopi_secret``."""


async def database(admin_url: str, name: str, *, create: bool) -> None:
    """Create a database of this name on ``admin_url``'s server, or drop it (``create=False``)."""
    engine = create_async_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            if create:
                await connection.execute(text(f'CREATE DATABASE "{name}"'))
            else:
                await connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        await engine.dispose()


def worker_process(
    index: int,
    directory: Path,
    token_file: Path,
    cli: Sequence[str],
    app: str,
    settings: Mapping[str, str] | None = None,
) -> Process:
    """Return a worker on a free port, not started, that reads its token from ``token_file``.

    ``settings`` (``WORKER_POOL``, ``WORKER_QUEUE``...) go over the worker's defaults.
    """
    port = free_port()
    env = {
        **os.environ,
        **(settings or {}),
        "WORKER_TOKEN_FILE": str(token_file),
        "WORKER_PORT": str(port),
        "WORKER_APP": app,
        "WORDCRAFT_CLI": shlex.join(cli),
    }
    return Process(
        name=f"worker-{index}",
        command=[sys.executable, "-m", "worker.artifactr_files_worker"],
        env=env,
        url=f"http://127.0.0.1:{port}",
        ready="/health",
        log=directory / f"worker-{index}.log",
    )


def server_process(index: int, directory: Path, env: Mapping[str, str]) -> Process:
    """Return a server replica on a free port, not started, with the deployment's settings."""
    port = free_port()
    return Process(
        name=f"server-{index}",
        command=[sys.executable, *SERVE, "--port", str(port)],
        env={**os.environ, **env},
        url=f"http://127.0.0.1:{port}",
        ready="/portal/portal.css",
        log=directory / f"server-{index}.log",
    )


@contextmanager
def deployment(
    postgres_url: str,
    *,
    servers: int = 2,
    workers: int = 2,
    blobs_url: str | None = None,
    cli: Sequence[str] = (sys.executable, str(QUICK)),
    worker_app: str = "wordcraft",
    worker_settings: Mapping[str, str] | None = None,
) -> Generator[Deployment]:
    """Run a deployment on a fresh database of ``postgres_url``'s server; stop it all after.

    Args:
        postgres_url: A PostgreSQL URL whose user may create databases.
        servers: How many replicas.
        workers: How many workers; the servers run FakeApp themselves if none.
        blobs_url: The object store (``ARTIFACTR_FILES_BLOBS_URL``); the database if None.
        cli: The workers' app command line, for WordCraft's workers.
        worker_app: The workers' app: ``wordcraft`` or ``libreoffice``.
        worker_settings: The workers' settings (``WORKER_POOL``...) over their defaults.
    """
    name = f"cluster_{uuid.uuid4().hex[:12]}"
    url = make_url(postgres_url)
    asyncio.run(database(postgres_url, name, create=True))
    with ExitStack() as stack:
        stack.callback(lambda: asyncio.run(database(postgres_url, name, create=False)))
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cluster-")))
        token_file = directory / "worker_token"
        token_file.write_text(TOKEN)
        shared = {"secret": secrets.token_hex(32), "wopi_secret": secrets.token_hex(32)}
        env = {
            "ARTIFACTR_FILES_DATABASE_URL": url.set(database=name).render_as_string(False),
            "ARTIFACTR_FILES_SECRET": shared["secret"],
            "ARTIFACTR_FILES_WOPI_SECRET": shared["wopi_secret"],
            "ARTIFACTR_FILES_APP": "fake",
        }
        if blobs_url is not None:
            env["ARTIFACTR_FILES_BLOBS_URL"] = blobs_url
        running = [
            worker_process(n, directory, token_file, cli, worker_app, worker_settings)
            for n in range(1, workers + 1)
        ]
        if running:
            env["ARTIFACTR_FILES_WORKER_URLS"] = ",".join(one.url for one in running)
            env["ARTIFACTR_FILES_WORKER_TOKEN_FILE"] = str(token_file)
            env["ARTIFACTR_FILES_WORKER_APP"] = worker_app
        replicas = [server_process(n, directory, env) for n in range(1, servers + 1)]
        for process in [*running, *replicas]:
            stack.callback(process.stop)
        # Side by side, as each spends seconds importing: the workers need no database, so they
        # start while it is migrated; the replicas once it is.
        with ThreadPoolExecutor(max_workers=len(running) + 1) as pool:
            workers_up = [pool.submit(process.start) for process in running]
            migrating = pool.submit(_migrate, env)
            migrating.result()
            _start_all(replicas)
            for started in workers_up:
                started.result()
        yield Deployment(replicas, running, env, shared)


def _migrate(env: Mapping[str, str]) -> None:
    migrated = subprocess.run(
        [sys.executable, *SERVE, "--migrate"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        check=False,
    )
    if migrated.returncode != 0:
        raise RuntimeError(f"--migrate failed: {migrated.stderr.decode(errors='replace')}")


def _start_all(processes: Sequence[Process]) -> None:
    # Started side by side: each spends seconds importing.
    async def start() -> None:
        async with anyio.create_task_group() as group:
            for process in processes:
                group.start_soon(anyio.to_thread.run_sync, process.start)

    anyio.run(start)


# ─── the bench ────────────────────────────────────────────────────────────────


@dataclass
class Load:
    """What one stage of mixed load did."""

    requests: int = 0
    """Requests answered."""
    small: list[float] = field(default_factory=list[float])
    """Seconds each small request (a lease) took."""
    errors: int = 0
    """Answers that were neither success nor a typed refusal."""


async def _client(
    urls: Sequence[str], artifact_id: str, person: str, until: float, load: Load, n: int
) -> None:
    headers = {"x-user": person}
    async with httpx2.AsyncClient(timeout=60, headers=headers) as client:
        turn = n
        while time.monotonic() < until:
            base = f"{urls[turn % len(urls)]}/workspaces/w1/files/{artifact_id}"
            turn += 1
            started = time.monotonic()
            lease = await client.get(f"{base}/lease")
            load.small.append(time.monotonic() - started)
            download = await client.get(f"{base}/versions/1/content")
            page = await client.get(f"{base}/versions/1/pages/1")
            checkout = await client.post(f"{base}/checkouts")
            answers = [lease, download, page, checkout]
            if checkout.status_code == 200:
                other = f"{urls[turn % len(urls)]}/workspaces/w1/files/{artifact_id}"
                checked_in = await client.post(
                    f"{other}/checkouts/{checkout.json()['id']}/check-in",
                    content=download.content,
                    headers={"content-type": DOCX},
                )
                answers.append(checked_in)
            load.requests += len(answers)
            load.errors += sum(1 for answer in answers if answer.status_code >= 500)


async def _upload(url: str, person: str, n: int) -> str:
    async with httpx2.AsyncClient(timeout=60, headers={"x-user": person}) as client:
        answer = await client.post(
            f"{url}/workspaces/w1/files",
            params={"name": f"bench-{n}.docx"},
            content=build_docx([f"Bench document {n}."]),
            headers={"content-type": DOCX},
        )
        answer.raise_for_status()
        return str(answer.json()["artifact_id"])


async def mixed_load(urls: Sequence[str], clients: int, seconds: float) -> Load:
    """Return what ``clients`` clients did in ``seconds``, each on a file of its own."""
    load = Load()
    people = ("eddie", "erin")
    files = [await _upload(urls[0], people[n % 2], n) for n in range(clients)]
    until = time.monotonic() + seconds
    async with anyio.create_task_group() as group:
        for n, artifact_id in enumerate(files):
            group.start_soon(_client, urls, artifact_id, people[n % 2], until, load, n)
    return load


@dataclass(frozen=True)
class Stage:
    """What a stage of jobs got: jobs per second, and the cores the machine was busy meanwhile."""

    rate: float
    busy: float


async def jobs_per_second(
    urls: Sequence[str], app: str, callers: int, seconds: float, roots: Sequence[int] = ()
) -> Stage:
    """Return the inspections per second ``callers`` callers get from these workers.

    Every call the adapter starts before ``seconds`` is waited for and counted, over the time
    the last one took to end: a stage of one second still finishes its jobs. The cores the
    stage kept busy come with it: the CPU time of the processes ``roots`` (the workers) and all
    they started (each job's office, the next one a pool starts), and this process's callers.
    """
    worker = Worker(urls, token=TOKEN, app=app)
    data = build_docx(["A job."])
    done = 0
    until = time.monotonic() + seconds

    async def caller() -> None:
        nonlocal done
        while time.monotonic() < until:
            await worker.inspect(data)
            done += 1

    started = time.monotonic()
    with CpuTime(roots) as spent:
        async with anyio.create_task_group() as group:
            for _ in range(callers):
                group.start_soon(caller)
        elapsed = time.monotonic() - started
    return Stage(done / elapsed, spent.seconds / elapsed)


async def warm(urls: Sequence[str], app: str) -> None:
    """Run one job on each worker, untimed: their first office is started and warm."""
    data = build_docx(["A first job."])
    for url in urls:
        await Worker([url], token=TOKEN, app=app).inspect(data)


def cpu_sample() -> tuple[int, int]:
    """Return the machine's idle and total CPU ticks so far (``/proc/stat``)."""
    first = Path("/proc/stat").read_text().splitlines()[0]
    fields = [int(value) for value in first.split()[1:]]
    return fields[3] + fields[4], sum(fields[:8])  # idle and iowait; every tick


class CpuTime:
    """The CPU seconds some process trees spend while it runs, read every ``every`` seconds.

    A worker reaps each office by killing its whole group, so an office's time never reaches
    its parent's account: each process's own time (``/proc/PID/stat``) is read while it lives,
    from its first reading (or zero, for one born meanwhile) to its last; a process loses at
    most its last ``every`` seconds. This process's own time (the callers) is added.
    """

    def __init__(self, roots: Sequence[int], every: float = 0.1) -> None:
        self.roots = list(roots)
        self.every = every
        self.first: dict[int, int] = {}
        self.last: dict[int, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.mine = 0.0

    def _read(self, initial: bool) -> None:
        for pid in {tree for root in self.roots for tree in (root, *descendants(root))}:
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # ended between the listing and the read
            ticks = int(fields[11]) + int(fields[12])  # utime, stime
            self.first.setdefault(pid, ticks if initial else 0)
            self.last[pid] = ticks

    def _watch(self) -> None:
        while not self.stop.wait(self.every):
            self._read(initial=False)

    def __enter__(self) -> Self:
        self._read(initial=True)
        mine = os.times()
        self.mine = mine.user + mine.system
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join()
        self._read(initial=False)
        mine = os.times()
        self.mine = mine.user + mine.system - self.mine

    @property
    def seconds(self) -> float:
        """The CPU seconds spent, once it has run."""
        ticks = sum(self.last[pid] - self.first[pid] for pid in self.last)
        return ticks / os.sysconf("SC_CLK_TCK") + self.mine


def busy_cores(before: tuple[int, int], after: tuple[int, int]) -> float:
    """Return how many cores were busy, on average, between two samples."""
    share = 1 - (after[0] - before[0]) / max(after[1] - before[1], 1)
    return share * (os.cpu_count() or 1)


def free_cores(seconds: float, settle: float) -> float:
    """Return how many cores were idle over ``seconds``, once the machine settles.

    The warm jobs leave each pool starting its next office: windows of ``seconds`` are measured
    until one sees two cores free or ``settle`` seconds have passed, and the last one counts.
    """
    cores = float(os.cpu_count() or 1)
    deadline = time.monotonic() + settle
    while True:
        before = cpu_sample()
        time.sleep(seconds)
        free = cores - busy_cores(before, cpu_sample())
        if free >= FREE_NEEDED or time.monotonic() >= deadline:
            return free


def p99(values: Sequence[float]) -> float:
    """Return the 99th percentile of some values, in milliseconds."""
    if len(values) < 2:
        return 1000 * (values[0] if values else 0.0)
    return 1000 * statistics.quantiles(values, n=100)[98]


TARGET: Final = 1.6
"""Two workers' LibreOffice jobs per second against one's, where two cores are free."""

FREE_NEEDED: Final = 1.9
"""Free cores (of two, measured) for the target to apply: two, give or take a tenth."""


def workers_summary(stages: Sequence[Stage], free: float, app: str) -> str:
    """Return the SUMMARY line of two workers against one, judged where two cores are free.

    Two workers can double one's jobs only where the machine has twice the cores one worker's
    stage kept busy (its job's office, the next office its pool starts, the callers): the line
    gives the ceiling the free cores allow (their count over one worker's busy cores, at most
    2x) and how much of it two workers reached, whether the target is judged or not.
    """
    rate_one, rate_two = stages[0].rate, stages[1].rate
    doubled = rate_two / rate_one if rate_one else 0.0
    one_busy = max(stages[0].busy, 0.01)
    ceiling = max(min(2.0, free / one_busy), 1.0)
    judged = (
        f"target {TARGET:g}x {'met' if doubled >= TARGET else 'missed'}"
        if free >= FREE_NEEDED
        else f"target {TARGET:g}x not applied: {free:.1f} free cores seen, it needs two"
    )
    return (
        f"SUMMARY workers: two/one {doubled:.2f}x {app} jobs/s ({rate_one:.2f} -> "
        f"{rate_two:.2f}); {judged}; one worker's stage kept {one_busy:.2f} cores busy, so "
        f"{free:.1f} free cores allow at most {ceiling:.2f}x: two workers reached "
        f"{doubled / ceiling:.0%} of it"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Measure two servers against one, and two and three workers against one."""
    arguments = parser(__doc__, quick="a second a stage")
    arguments.add_argument("--seconds", type=float, default=15.0, help="seconds a stage (15)")
    arguments.add_argument("--clients", type=int, default=8, help="clients of the mixed load (8)")
    arguments.add_argument(
        "--worker-app",
        default="libreoffice",
        choices=["libreoffice", "wordcraft"],
        help="the workers' app (libreoffice); wordcraft runs --cli, the quick stand-in if unset",
    )
    arguments.add_argument("--cli", default=None, help="a WordCraft worker's app command line")
    arguments.add_argument(
        "--pool", type=int, default=1, help="offices a LibreOffice worker keeps started (1)"
    )
    options = arguments.parse_args(argv)
    postgres = os.environ.get("ARTIFACTR_TEST_POSTGRES_URL")
    if not postgres:
        sys.exit("set ARTIFACTR_TEST_POSTGRES_URL to a PostgreSQL whose user may create databases")
    seconds = 1.0 if options.quick else options.seconds
    cli = shlex.split(options.cli) if options.cli else [sys.executable, str(QUICK)]
    app = options.worker_app
    settings = {"WORKER_POOL": str(options.pool)} if app == "libreoffice" else {}
    before = machine_load()
    with deployment(
        postgres, servers=2, workers=3, cli=cli, worker_app=app, worker_settings=settings
    ) as run:
        urls = [server.url for server in run.servers]
        one = anyio.run(mixed_load, urls[:1], options.clients, seconds)
        two = anyio.run(mixed_load, urls, options.clients, seconds)
        workers = [worker.url for worker in run.workers]
        roots = [worker.popen.pid for worker in run.workers if worker.popen]
        anyio.run(warm, workers, app)
        free = free_cores(0.5 if options.quick else 3.0, 1.0 if options.quick else 30.0)
        # Two callers a worker: one job running, the next waiting its turn, none refused.
        stages = [
            anyio.run(jobs_per_second, workers[:count], app, 2 * count, seconds, roots)
            for count in (1, 2, 3)
        ]
    after = machine_load()
    print(f"{before} before; {after} after")
    print(f"mixed load: {options.clients} clients, {seconds:g} s a stage; workers: {app}")
    for name, load in (("one", one), ("two", two)):
        print(
            f"servers: {name} {load.requests / seconds:.1f} req/s, "
            f"p99 lease {p99(load.small):.0f} ms"
        )
    ratio = two.requests / max(one.requests, 1)
    print(
        f"SUMMARY servers: two/one {ratio:.2f}x requests/s under the same mixed load; p99 of a "
        f"lease {p99(one.small):.0f} ms with one, {p99(two.small):.0f} ms with two; "
        f"5xx answers {one.errors + two.errors}"
    )
    rates = [stage.rate for stage in stages]
    for count, stage in zip((1, 2, 3), stages, strict=True):
        print(
            f"workers: {count} {stage.rate:.2f} jobs/s, {stage.rate / rates[0]:.2f}x one; "
            f"{stage.busy:.2f} cores busy"
        )
    print(workers_summary(stages, free, app))
    third = rates[2] / rates[1] if rates[1] else 0.0
    print(
        f"SUMMARY workers: three/two {third:.2f}x ({rates[2]:.2f} jobs/s): the third worker adds "
        f"{rates[2] - rates[1]:+.2f} jobs/s on {os.cpu_count()} cores, {free:.1f} of them free"
    )
    applies = free >= FREE_NEEDED
    met = (rates[1] / rates[0] if rates[0] else 0.0) >= TARGET
    return verdict(applies and not met, options.quick)


if __name__ == "__main__":
    sys.exit(guarded(main))
