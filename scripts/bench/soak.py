"""Soak: the served program's memory under steady traffic on all four surfaces (issue 38).

It starts the served program (``python -m artifactr.files.programs.serve``) on a free port of
127.0.0.1, over a SQLite file of its own, with FakeApp (``ARTIFACTR_FILES_APP=fake``: the
surfaces and the service are soaked, not an office; ``--office`` lets the program choose), and
drives its four surfaces from loopback clients, one a surface, each one operation at a time with
a pause between (steady, bounded traffic):

- the files router (eddie): the lease, a download, a check-out and its check-in of new bytes;
- the portal (rita, a viewer): the files page and the file's page;
- WOPI (the seeded document, eddie's token): CheckFileInfo, GetFile, Lock, PutFile, Unlock;
- WebDAV (erin): PROPFIND of the workspace, LOCK, PUT, GET, UNLOCK.

Every ``--every`` seconds (a minute) it prints the server process's resident memory, the
operations done and the 5xx answers; at the end, the growth over the last half of the run
(a least-squares slope over its samples, in MiB a minute). Target: no growth over the last half
of a 20-minute run (at most 0.1 MiB a minute, 1 MiB over its ten minutes).

``--trace`` runs the same program in process under this script instead (``--serve``, the
served program's :func:`~artifactr.files.programs.serve.server`) with ``tracemalloc`` on,
snapshots its heap at every sample, and prints the allocations that grew most from the first
sample after the warm-up to the last, by line and by traceback: what to look at when memory
grows. ``--trim`` runs it in process too, and asks glibc to give back the free memory it keeps
(``malloc_trim``) before each sample, so what stays is memory in use. Run::

    uv run --no-sync python -m scripts.bench.soak [--minutes 20] [--trace] [--quick]

``--quick`` is 20 seconds, sampled every 2.
"""

import argparse
import asyncio
import ctypes
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx2

from artifactr.files.core.documents import build_docx
from artifactr.files.core.manifests import DOCX
from scripts.bench._harness import guarded, machine_load, parser, verdict

ROOT: Final = Path(__file__).resolve().parents[2]
"""The repository, the served program's working directory."""

WORKSPACE: Final = "w1"
"""The served program's workspace."""

PAUSE: Final = 0.2
"""Seconds each client waits between two operations."""

FLAT: Final = 0.1
"""The most the last half may grow, in MiB a minute, and still count as flat."""

LOCK_BODY: Final = (
    b'<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>'
    b"<D:locktype><D:write/></D:locktype></D:lockinfo>"
)

START_TIMEOUT: Final = 300.0
"""Seconds the program may take to say its WOPI line (it migrates and seeds first)."""

TRACE_FRAMES: Final = 25
"""Frames kept for each traced allocation."""


# ─── the server ───────────────────────────────────────────────────────────────


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def resident(pid: int) -> int:
    """Return a process's resident memory in bytes (``VmRSS``), 0 once it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def _malloc_trim() -> None:
    ctypes.CDLL("libc.so.6").malloc_trim(0)


def serve_traced(port: int, database: Path, trace: Path | None, every: float, trim: bool) -> None:
    """Serve the program in this process, watched every ``every`` s.

    With ``trace``, tracemalloc is on and its snapshots go there; with ``trim``, glibc is asked
    to give back the free memory it keeps (``malloc_trim``), so what stays is memory in use.
    """
    from artifactr.files.programs.demo import choose_app
    from artifactr.files.programs.serve import server

    native_app, label = choose_app()
    print(f"app: {label}", flush=True)
    stop = threading.Event()

    def snapshots() -> None:
        # Traced from the first sample on: the start-up's allocations are not what grows, and
        # tracing them makes a loaded machine's start slower than the soak waits for.
        if stop.wait(every):
            return
        if trace is not None:
            tracemalloc.start(TRACE_FRAMES)
        number = 0
        while not stop.wait(every):
            if trim:
                _malloc_trim()
            if trace is None:
                continue
            shot = tracemalloc.take_snapshot().filter_traces(
                (
                    tracemalloc.Filter(False, tracemalloc.__file__),
                    tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
                    tracemalloc.Filter(False, "<frozen importlib._bootstrap_external>"),
                )
            )
            shot.dump(str(trace / f"{number:04d}.snapshot"))
            number += 1

    thread = threading.Thread(target=snapshots, daemon=True)
    thread.start()
    try:
        served = server(
            database,
            port=port,
            native_app=native_app,
            say=lambda line: print(line, flush=True),
        )
        served.run()
    finally:
        stop.set()


@dataclass
class Program:
    """The served program, as the clients reach it."""

    process: subprocess.Popen[bytes]
    """Its process, whose memory is sampled."""
    base: str
    """Where it listens."""
    artifact_id: str
    """The seeded document, which WOPI edits."""
    token: str
    """Eddie's WOPI access token for it."""


def start(
    port: int, database: Path, log: Path, trace: Path | None, every: float, trim: bool = False
) -> Program:
    """Start the served program (or the watched one); return it once it has seeded its file."""
    if trace is None and not trim:
        command = [
            sys.executable,
            "-m",
            "artifactr.files.programs.serve",
            "--port",
            str(port),
            "--database",
            str(database),
        ]
    else:
        command = [
            sys.executable,
            "-m",
            "scripts.bench.soak",
            "--serve",
            str(port),
            "--database",
            str(database),
            *(["--trace-to", str(trace)] if trace is not None else []),
            *(["--trim"] if trim else []),
            "--every",
            str(every),
        ]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ)
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        said = log.read_text(errors="replace")
        found = re.search(r"^WOPI WOPISrc=(\S+) access_token=(\S+)", said, re.MULTILINE)
        if found:
            return Program(
                process, f"http://127.0.0.1:{port}", found[1].rsplit("/", 1)[1], found[2]
            )
        time.sleep(0.2)
    process.kill()
    process.wait()
    raise RuntimeError(f"the served program did not start:\n{log.read_text(errors='replace')}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop the program: SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# ─── the clients ──────────────────────────────────────────────────────────────


@dataclass
class Tally:
    """What the clients did: operations by surface, answers by status class."""

    operations: Counter[str] = field(default_factory=Counter[str])
    statuses: Counter[str] = field(default_factory=Counter[str])
    errors: list[str] = field(default_factory=list[str])

    def count(self, surface: str, answer: httpx2.Response) -> httpx2.Response:
        """Count one answer; keep the first few 5xx."""
        self.operations[surface] += 1
        self.statuses[f"{answer.status_code // 100}xx"] += 1
        if answer.status_code >= 500 and len(self.errors) < 5:
            self.errors.append(f"{surface} {answer.request.method} {answer.status_code}")
        return answer


Op = Callable[[httpx2.AsyncClient, Tally, int], Awaitable[None]]
"""One client's round of operations on its surface (the round's number given)."""


def document(words: str) -> bytes:
    """Return a small real document."""
    return build_docx([("Heading1", "Soak"), words])


async def upload(client: httpx2.AsyncClient, name: str, user: str) -> str:
    """Upload a file through the router; return its id."""
    answer = await client.post(
        f"/workspaces/{WORKSPACE}/files",
        params={"name": name},
        content=document(f"{name} as uploaded"),
        headers={"x-user": user, "content-type": DOCX},
    )
    answer.raise_for_status()
    return str(answer.json()["artifact_id"])


def router_round(artifact_id: str) -> Op:
    """Return the router's round: lease, download, check-out and check-in."""
    files = f"/workspaces/{WORKSPACE}/files/{artifact_id}"
    eddie = {"x-user": "eddie"}

    async def round_(client: httpx2.AsyncClient, tally: Tally, number: int) -> None:
        tally.count("router", await client.get(f"{files}/lease", headers=eddie))
        tally.count("router", await client.get(f"{files}/versions/1/content", headers=eddie))
        checkout = tally.count("router", await client.post(f"{files}/checkouts", headers=eddie))
        if checkout.status_code in (200, 201):
            check_in = f"{files}/checkouts/{checkout.json()['id']}/check-in"
            body = document(f"router round {number}")
            headers = {**eddie, "content-type": DOCX}
            tally.count("router", await client.post(check_in, content=body, headers=headers))

    return round_


def portal_round(artifact_id: str) -> Op:
    """Return the portal's round: the files page and the file's page, as a viewer."""
    rita = {"x-user": "rita"}

    async def round_(client: httpx2.AsyncClient, tally: Tally, number: int) -> None:
        del number
        pages = f"/portal/workspaces/{WORKSPACE}/files"
        tally.count("portal", await client.get(pages, headers=rita))
        tally.count("portal", await client.get(f"{pages}/{artifact_id}", headers=rita))

    return round_


def wopi_round(artifact_id: str, token: str) -> Op:
    """Return WOPI's round: CheckFileInfo, GetFile, Lock, PutFile, Unlock."""
    file = f"/wopi/files/{artifact_id}"
    query = {"access_token": token}

    async def round_(client: httpx2.AsyncClient, tally: Tally, number: int) -> None:
        lock = f"soak-{number}"
        tally.count("wopi", await client.get(file, params=query))
        tally.count("wopi", await client.get(f"{file}/contents", params=query))
        headers = {"X-WOPI-Override": "LOCK", "X-WOPI-Lock": lock}
        tally.count("wopi", await client.post(file, params=query, headers=headers))
        body = document(f"WOPI round {number}")
        headers = {"X-WOPI-Override": "PUT", "X-WOPI-Lock": lock}
        put = await client.post(f"{file}/contents", params=query, headers=headers, content=body)
        tally.count("wopi", put)
        headers = {"X-WOPI-Override": "UNLOCK", "X-WOPI-Lock": lock}
        tally.count("wopi", await client.post(file, params=query, headers=headers))

    return round_


def webdav_round(name: str) -> Op:
    """Return WebDAV's round: PROPFIND, LOCK, PUT, GET, UNLOCK."""
    erin = {"x-user": "erin"}
    url = f"/dav/workspaces/{WORKSPACE}/{name}"

    async def round_(client: httpx2.AsyncClient, tally: Tally, number: int) -> None:
        folder = f"/dav/workspaces/{WORKSPACE}/"
        propfind = await client.request("PROPFIND", folder, headers={**erin, "Depth": "1"})
        tally.count("webdav", propfind)
        locked = tally.count(
            "webdav", await client.request("LOCK", url, content=LOCK_BODY, headers=erin)
        )
        token = locked.headers.get("Lock-Token", "").strip("<>")
        if token:
            body = document(f"WebDAV round {number}")
            put = await client.put(url, content=body, headers={**erin, "If": f"(<{token}>)"})
            tally.count("webdav", put)
        tally.count("webdav", await client.get(url, headers=erin))
        if token:
            unlock = {**erin, "Lock-Token": f"<{token}>"}
            tally.count("webdav", await client.request("UNLOCK", url, headers=unlock))

    return round_


async def client_loop(
    client: httpx2.AsyncClient, op: Op, tally: Tally, until: float, pause: float
) -> None:
    """Run one surface's rounds until ``until``, a pause between rounds."""
    number = 0
    while time.monotonic() < until:
        number += 1
        await op(client, tally, number)
        await asyncio.sleep(pause)


# ─── the run ──────────────────────────────────────────────────────────────────


@dataclass
class Sample:
    """One sample: when (minutes from the start), the server's memory, the operations so far."""

    minute: float
    rss: int
    operations: int
    errors: int


def slope(samples: Sequence[Sample]) -> float:
    """Return the least-squares slope of the samples' memory, in MiB a minute."""
    if len(samples) < 2:
        return 0.0
    xs = [sample.minute for sample in samples]
    ys = [sample.rss / 2**20 for sample in samples]
    return statistics.linear_regression(xs, ys).slope


SURFACES: Final = ("router", "portal", "wopi", "webdav")
"""The surfaces, each driven by a client of its own unless left out (``--surfaces``)."""


async def drive(
    program: Program,
    seconds: float,
    every: float,
    pause: float,
    surfaces: Sequence[str] = SURFACES,
) -> list[Sample]:
    """Drive the surfaces for ``seconds``; print and return a sample every ``every`` s."""
    tally = Tally()
    samples: list[Sample] = []
    async with httpx2.AsyncClient(base_url=program.base, timeout=120) as client:
        router_file = await upload(client, "soak-router.docx", "eddie")
        await upload(client, "soak-dav.docx", "erin")
        started = time.monotonic()
        until = started + seconds
        ops = {
            "router": router_round(router_file),
            "portal": portal_round(program.artifact_id),
            "wopi": wopi_round(program.artifact_id, program.token),
            "webdav": webdav_round("soak-dav.docx"),
        }
        loops = [
            asyncio.create_task(client_loop(client, ops[surface], tally, until, pause))
            for surface in surfaces
        ]
        print("| minute | server RSS MiB | operations | 5xx |")
        print("|---:|---:|---:|---:|")
        try:
            while True:
                sample = Sample(
                    (time.monotonic() - started) / 60,
                    resident(program.process.pid),
                    sum(tally.operations.values()),
                    tally.statuses["5xx"],
                )
                samples.append(sample)
                print(
                    f"| {sample.minute:.2f} | {sample.rss / 2**20:.1f} | {sample.operations} "
                    f"| {sample.errors} |",
                    flush=True,
                )
                if time.monotonic() >= until or program.process.poll() is not None:
                    break
                await asyncio.sleep(min(every, max(0.0, until - time.monotonic())))
            await asyncio.gather(*loops)
        finally:
            for loop in loops:
                loop.cancel()
    by_surface = ", ".join(f"{name} {count}" for name, count in sorted(tally.operations.items()))
    answers = ", ".join(f"{kind} {count}" for kind, count in sorted(tally.statuses.items()))
    print(f"\noperations: {by_surface}; answers: {answers}")
    if tally.errors:
        print(f"first 5xx: {'; '.join(tally.errors)}")
    return samples


def grew(samples: Sequence[Sample]) -> tuple[float, float]:
    """Return the last half's growth: its slope (MiB a minute) and its first-to-last MiB."""
    half = samples[len(samples) // 2 :]
    return slope(half), (half[-1].rss - half[0].rss) / 2**20


def top_growth(trace: Path, count: int = 15) -> None:
    """Print the allocations that grew most from the second snapshot to the last."""
    shots = sorted(trace.glob("*.snapshot"))
    if len(shots) < 3:
        print("trace: too few snapshots to compare")
        return
    first = tracemalloc.Snapshot.load(str(shots[1]))
    last = tracemalloc.Snapshot.load(str(shots[-1]))
    print(f"\nallocations that grew most, snapshot 2 to {len(shots)} (by line):")
    for stat in last.compare_to(first, "lineno")[:count]:
        frame = stat.traceback[0]
        print(
            f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks  "
            f"{frame.filename}:{frame.lineno}"
        )
    print("\nthe three that grew most, by traceback (innermost last):")
    for stat in last.compare_to(first, "traceback")[:3]:
        print(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks")
        for line in stat.traceback.format(limit=TRACE_FRAMES):
            print(f"      {line}")


def soak(
    minutes: float,
    every: float,
    trace: bool,
    office: bool,
    pause: float,
    surfaces: Sequence[str] = SURFACES,
    trim: bool = False,
) -> bool:
    """Run the soak and print its table; return whether the last half grew."""
    if not office:
        os.environ["ARTIFACTR_FILES_APP"] = "fake"
    with tempfile.TemporaryDirectory(prefix="soak-") as directory:
        folder = Path(directory)
        traced = folder / "trace" if trace else None
        if traced is not None:
            traced.mkdir()
        port = _free_port()
        program = start(port, folder / "soak.db", folder / "serve.log", traced, every, trim)
        try:
            app = next(
                (
                    line
                    for line in (folder / "serve.log").read_text().splitlines()
                    if "app:" in line
                ),
                "app: ?",
            )
            print(
                f"served program on 127.0.0.1:{port} "
                f"({'in process' if trace or trim else 'as run'}{', traced' if trace else ''}"
                f"{', trimmed' if trim else ''}"
                f", {app.strip()}); {minutes:.2f} min, a sample every {every:g} s, "
                f"{pause:g} s between a client's rounds; surfaces: {', '.join(surfaces)}"
            )
            samples = asyncio.run(drive(program, minutes * 60, every, pause, surfaces))
        finally:
            stop(program.process)
        if program.process.returncode not in (0, -15):
            print(f"the program exited {program.process.returncode}:")
            print((folder / "serve.log").read_text(errors="replace")[-4000:])
        rate, total = grew(samples)
        first, last = samples[0].rss / 2**20, samples[-1].rss / 2**20
        print(
            f"server RSS {first:.1f} MiB at the start, {last:.1f} MiB at the end; last half: "
            f"{rate:+.3f} MiB/min ({total:+.1f} MiB), "
            f"{'flat' if rate <= FLAT else 'GROWING'} (target <= {FLAT} MiB/min)"
        )
        if traced is not None:
            top_growth(traced)
        errors = samples[-1].errors
        print(machine_load())
        return rate > FLAT or errors > 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the soak, or serve traced (``--serve PORT``, as the soak starts it)."""
    arguments = parser(__doc__, quick="20 seconds, a sample every 2")
    arguments.add_argument("--minutes", type=float, default=20.0, help="minutes of traffic (20)")
    arguments.add_argument("--every", type=float, default=60.0, help="seconds a sample (60)")
    arguments.add_argument("--pause", type=float, default=PAUSE, help=f"seconds ({PAUSE})")
    arguments.add_argument("--trace", action="store_true", help="tracemalloc in the server")
    arguments.add_argument(
        "--trim",
        action="store_true",
        help="malloc_trim in the server before each sample: what stays is memory in use",
    )
    arguments.add_argument("--office", action="store_true", help="let the program choose its app")
    arguments.add_argument(
        "--surfaces",
        type=lambda given: given.split(","),
        default=list(SURFACES),
        help=f"the surfaces driven, comma-separated ({','.join(SURFACES)})",
    )
    arguments.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    arguments.add_argument("--database", type=Path, default=None, help=argparse.SUPPRESS)
    arguments.add_argument("--trace-to", type=Path, default=None, help=argparse.SUPPRESS)
    options = arguments.parse_args(argv)
    if options.serve is not None:
        serve_traced(options.serve, options.database, options.trace_to, options.every, options.trim)
        return 0
    minutes, every = (1 / 3, 2.0) if options.quick else (options.minutes, options.every)
    unknown = set(options.surfaces) - set(SURFACES)
    if unknown:
        arguments.error(f"no such surface: {', '.join(sorted(unknown))}")
    missed = soak(
        minutes,
        every,
        options.trace,
        options.office,
        options.pause,
        options.surfaces,
        options.trim,
    )
    return verdict(missed, options.quick)


if __name__ == "__main__":
    sys.exit(guarded(main))
