"""Benchmark: WebDAV's GET and PUT of large files, and a save against the router's check-in.

Two figures, each against a baseline measured in the same run (ADR-0018):

1. A GET and a PUT (under a lock) of 10 MiB and 100 MiB through a served app, with the peak
   Python memory of the whole process (server and client, tracemalloc). Target: flat in size.
2. A 1-page save through WebDAV (PUT under the lock) as a ratio of the same check-in through the
   files router (POST to the check-in route; its check-out is not timed), median of
   :data:`SAVES`. Target: at most 1.1x.

The app answers at once (``scripts/bench/edit.py``'s InstantApp), so what is measured is the
surface and the service, not an office. Run:
``uv run --no-sync python -m scripts.bench.webdav [--quick]`` (``--quick``: 3 saves, 10 and
20 MiB).
"""

import asyncio
import statistics
import time
import tracemalloc
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx2
import uvicorn
from artifactr import UserActor, Workspaces
from artifactr.core import Actor
from artifactr.fastapi import Unauthorized
from artifactr.sql import SqlStorage
from fastapi import FastAPI
from starlette.requests import HTTPConnection

from artifactr.files.core.manifests import WordDocument
from artifactr.files.fastapi.router import files_router
from artifactr.files.fastapi.webdav import webdav_router
from artifactr.files.native import NativeFiles
from scripts.bench._harness import machine_load, parser, run
from scripts.bench.edit import MIB, InstantApp, database, docx, service, stream_file

SIZES = (10 * MIB, 100 * MIB)
"""The large files' sizes."""

SAVES = 30
"""How many 1-page saves each way."""

QUICK_SIZES = (10 * MIB, 20 * MIB)
QUICK_SAVES = 3

LOCK = (
    b'<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>'
    b"<D:locktype><D:write/></D:locktype></D:lockinfo>"
)


async def resolve_actor(connection: HTTPConnection) -> tuple[str, Actor]:
    """Return the person the ``x-user`` header names."""
    user = connection.headers.get("x-user")
    if not user:
        raise Unauthorized("who?")
    return "t", UserActor(id=user)


def build(files: NativeFiles, workspaces: Workspaces) -> FastAPI:
    """Return an app with the files router and the WebDAV router on one service."""
    app = FastAPI()
    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    app.include_router(webdav_router(files, workspaces, resolve_actor=resolve_actor))
    return app


async def served(app: FastAPI) -> tuple[uvicorn.Server, asyncio.Task[None], str]:
    """Serve the app on a free port in this loop; return the server, its task and base URL."""
    config = uvicorn.Config(app, port=0, log_config=None, access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "the app did not start"
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, task, f"http://127.0.0.1:{port}"


async def upload(client: httpx2.AsyncClient, name: str, data: bytes) -> str:
    """Upload a file through the router; return its id."""
    answer = await client.post(
        "/workspaces/w/files", params={"name": name}, content=data, headers={"x-user": "eve"}
    )
    answer.raise_for_status()
    return str(answer.json()["artifact_id"])


async def lock(client: httpx2.AsyncClient, name: str) -> str:
    """Lock a file over WebDAV; return the token."""
    answer = await client.request(
        "LOCK", f"/dav/workspaces/w/{name}", content=LOCK, headers={"x-user": "eve"}
    )
    answer.raise_for_status()
    return answer.headers["Lock-Token"].strip("<>")


async def large_files(client: httpx2.AsyncClient, sizes: tuple[int, int] = SIZES) -> None:
    """Print the peak memory of a GET and a PUT of each size."""
    peaks: dict[tuple[str, int], float] = {}
    for size in sizes:
        name = f"big-{size // MIB}.docx"
        await upload(client, name, docx("small"))
        token = await lock(client, name)
        url = f"/dav/workspaces/w/{name}"
        tracemalloc.start()
        started = time.perf_counter()
        put = await client.put(
            url,
            content=stream_file(size),
            headers={"x-user": "eve", "If": f"(<{token}>)"},
        )
        took = time.perf_counter() - started
        peaks[("PUT", size)] = tracemalloc.get_traced_memory()[1] / MIB
        tracemalloc.stop()
        print(
            f"PUT {size // MIB:4d} MiB: {put.status_code} {put.headers.get('x-artifactr-outcome')}"
            f", {took:5.2f} s, peak {peaks[('PUT', size)]:6.1f} MiB"
        )
        tracemalloc.start()
        started = time.perf_counter()
        received = 0
        async with client.stream("GET", url, headers={"x-user": "eve"}) as got:
            async for chunk in got.aiter_bytes():
                received += len(chunk)
        took = time.perf_counter() - started
        peaks[("GET", size)] = tracemalloc.get_traced_memory()[1] / MIB
        tracemalloc.stop()
        print(
            f"GET {size // MIB:4d} MiB: {received // MIB} MiB, {took:5.2f} s, "
            f"peak {peaks[('GET', size)]:6.1f} MiB"
        )
    for method in ("GET", "PUT"):
        grew = peaks[(method, sizes[1])] - peaks[(method, sizes[0])]
        print(
            f"{method} peak memory grew {grew:+.1f} MiB from {sizes[0] // MIB} MiB to "
            f"{sizes[1] // MIB} MiB (target: flat)"
        )


async def saves(client: httpx2.AsyncClient, count: int = SAVES) -> None:
    """Print the median 1-page save through WebDAV against the router's check-in."""
    page = docx("one page of words " * 200)
    artifact_id = await upload(client, "page.docx", page)
    dav: list[float] = []
    router: list[float] = []
    eve = {"x-user": "eve"}
    for number in range(count):
        # Each save changes the page, so each is a new revision (never ``unchanged``).
        ours, theirs = docx(f"{number} router " * 400), docx(f"{number} webdav " * 400)
        checkout = await client.post(f"/workspaces/w/files/{artifact_id}/checkouts", headers=eve)
        checkout.raise_for_status()
        started = time.perf_counter()
        checked_in = await client.post(
            f"/workspaces/w/files/{artifact_id}/checkouts/{checkout.json()['id']}/check-in",
            content=ours,
            headers=eve,
        )
        router.append(time.perf_counter() - started)
        assert checked_in.json()["status"] == "applied", checked_in.text
        token = await lock(client, "page.docx")
        started = time.perf_counter()
        saved = await client.put(
            "/dav/workspaces/w/page.docx", content=theirs, headers={**eve, "If": f"(<{token}>)"}
        )
        dav.append(time.perf_counter() - started)
        assert saved.headers["x-artifactr-outcome"] == "applied", saved.text
        unlocked = await client.request(
            "UNLOCK", "/dav/workspaces/w/page.docx", headers={**eve, "Lock-Token": f"<{token}>"}
        )
        unlocked.raise_for_status()
    put, check_in = statistics.median(dav), statistics.median(router)
    print(
        f"1-page save: WebDAV PUT {put * 1000:7.2f} ms, router check-in {check_in * 1000:7.2f} ms,"
        f" ratio {put / check_in:4.2f}x (target: at most 1.1x)"
    )


async def main(quick: bool) -> None:
    """Run both benchmarks on SQLite."""
    sizes, count = (QUICK_SIZES, QUICK_SAVES) if quick else (SIZES, SAVES)
    with TemporaryDirectory() as scratch:
        async with database("sqlite", Path(scratch)) as engine:
            files = service(engine, InstantApp(), max_size=2 * sizes[-1])
            workspaces = Workspaces(SqlStorage(engine), types=[WordDocument])
            server, task, base = await served(build(files, workspaces))
            try:
                async with httpx2.AsyncClient(base_url=base, timeout=600) as client:
                    await saves(client, count)
                    await large_files(client, sizes)
            finally:
                server.should_exit = True
                await task
    print(machine_load())


if __name__ == "__main__":
    options = parser(__doc__, quick="3 saves, 10 and 20 MiB").parse_args()
    raise SystemExit(run(lambda: main(options.quick)))
