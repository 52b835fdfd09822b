"""Cluster bench: two servers against one, two workers against one, on loopback (ADR-0025).

It starts a deployment as processes of their own: a fresh PostgreSQL database, ``serve
--migrate`` once, server replicas (``python -m artifactr.files.programs.serve``) and workers
(``python -m worker.artifactr_files_worker``), each on a free port of 127.0.0.1, and measures in
one run:

- servers: the same mixed load (downloads, leases, page views, check-outs and check-ins) from
  several clients, spread over one replica, then over two: requests per second, the ratio, and
  the p99 latency of the small requests (leases);
- workers: the same jobs (inspections) through the adapter, over one worker, then two, then
  three: jobs per second and each ratio to one.

::

    export ARTIFACTR_TEST_POSTGRES_URL=postgresql+asyncpg://postgres@host/db
    python -m scripts.bench.cluster [--quick] [--seconds 10] [--clients 8]

The workers run the quick stand-in (``tests/worker/quick.py``) unless ``--cli`` names an app, or
``--worker-app libreoffice`` makes them LibreOffice's. ``--quick`` runs each stage a second.
Everything it starts is stopped, and its database dropped, even when interrupted. The cluster
test (``tests/cluster/``) starts its deployment with :func:`deployment` too.
"""

import argparse
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
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Generator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import anyio
import httpx2
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from artifactr.files.apps.worker import Worker
from artifactr.files.core.documents import build_docx
from artifactr.files.core.manifests import DOCX

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
        """Kill it at once (``kill -9``), as a crash would."""
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
            self.popen.wait()

    def stop(self) -> None:
        """Stop it, killing it if it doesn't stop in time."""
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.terminate()
        try:
            self.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.kill()


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
    index: int, directory: Path, token_file: Path, cli: Sequence[str], app: str
) -> Process:
    """Return a worker on a free port, not started, that reads its token from ``token_file``."""
    port = free_port()
    env = {
        **os.environ,
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
) -> Generator[Deployment]:
    """Run a deployment on a fresh database of ``postgres_url``'s server; stop it all after.

    Args:
        postgres_url: A PostgreSQL URL whose user may create databases.
        servers: How many replicas.
        workers: How many workers; the servers run FakeApp themselves if none.
        blobs_url: The object store (``ARTIFACTR_FILES_BLOBS_URL``); the database if None.
        cli: The workers' app command line, for WordCraft's workers.
        worker_app: The workers' app: ``wordcraft`` or ``libreoffice``.
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
            worker_process(n, directory, token_file, cli, worker_app) for n in range(1, workers + 1)
        ]
        if running:
            env["ARTIFACTR_FILES_WORKER_URLS"] = ",".join(one.url for one in running)
            env["ARTIFACTR_FILES_WORKER_TOKEN_FILE"] = str(token_file)
            env["ARTIFACTR_FILES_WORKER_APP"] = worker_app
        migrated = subprocess.run(
            [sys.executable, *SERVE, "--migrate"],
            cwd=ROOT,
            env={**os.environ, **env},
            capture_output=True,
            check=False,
        )
        if migrated.returncode != 0:
            raise RuntimeError(f"--migrate failed: {migrated.stderr.decode(errors='replace')}")
        replicas = [server_process(n, directory, env) for n in range(1, servers + 1)]
        for process in [*running, *replicas]:
            stack.callback(process.stop)
        _start_all([*running, *replicas])
        yield Deployment(replicas, running, env, shared)


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


async def jobs_per_second(urls: Sequence[str], callers: int, seconds: float) -> float:
    """Return the inspections per second ``callers`` callers get from these workers."""
    app = Worker(urls, token=TOKEN)
    data = build_docx(["A job."])
    done = 0
    until = time.monotonic() + seconds

    async def caller() -> None:
        nonlocal done
        while time.monotonic() < until:
            await app.inspect(data)
            done += 1

    started = time.monotonic()
    async with anyio.create_task_group() as group:
        for _ in range(callers):
            group.start_soon(caller)
    return done / (time.monotonic() - started)


def p99(values: Sequence[float]) -> float:
    """Return the 99th percentile of some values, in milliseconds."""
    if len(values) < 2:
        return 1000 * (values[0] if values else 0.0)
    return 1000 * statistics.quantiles(values, n=100)[98]


def main(argv: Sequence[str] | None = None) -> None:
    """Measure two servers against one, and two and three workers against one."""
    parser = argparse.ArgumentParser(prog="python -m scripts.bench.cluster", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="a second a stage, to try it")
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds a stage runs")
    parser.add_argument("--clients", type=int, default=8, help="clients of the mixed load")
    parser.add_argument("--cli", default=None, help="the workers' app command line")
    parser.add_argument("--worker-app", default="wordcraft", help="wordcraft or libreoffice")
    options = parser.parse_args(argv)
    postgres = os.environ.get("ARTIFACTR_TEST_POSTGRES_URL")
    if not postgres:
        sys.exit("set ARTIFACTR_TEST_POSTGRES_URL to a PostgreSQL whose user may create databases")
    seconds = 1.0 if options.quick else options.seconds
    cli = shlex.split(options.cli) if options.cli else [sys.executable, str(QUICK)]
    with deployment(postgres, servers=2, workers=3, cli=cli, worker_app=options.worker_app) as run:
        urls = [server.url for server in run.servers]
        one = anyio.run(mixed_load, urls[:1], options.clients, seconds)
        two = anyio.run(mixed_load, urls, options.clients, seconds)
        print(f"servers: one {one.requests / seconds:.1f} req/s, p99 lease {p99(one.small):.0f} ms")
        print(f"servers: two {two.requests / seconds:.1f} req/s, p99 lease {p99(two.small):.0f} ms")
        ratio = two.requests / max(one.requests, 1)
        print(f"servers: two/one {ratio:.2f}x; 5xx answers {one.errors + two.errors}")
        workers = [worker.url for worker in run.workers]
        rates = [
            anyio.run(jobs_per_second, workers[:count], 4 * count, seconds) for count in (1, 2, 3)
        ]
        for count, rate in zip((1, 2, 3), rates, strict=True):
            print(f"workers: {count} {rate:.1f} jobs/s, {rate / rates[0]:.2f}x one")


if __name__ == "__main__":
    main()
