"""Benchmark: every route at a small workspace and a large one, in time and in statements.

Issue 41: a request should cost what it shows, not what the workspace holds. This fills a
database to a small size (10 files, a file of 10 revisions, 10 proposals on another file),
times each route (median of ``--rounds``) and counts its SQL statements, then grows the same
workspace to the large size (10,000 files, a file of 5,000 revisions, 1,000 proposals) and
measures again. It prints each route's median time and statements at each size, and the ratio
of the times. Target: every route within 2x of its time at the small size; a depth-1 PROPFIND,
which answers for every file, within 2x of its time a file shown.

The workspace is grown through artifactr (``Workspace.create``, ``commit``), as an application
would; the file's bytes are FakeApp's, read once at upload. PostgreSQL is used when one answers
at ``--url`` (by default ``ARTIFACTR_TEST_POSTGRES_URL``, else the local default), in a schema of
its own that is dropped at the end, also when the run is interrupted; otherwise SQLite, in a
temporary file. ``--quick`` runs small sizes in seconds, for a test that every bench still runs.

Run: ``uv run python scripts/bench/scale.py`` (or ``--quick``).
"""

import argparse
import asyncio
import os
import signal
import statistics
import sys
import time
import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any, Final

import httpx2
from artifactr import UserActor, Workspaces
from artifactr.core import Actor, Applied, EditArtifact, JsonPatch, ProposeChange
from artifactr.fastapi import Unauthorized
from artifactr.sql import SqlStorage, create_sqlite_engine, migrate
from artifactr.workspace import Workspace
from fastapi import FastAPI
from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from starlette.requests import HTTPConnection

from artifactr.files.agent import operations
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.documents import build_docx
from artifactr.files.core.leases import scope_of
from artifactr.files.core.manifests import NativeFile, WordDocument
from artifactr.files.fastapi.portal import Person, portal_router
from artifactr.files.fastapi.router import files_router
from artifactr.files.fastapi.webdav import webdav_router
from artifactr.files.native import NativeFiles
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlHistory, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files

POSTGRES: Final = os.environ.get(
    "ARTIFACTR_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
"""Where PostgreSQL is looked for unless ``--url`` says."""

TENANT: Final = "t"
WORKSPACE: Final = "w"
BUDGET: Final = 20.0
"""Seconds of timed calls a route is given at most: a route that grows gets fewer rounds."""

TARGET: Final = 2.0
"""The most a route's time at the large size may be, as a multiple of its time at the small."""

SHOWS_EVERY_FILE: Final = frozenset({"WebDAV PROPFIND depth 1"})
"""Routes that answer for every file of the workspace: judged by their time a file shown."""


@dataclass(frozen=True)
class Sizes:
    """How much the workspace holds: files, the long file's revisions, the other's proposals."""

    files: int
    revisions: int
    proposals: int


SMALL: Final = Sizes(files=10, revisions=10, proposals=10)
LARGE: Final = Sizes(files=10_000, revisions=5_000, proposals=1_000)
QUICK: Final = Sizes(files=60, revisions=60, proposals=30)
"""The large size of ``--quick``."""


async def resolve_actor(connection: HTTPConnection) -> tuple[str, Actor]:
    """Return the person the ``x-user`` header names."""
    user = connection.headers.get("x-user")
    if not user:
        raise Unauthorized("who?")
    return TENANT, UserActor(id=user, name=user.title())


@dataclass
class Bench:
    """The workspace being grown, its service, an HTTP client over every surface, the counter."""

    engine: AsyncEngine
    files: NativeFiles
    ws: Workspace
    client: httpx2.AsyncClient
    doc: str
    """The file whose history grows."""
    other: str
    """The file whose proposals grow."""
    proposal: str
    """A proposal on :attr:`doc`, for its page."""
    made: Sizes
    seen: int = 0

    def _count(self, *args: Any) -> None:
        self.seen += 1

    async def measure(self, ask: Callable[[], Awaitable[object]], rounds: int) -> tuple[float, int]:
        """Return the median seconds of up to ``rounds`` calls, and the statements of one."""
        await ask()
        times: list[float] = []
        while len(times) < rounds and sum(times) < BUDGET:
            started = time.perf_counter()
            await ask()
            times.append(time.perf_counter() - started)
        self.seen = 0
        event.listen(self.engine.sync_engine, "before_cursor_execute", self._count)
        try:
            await ask()
        finally:
            event.remove(self.engine.sync_engine, "before_cursor_execute", self._count)
        return statistics.median(times), self.seen

    async def grow(self, to: Sizes) -> None:
        """Grow the workspace to ``to``: more files, a longer history, more proposals."""
        model = (await self.ws.get(NativeFile, self.doc)).data
        scope = scope_of(self.ws)
        blobs = [
            (await self.files.blobs.get(scope, self.doc, blob.sha256) or b"", blob.media_type)
            for blob in (model.content, model.text, model.review)
            if blob is not None
        ]
        for n in range(self.made.files, to.files):
            # Each file its own bytes, as an upload leaves them: WebDAV's listing reads them.
            await self.files.blobs.put_many(scope, f"f{n:05}", blobs)
            copy = model.model_copy(update={"name": f"f{n:05}.docx"})
            await self.ws.create(copy, artifact_id=f"f{n:05}")
        head = (await self.ws.get(NativeFile, self.doc)).version
        while head < to.revisions:
            change = JsonPatch(ops=({"op": "replace", "path": "/outline", "value": f"v{head}"},))
            await self.ws.commit(
                EditArtifact(artifact_id=self.doc, base_version=head, patch=change)
            )
            head += 1
        for n in range(self.made.proposals, to.proposals):
            await propose(self.ws, self.other, f"p{n}")
        self.made = to


async def propose(ws: Workspace, artifact_id: str, outline: str) -> str:
    """Propose an outline change to a file; return the proposal's id."""
    head = (await ws.get(NativeFile, artifact_id)).version
    change = JsonPatch(ops=({"op": "replace", "path": "/outline", "value": outline},))
    outcome = await ws.commit(
        ProposeChange(change=EditArtifact(artifact_id=artifact_id, base_version=head, patch=change))
    )
    return outcome.proposal_id


async def upload(files: NativeFiles, ws: Workspace, name: str) -> str:
    """Upload a small Word document as the workspace's person; return its id."""
    outcome = await files.upload(ws, name, chunks(build_docx()))
    if not isinstance(outcome, Applied):
        raise RuntimeError(f"the upload was not applied: {outcome}")
    return outcome.artifact_id


def routes(bench: Bench) -> dict[str, Callable[[], Awaitable[object]]]:
    """Return each route measured, as a call that must succeed."""
    doc, ws, files = bench.doc, bench.ws, bench.files
    me = {"x-user": "alice"}
    portal = f"/portal/workspaces/{WORKSPACE}/files"
    router = f"/workspaces/{WORKSPACE}/files/{doc}"

    def get(path: str, **headers: str) -> Callable[[], Awaitable[object]]:
        async def asked() -> object:
            answer = await bench.client.get(path, headers={**me, **headers})
            if answer.status_code >= 300:
                raise RuntimeError(f"{path}: {answer.status_code} {answer.text[:200]}")
            return answer

        return asked

    async def propfind() -> object:
        answer = await bench.client.request(
            "PROPFIND", f"/dav/workspaces/{WORKSPACE}/", headers={**me, "depth": "1"}
        )
        if answer.status_code != 207:
            raise RuntimeError(f"PROPFIND: {answer.status_code}")
        return answer

    return {
        "portal file list": get(portal),
        "portal file page": get(f"{portal}/{doc}"),
        "portal diff v1-v2": get(f"{portal}/{doc}/diff?from=1&to=2"),
        "portal proposal page": get(f"{portal}/{doc}/proposals/{bench.proposal}"),
        "download of v1": get(f"{router}/versions/1/content"),
        "page 1 of v1": get(f"{router}/versions/1/pages/1"),
        "WebDAV GET of one file": get(f"/dav/workspaces/{WORKSPACE}/report.docx"),
        "WebDAV PROPFIND depth 1": propfind,
        "agent list_files": lambda: operations.list_files(ws, files, 0),
        "agent read_native": lambda: operations.read_native(ws, files, doc, 0, follow=_nothing),
    }


async def _nothing(artifact_id: str) -> None:
    del artifact_id


async def chunks(data: bytes) -> AsyncIterator[bytes]:
    """Yield the bytes as one chunk."""
    yield data


@asynccontextmanager
async def database(url: str | None, scratch: Path) -> AsyncGenerator[AsyncEngine]:
    """Yield a migrated, empty database: a PostgreSQL schema of its own if one answers.

    The schema is dropped when the block ends, however it ends.
    """
    if url is not None and await _answers(url):
        schema = f"bench_scale_{uuid.uuid4().hex[:8]}"
        admin = create_async_engine(url)
        async with admin.begin() as connection:
            await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
        engine = create_async_engine(url, connect_args={"server_settings": {"search_path": schema}})
        try:
            print(f"database: PostgreSQL, schema {schema}")
            await migrate(engine)
            await migrate_files(engine)
            yield engine
        finally:
            await engine.dispose()
            async with admin.begin() as connection:
                await connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
            await admin.dispose()
        return
    print("database: SQLite (no PostgreSQL answered)")
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{scratch / 'scale.db'}")
    try:
        await migrate(engine)
        await migrate_files(engine)
        yield engine
    finally:
        await engine.dispose()


async def _answers(url: str) -> bool:
    engine = create_async_engine(url)
    try:
        async with engine.connect() as connection:
            await connection.execute(text("select 1"))
    except OSError:
        return False
    finally:
        await engine.dispose()
    return True


def build(files: NativeFiles, workspaces: Workspaces) -> FastAPI:
    """Return an app with the files router, the portal and WebDAV on one service."""
    app = FastAPI()
    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    app.include_router(
        portal_router(
            files,
            workspaces,
            resolve_actor=resolve_actor,
            people=[Person(id="alice", name="Alice", role="editor")],
            workspace_ids=[WORKSPACE],
        )
    )
    app.include_router(webdav_router(files, workspaces, resolve_actor=resolve_actor))
    return app


async def run(large: Sizes, rounds: int, url: str | None) -> int:
    """Fill, measure, grow, measure again, and print the table; return the exit status."""
    with TemporaryDirectory() as scratch:
        async with database(url, Path(scratch)) as engine:
            files = NativeFiles(
                blobs=SqlBlobs(engine),
                app=FakeApp(),
                leases=SqlLeases(engine),
                checkouts=SqlCheckouts(engine),
                renders=SqlRenders(engine),
                history=SqlHistory(engine),
            )
            workspaces = Workspaces(SqlStorage(engine), types=[WordDocument])
            ws = await workspaces.open(TENANT, WORKSPACE, actor=UserActor(id="alice"))
            doc = await upload(files, ws, "report.docx")
            other = await upload(files, ws, "other.docx")
            transport = httpx2.ASGITransport(app=build(files, workspaces))
            async with httpx2.AsyncClient(transport=transport, base_url="http://bench") as client:
                bench = Bench(engine, files, ws, client, doc, other, "", Sizes(2, 1, 0))
                await bench.grow(SMALL)
                bench.proposal = await propose(ws, doc, "proposed")
                measured: dict[Sizes, dict[str, tuple[float, int]]] = {}
                for size in (SMALL, large):
                    started = time.perf_counter()
                    await bench.grow(size)
                    print(f"filled to {_said(size)} in {time.perf_counter() - started:.1f} s")
                    measured[size] = {
                        name: await bench.measure(ask, rounds)
                        for name, ask in routes(bench).items()
                    }
    _table(measured[SMALL], measured[large], large)
    return 0


def _said(size: Sizes) -> str:
    return (
        f"{size.files:,} files, a file of {size.revisions:,} revisions, "
        f"{size.proposals:,} proposals"
    )


def _table(
    small: dict[str, tuple[float, int]], large: dict[str, tuple[float, int]], size: Sizes
) -> None:
    print()
    print(f"{'route':<26} {'small ms':>9} {'large ms':>9} {'ratio':>6} {'stmts':>11}  target")
    for name, (seconds, statements) in small.items():
        big, big_statements = large[name]
        ratio = big / seconds
        verdict = "met" if ratio <= TARGET else f"missed (>{TARGET:g}x)"
        if name in SHOWS_EVERY_FILE:
            # It answers for every file: what it costs is judged per file it shows.
            ratio = (big / size.files) / (seconds / SMALL.files)
            verdict = ("met" if ratio <= TARGET else f"missed (>{TARGET:g}x)") + (
                f" per file shown ({seconds / SMALL.files * 1000:.2f} against "
                f"{big / size.files * 1000:.2f} ms a file)"
            )
        print(
            f"{name:<26} {seconds * 1000:>9.2f} {big * 1000:>9.2f} {ratio:>5.2f}x "
            f"{statements:>5}/{big_statements:<5}  {verdict}"
        )
    print(f"\nsmall: {_said(SMALL)}; large: {_said(size)}")


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and run; SIGTERM ends the run as Ctrl-C does, cleaning up."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="small sizes: runs in seconds")
    parser.add_argument("--rounds", type=int, default=None, help="timed calls a route (median)")
    parser.add_argument("--url", default=POSTGRES, help="PostgreSQL's URL (SQLite if none answers)")
    args = parser.parse_args(argv)
    large = QUICK if args.quick else LARGE
    rounds = args.rounds or (3 if args.quick else 15)
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        return asyncio.run(run(large, rounds, args.url))
    except KeyboardInterrupt:
        print("interrupted: the bench's schema was dropped", file=sys.stderr)
        return 130


def _interrupted(signum: int, frame: object) -> None:
    del signum, frame
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
