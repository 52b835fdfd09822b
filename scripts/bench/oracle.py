"""Benchmark: a hidden artifact against a missing one, on every read route (issue 15, defect 6).

A hidden artifact must answer exactly as a missing one: the same 404, and the same time, or
its id is an oracle that says "this exists, you may not see it". Through the files router (an
ASGI transport, no network), a reader who may not see artifact A asks for A and for an id that
names nothing, interleaved, :data:`SAMPLES` times each, on every route that names an artifact.
It prints both time distributions side by side (median, p90, p99, in ms) and the ratio of the
medians: 1.00 is no oracle.

Run: ``uv run --no-sync python -m scripts.bench.oracle [--quick]`` (PostgreSQL from
``ARTIFACTR_TEST_POSTGRES_URL``, or the local default, in a schema of its own dropped after;
skipped with a note when it does not answer). ``--quick``: 5 requests a route and case.
"""

import statistics
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx2
from artifactr import UserActor, Workspaces
from artifactr.core import Actor, Visibility
from artifactr.sql import SqlStorage, create_sqlite_engine, migrate
from artifactr.workspace import Access
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import HTTPConnection

from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.documents import build_docx
from artifactr.files.core.manifests import DOCX, WordDocument
from artifactr.files.fastapi.router import files_router
from artifactr.files.native import NativeFiles
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from scripts.bench._harness import (
    POSTGRES,
    machine_load,
    parser,
    postgres_answers,
    postgres_schema,
    run,
    schema_engine,
)

SAMPLES = 200
"""Requests per route and per case, interleaved."""
WARM_UP = 20
"""Requests per route and per case sent first and not counted."""
ROUTES = (
    ("GET content", "GET", "/{id}/versions/1/content"),
    ("HEAD content", "HEAD", "/{id}/versions/1/content"),
    ("GET page", "GET", "/{id}/versions/1/pages/1"),
    ("GET lease", "GET", "/{id}/lease"),
    ("POST checkout", "POST", "/{id}/checkouts"),
)
"""Every route that names an artifact and answers 404 for one the reader can't see."""


async def _resolve(connection: HTTPConnection) -> tuple[str, Actor]:
    return "t1", UserActor(id=connection.headers["x-user"])


async def _allow(_tenant: str, _workspace: str | None, _actor: Actor, _access: Access) -> bool:
    return True


@asynccontextmanager
async def database(kind: str, scratch: Path) -> AsyncGenerator[AsyncEngine]:
    """Yield a migrated, empty database: a SQLite file or a PostgreSQL schema of its own."""
    if kind == "sqlite":
        engine = create_sqlite_engine(f"sqlite+aiosqlite:///{scratch / 'oracle.db'}")
        try:
            await migrate(engine)
            await migrate_files(engine)
            yield engine
        finally:
            await engine.dispose()
        return
    async with postgres_schema() as schema:
        engine = schema_engine(POSTGRES, schema)
        try:
            await migrate(engine)
            await migrate_files(engine)
            yield engine
        finally:
            await engine.dispose()


def quantile(samples: Sequence[float], q: float) -> float:
    """Return the ``q`` quantile of the samples (nearest rank)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def oracle(kind: str, scratch: Path, samples: int = SAMPLES, warm_up: int = WARM_UP) -> None:
    """Time a hidden and a missing artifact on every route of one database, and print them."""
    async with database(kind, scratch) as engine:
        storage = SqlStorage(engine)
        files = NativeFiles(
            blobs=SqlBlobs(engine),
            app=FakeApp(),
            leases=SqlLeases(engine),
            checkouts=SqlCheckouts(engine),
            renders=SqlRenders(engine),
        )
        hidden: set[str] = set()

        async def hides(_tenant: str, _workspace: str, actor: Actor) -> Visibility:
            shut = hidden if actor.participant == "user:bob" else set[str]()
            return Visibility(artifacts=frozenset(shut))

        workspaces = Workspaces(storage, types=[WordDocument], authorize=_allow, hidden=hides)
        app = FastAPI()
        app.include_router(files_router(files, workspaces, resolve_actor=_resolve))
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://bench") as client:
            base = "/workspaces/w1/files"
            created = await client.post(
                base,
                params={"name": "contract.docx"},
                content=build_docx(),
                headers={"x-user": "alice", "content-type": DOCX},
            )
            secret = created.json()["artifact_id"]
            hidden.add(secret)
            # Same length as a generated id, so neither index lookup is favoured.
            missing = "art_" + "0" * (len(secret) - 4)
            print(f"{kind}: {samples} interleaved requests per case, times in ms")
            print(
                f"  {'route':<14} {'hidden p50':>10} {'p90':>7} {'p99':>7}"
                f"   {'missing p50':>11} {'p90':>7} {'p99':>7}   {'p50 ratio':>9}"
            )
            for label, method, path in ROUTES:
                times: dict[str, list[float]] = {"hidden": [], "missing": []}
                for round_ in range(warm_up + samples):
                    order = [("hidden", secret), ("missing", missing)]
                    if round_ % 2:
                        order.reverse()
                    for case, artifact_id in order:
                        url = base + path.format(id=artifact_id)
                        started = time.perf_counter()
                        response = await client.request(method, url, headers={"x-user": "bob"})
                        elapsed = (time.perf_counter() - started) * 1000
                        assert response.status_code == 404, (case, label, response.text)
                        if round_ >= warm_up:
                            times[case].append(elapsed)
                shown, gone = times["hidden"], times["missing"]
                ratio = statistics.median(shown) / statistics.median(gone)
                print(
                    f"  {label:<14} {statistics.median(shown):>10.3f} {quantile(shown, 0.9):>7.3f}"
                    f" {quantile(shown, 0.99):>7.3f}   {statistics.median(gone):>11.3f}"
                    f" {quantile(gone, 0.9):>7.3f} {quantile(gone, 0.99):>7.3f}   {ratio:>9.2f}"
                )


async def main(quick: bool) -> None:
    """Run the benchmark on SQLite, then PostgreSQL if it answers."""
    samples, warm_up = (5, 1) if quick else (SAMPLES, WARM_UP)
    with TemporaryDirectory() as scratch:
        await oracle("sqlite", Path(scratch), samples, warm_up)
        if await postgres_answers():
            await oracle("postgres", Path(scratch), samples, warm_up)
        else:
            print(f"postgres: skipped, nothing answers at {POSTGRES}")
    print(machine_load())


if __name__ == "__main__":
    options = parser(__doc__, quick="5 requests a route and case").parse_args()
    raise SystemExit(run(lambda: main(options.quick)))
