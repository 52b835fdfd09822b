"""Hostile bench: how fast the worker refuses each hostile file, and its peak memory (RFC-0003).

It starts one worker as a process of its own on a free port of 127.0.0.1 (``python -m
worker.artifactr_files_worker``, as the image runs it), sends it every file of the hostile corpus
(:mod:`scripts.hostile_corpus`) through the package's adapter, and prints, per file, the outcome,
the time to refusal, and the worker's peak resident memory while it handled that file (its
``VmHWM``, reset before each file through ``/proc/<pid>/clear_refs``). Then it sends a sound
document, to show the worker still serves the next job. Loopback only::

    uv run --no-sync python -m scripts.bench.hostile [--cli "wordcraft-cli"] [--app libreoffice]

``--cli`` is the app (``$WORDCRAFT_CLI`` by default, else the test stand-in), or ``--app
libreoffice`` makes the worker a LibreOffice one; the hostile files never reach either.
``--quick`` makes the app the quick stand-in (``tests/worker/quick.py``), so the sound document
is answered in a moment. The worker's tests use :func:`spawn` and :func:`peak` too.
"""

import io
import os
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import anyio

from artifactr.files.apps.worker import Worker
from artifactr.files.core.documents import build_docx
from artifactr.files.core.errors import AppFailure, UnsafeFile
from scripts.bench._harness import guarded, machine_load, parser
from scripts.hostile_corpus import CORPUS

ROOT: Final = Path(__file__).resolve().parents[2]
"""The repository, where ``worker/`` is."""

STANDIN: Final = ROOT / "tests" / "apps" / "wordcraft" / "standin.py"
"""The test stand-in for ``wordcraft-cli``, the app when no other is named."""

QUICK: Final = ROOT / "tests" / "worker" / "quick.py"
"""The quick stand-in: the worker's mechanics, with no document work."""

TOKEN: Final = "bench-token-" + "0123456789abcdef" * 3
"""The bearer token the bench's workers are given."""

START_TIMEOUT: Final = 120.0
"""Seconds a worker may take to answer its health route."""


@dataclass(frozen=True)
class Spawned:
    """A worker running as a process of its own."""

    url: str
    """Where it listens."""
    pid: int
    """Its process id, for its memory."""
    app_name: str = "wordcraft"
    """Its app (``WORKER_APP``)."""

    def app(self) -> Worker:
        """Return the package's adapter for it, named for its app."""
        return Worker(self.url, token=TOKEN, app=self.app_name)


def default_cli() -> list[str]:
    """Return ``$WORDCRAFT_CLI``, split, or the test stand-in run by this Python."""
    named = os.environ.get("WORDCRAFT_CLI")
    return shlex.split(named) if named else [sys.executable, str(STANDIN)]


def free_port() -> int:
    """Return a port of 127.0.0.1 nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def spawn(cli: Sequence[str], env: Mapping[str, str] | None = None) -> Generator[Spawned]:
    """Run a worker as its own process on a free port; stop it when the block ends.

    Args:
        cli: The app's command line (``WORDCRAFT_CLI``).
        env: More variables for the worker (``WORKER_*``, ``TMPDIR``); any named in
            ``WORKER_PASS_ENV`` reach the app too.

    Raises:
        RuntimeError: If the worker doesn't answer its health route in time, with its log.
    """
    port = free_port()
    environ = {
        **os.environ,
        "WORKER_TOKEN": TOKEN,
        "WORKER_PORT": str(port),
        "WORDCRAFT_CLI": shlex.join(cli),
        **(env or {}),
    }
    command = [sys.executable, "-m", "worker.artifactr_files_worker"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=ROOT, env=environ, stdout=log, stderr=log)
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_until_healthy(url, process, log)
            yield Spawned(url, process.pid, environ.get("WORKER_APP", "wordcraft"))
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_healthy(url: str, process: subprocess.Popen[bytes], log: io.BufferedRandom) -> None:
    started = time.monotonic()
    while time.monotonic() - started < START_TIMEOUT and process.poll() is None:
        try:
            with urllib.request.urlopen(url + "/health", timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.05)
    log.seek(0)
    said = log.read().decode(errors="replace")
    raise RuntimeError(f"the worker didn't start (exit status {process.poll()}):\n{said}")


def reset_peak(pid: int) -> None:
    """Reset a process's peak resident memory to its current one (Linux, our own process)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def peak(pid: int) -> int:
    """Return a process's peak resident memory in bytes (``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"/proc/{pid}/status has no VmHWM")


@dataclass(frozen=True)
class Refusal:
    """What the worker did with one file."""

    name: str
    """The file."""
    outcome: str
    """``unsafe (<reason>)``, a failure's kind, or ``accepted``."""
    seconds: float
    """Time from the call to the answer."""
    peak: int
    """The worker's peak resident memory while it handled the file, in bytes."""


async def refuse_all(spawned: Spawned) -> list[Refusal]:
    """Send every hostile file to the worker; return what happened to each."""
    app = spawned.app()
    results: list[Refusal] = []
    for item in CORPUS:
        data = item.make()
        reset_peak(spawned.pid)
        started = time.monotonic()
        try:
            await app.inspect(data)
            outcome = "accepted"
        except UnsafeFile as refused:
            outcome = f"unsafe ({refused.reason})"
        except AppFailure as failed:
            outcome = failed.kind
        results.append(Refusal(item.name, outcome, time.monotonic() - started, peak(spawned.pid)))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench and print its table; exit 1 if any file wasn't refused as expected."""
    arguments = parser(__doc__, quick="the quick stand-in as the app")
    arguments.add_argument("--cli", type=shlex.split, default=None, help="the app's command line")
    arguments.add_argument(
        "--app", choices=("wordcraft", "libreoffice"), default="wordcraft", help="the worker's app"
    )
    options = arguments.parse_args(argv)
    quick = [sys.executable, str(QUICK)] if options.quick else None
    cli: list[str] = options.cli or quick or default_cli()
    with spawn(cli, {"WORKER_APP": options.app}) as spawned:
        results = anyio.run(refuse_all, spawned)
        started = time.monotonic()
        inspection = anyio.run(spawned.app().inspect, build_docx())
        after = time.monotonic() - started
    app = shlex.join(cli) if options.app == "wordcraft" else "libreoffice"
    print(f"worker: 127.0.0.1, one process; app: {app}\n")
    print(f"| {'file':<15} | {'outcome':<27} | {'expected':<17} | time to refusal | peak RSS |")
    print(f"|{'-' * 17}|{'-' * 29}|{'-' * 19}|-----------------|----------|")
    wrong = 0
    for item, result in zip(CORPUS, results, strict=True):
        expected = f"unsafe ({item.reason})"
        wrong += result.outcome != expected
        print(
            f"| {result.name:<15} | {result.outcome:<27} | {item.reason:<17} "
            f"| {result.seconds * 1000:>12.0f} ms | {result.peak / 2**20:>5.0f} MiB |"
        )
    print(f"\nthe next job, a sound document: inspected in {after:.2f} s ({inspection.pages} page)")
    print(machine_load())
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(guarded(main))
