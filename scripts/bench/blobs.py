"""Benchmark: SqlBlobs' streaming put and read against the bare driver (RFC-0003).

For 1 MiB, 64 MiB and 256 MiB, on SQLite (a file) and PostgreSQL, it times a put (bytes
streamed in 256 KiB pieces, hashed, written as 1 MiB chunk rows) and a streaming read of the
same blob through :class:`artifactr.files.sql.SqlBlobs`, and the database's own bulk write and
streaming read of the same 1 MiB chunks into the same table through the bare driver (aiosqlite
or asyncpg: one transaction and ``executemany``; one cursor). Adapter and driver runs alternate,
so each pair shares the machine's load; the table shows median rates and the median of the
pairs' ratios (target: at least 0.7). A last pass under tracemalloc gives the adapter's peak
memory for each size (target: flat, whatever the size).

The last two columns, ``floor w`` and ``r``, are what SQLAlchemy itself reaches against the
bare driver: the same statements on a pooled connection of the engine, in one transaction, with
nothing else. No adapter on SQLAlchemy goes faster; at 1 MiB on SQLite, where the driver reads
a row in a quarter of a millisecond, that ceiling is far under 0.7.

Run it as ``uv run --no-sync python -m scripts.bench.blobs [--quick]`` (``--quick``: 1 and
8 MiB, two runs each). PostgreSQL is the one at ``ARTIFACTR_TEST_POSTGRES_URL`` (or
127.0.0.1:5432/test), in a schema of its own, dropped after, interrupted or not.
"""

import hashlib
import importlib
import random
import statistics
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Sequence,
)
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import aiosqlite
from artifactr.sql import create_sqlite_engine
from artifactr.workspace import Scope
from sqlalchemy import make_url, text
from sqlalchemy.ext.asyncio import AsyncEngine

from scripts.bench._harness import (
    POSTGRES,
    machine_load,
    parser,
    postgres_answers,
    postgres_schema,
    run,
    schema_engine,
)

MiB = 1 << 20
SIZES = (1, 64, 256)
"""The blob sizes, in MiB."""
RUNS = {1: 25, 64: 9, 256: 5}
"""How many adapter and driver runs alternate for each size."""
QUICK_SIZES = (1, 8)
QUICK_RUNS = 2
PIECE = 256 * 1024
"""How many bytes a client sends at a time."""
SCOPE = Scope(tenant_id="bench", workspace_id="w1")
CHUNKS = "artifactr_files_chunks"
INSERT = f"INSERT INTO {CHUNKS} (tenant_id, workspace_id, blob_id, seq, data) VALUES "
SELECT = (
    f"SELECT data FROM {CHUNKS} WHERE tenant_id = {{}} AND workspace_id = {{}}"
    " AND blob_id = {} ORDER BY seq"
)


# ─── what is imported by name ─────────────────────────────────────────────────
# pyright finds artifactr.files only from inside src/ (the installed artifactr is a regular
# package, and setuptools' editable finder is invisible to it), and asyncpg ships no types: both
# are imported by name here and typed by the shapes this script uses.


class Stored(Protocol):
    """A stored blob, as the benchmark reads it."""

    @property
    def sha256(self) -> str:
        """The digest."""
        ...


class Blobs(Protocol):
    """The part of ``SqlBlobs`` the benchmark drives."""

    async def put(
        self, scope: Scope, artifact_id: str, data: AsyncIterable[bytes], media_type: str
    ) -> Stored:
        """Store a stream."""
        ...

    def read(self, scope: Scope, artifact_id: str, sha256: str) -> AsyncIterator[bytes]:
        """Stream a blob back."""
        ...


@dataclass(frozen=True)
class Package:
    """What the benchmark takes from artifactr.files."""

    blobs: Callable[[AsyncEngine], Blobs]
    migrate: Callable[[AsyncEngine], Awaitable[None]]
    chunk_size: int


def package() -> Package:
    """Return the SQL adapter, its migrations and the chunk size."""
    sql: Any = importlib.import_module("artifactr.files.sql")
    ports: Any = importlib.import_module("artifactr.files.core.blobs")
    return Package(blobs=sql.SqlBlobs, migrate=sql.migrate, chunk_size=ports.CHUNK_SIZE)


class PgConnection(Protocol):
    """The part of an asyncpg connection the benchmark uses."""

    def transaction(self) -> AbstractAsyncContextManager[object]:
        """Begin a transaction."""
        ...

    async def executemany(self, command: str, args: Iterable[Sequence[object]]) -> None:
        """Run a statement for each row."""
        ...

    def cursor(self, query: str, *args: object, prefetch: int) -> AsyncIterable[Sequence[Any]]:
        """Open a cursor that fetches ``prefetch`` rows at a time."""
        ...

    async def close(self) -> None:
        """Close the connection."""
        ...


async def pg_connect(url: str, schema: str) -> PgConnection:
    """Connect with asyncpg itself, working in ``schema``."""
    asyncpg: Any = importlib.import_module("asyncpg")
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    connection: PgConnection = await asyncpg.connect(dsn, server_settings={"search_path": schema})
    return connection


# ─── the bytes ────────────────────────────────────────────────────────────────


class Source:
    """The same pseudo-random (incompressible) 1 MiB chunks, as rows or as client pieces."""

    def __init__(self, chunk_size: int) -> None:
        rng = random.Random(3)
        self.blocks = [rng.randbytes(chunk_size) for _ in range(4)]
        self.pieces = [
            block[start : start + PIECE]
            for block in self.blocks
            for start in range(0, chunk_size, PIECE)
        ]

    def rows(self, blob_id: str, size: int) -> Iterator[tuple[str, str, str, int, bytes]]:
        """Yield the blob's rows, 1 MiB each."""
        for n in range(size // MiB):
            yield SCOPE.tenant_id, SCOPE.workspace_id, blob_id, n, self.blocks[n % 4]

    async def stream(self, size: int) -> AsyncIterator[bytes]:
        """Yield the same bytes as a client sends them."""
        for n in range(size // PIECE):
            yield self.pieces[n % len(self.pieces)]


# ─── the bare drivers ─────────────────────────────────────────────────────────


class Bare(Protocol):
    """The driver's own bulk write and streaming read of chunk rows."""

    async def write(self, rows: Iterator[tuple[str, str, str, int, bytes]]) -> None:
        """Write every row in one transaction."""
        ...

    async def read(self, blob_id: str) -> int:
        """Read a blob's rows back in order; return how many bytes."""
        ...

    async def close(self) -> None:
        """Close the connection."""
        ...


class BareSqlite:
    """aiosqlite on the database file."""

    def __init__(self, connection: aiosqlite.Connection) -> None:
        self._connection = connection

    async def write(self, rows: Iterator[tuple[str, str, str, int, bytes]]) -> None:
        """Write every row in one transaction, with ``executemany``."""
        await self._connection.execute("BEGIN IMMEDIATE")
        await self._connection.executemany(INSERT + "(?, ?, ?, ?, ?)", rows)
        await self._connection.execute("COMMIT")

    async def read(self, blob_id: str) -> int:
        """Read the rows back through one cursor."""
        total = 0
        query = SELECT.format("?", "?", "?")
        params = (SCOPE.tenant_id, SCOPE.workspace_id, blob_id)
        async with self._connection.execute(query, params) as cursor:
            async for row in cursor:
                data: bytes = row[0]
                total += len(data)
        return total

    async def close(self) -> None:
        """Close the connection."""
        await self._connection.close()


class BarePostgres:
    """asyncpg in the benchmark's schema."""

    def __init__(self, connection: PgConnection) -> None:
        self._connection = connection

    async def write(self, rows: Iterator[tuple[str, str, str, int, bytes]]) -> None:
        """Write every row in one transaction, with ``executemany``."""
        async with self._connection.transaction():
            await self._connection.executemany(INSERT + "($1, $2, $3, $4, $5)", rows)

    async def read(self, blob_id: str) -> int:
        """Read the rows back through one cursor, a few at a time."""
        total = 0
        query = SELECT.format("$1", "$2", "$3")
        async with self._connection.transaction():
            cursor = self._connection.cursor(
                query, SCOPE.tenant_id, SCOPE.workspace_id, blob_id, prefetch=8
            )
            async for record in cursor:
                data: bytes = record[0]
                total += len(data)
        return total

    async def close(self) -> None:
        """Close the connection."""
        await self._connection.close()


# ─── the databases ────────────────────────────────────────────────────────────


@dataclass
class Database:
    """One database under test: its engine, the adapter on it and the bare driver."""

    name: str
    engine: AsyncEngine
    blobs: Blobs
    bare: Bare


@asynccontextmanager
async def sqlite(files: Package, folder: Path) -> AsyncGenerator[Database]:
    """Yield a fresh SQLite file, migrated."""
    path = folder / "bench.db"
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{path}")
    await files.migrate(engine)
    bare = BareSqlite(await aiosqlite.connect(path, isolation_level=None))
    try:
        yield Database("sqlite", engine, files.blobs(engine), bare)
    finally:
        await bare.close()
        await engine.dispose()


@asynccontextmanager
async def postgres(files: Package) -> AsyncGenerator[Database]:
    """Yield a fresh PostgreSQL schema, migrated; drop it afterwards."""
    async with postgres_schema() as schema:
        engine = schema_engine(POSTGRES, schema)
        try:
            await files.migrate(engine)
            bare = BarePostgres(await pg_connect(POSTGRES, schema))
            try:
                yield Database("postgres", engine, files.blobs(engine), bare)
            finally:
                await bare.close()
        finally:
            await engine.dispose()


# ─── measuring ────────────────────────────────────────────────────────────────


@dataclass
class Figures:
    """One size on one database: the seconds of every run, and the adapter's peaks in bytes."""

    put: list[float] = field(default_factory=list[float])
    read: list[float] = field(default_factory=list[float])
    bare_write: list[float] = field(default_factory=list[float])
    bare_read: list[float] = field(default_factory=list[float])
    floor_write: list[float] = field(default_factory=list[float])
    floor_read: list[float] = field(default_factory=list[float])
    put_peak: int = 0
    read_peak: int = 0


async def clear(db: Database) -> None:
    """Empty the tables between runs, so every run writes into the same state."""
    async with db.engine.begin() as connection:
        await connection.execute(text(f"DELETE FROM {CHUNKS}"))
        await connection.execute(text("DELETE FROM artifactr_files_blobs"))


async def adapter_run(db: Database, source: Source, size: int, figures: Figures) -> None:
    """Put a blob through the adapter and stream it back."""
    artifact_id = uuid.uuid4().hex
    started = time.perf_counter()
    blob = await db.blobs.put(SCOPE, artifact_id, source.stream(size), "application/octet-stream")
    figures.put.append(time.perf_counter() - started)
    started = time.perf_counter()
    total = 0
    async for chunk in db.blobs.read(SCOPE, artifact_id, blob.sha256):
        total += len(chunk)
    figures.read.append(time.perf_counter() - started)
    assert total == size, (total, size)


async def bare_run(db: Database, source: Source, size: int, figures: Figures) -> None:
    """Write the same chunks through the bare driver and read them back."""
    blob_id = uuid.uuid4().hex
    started = time.perf_counter()
    await db.bare.write(source.rows(blob_id, size))
    figures.bare_write.append(time.perf_counter() - started)
    started = time.perf_counter()
    total = await db.bare.read(blob_id)
    figures.bare_read.append(time.perf_counter() - started)
    assert total == size, (total, size)


async def floor_run(db: Database, source: Source, size: int, figures: Figures) -> None:
    """Write and read the same chunks through SQLAlchemy's engine, as any adapter on it must.

    One pooled connection and one transaction each way, with the bare driver's statements:
    no hashing, no bookkeeping, no tenant. It is what an adapter on SQLAlchemy can reach.
    """
    blob_id = uuid.uuid4().hex
    names = ("t", "w", "b", "s", "d")
    rows: list[dict[str, Any]] = [
        dict(zip(names, row, strict=True)) for row in source.rows(blob_id, size)
    ]
    started = time.perf_counter()
    async with db.engine.begin() as connection:
        await connection.execute(text(INSERT + "(:t, :w, :b, :s, :d)"), rows)
    figures.floor_write.append(time.perf_counter() - started)
    total = 0
    started = time.perf_counter()
    async with db.engine.connect() as connection:
        params = {"t": SCOPE.tenant_id, "w": SCOPE.workspace_id, "b": blob_id}
        found = await connection.stream(text(SELECT.format(":t", ":w", ":b")), params)
        async for row in found:
            data: bytes = row[0]
            total += len(data)
    figures.floor_read.append(time.perf_counter() - started)
    assert total == size, (total, size)


async def trace(db: Database, source: Source, size: int, figures: Figures) -> None:
    """Put and read a blob under tracemalloc; keep each step's peak."""
    artifact_id = uuid.uuid4().hex
    tracemalloc.start()
    try:
        blob = await db.blobs.put(
            SCOPE, artifact_id, source.stream(size), "application/octet-stream"
        )
        figures.put_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        digest = hashlib.sha256()
        async for chunk in db.blobs.read(SCOPE, artifact_id, blob.sha256):
            digest.update(chunk)
        figures.read_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert digest.hexdigest() == blob.sha256


async def measure(db: Database, source: Source, size: int, runs: int) -> Figures:
    """Alternate adapter and driver runs, then trace the adapter's memory."""
    figures = Figures()
    for _ in range(runs):
        await adapter_run(db, source, size, figures)
        await clear(db)
        await bare_run(db, source, size, figures)
        await clear(db)
        await floor_run(db, source, size, figures)
        await clear(db)
    await trace(db, source, size, figures)
    await clear(db)
    return figures


def report(name: str, size: int, figures: Figures) -> None:
    """Print one row: median rates in MiB/s, the median of the pairs' ratios, peaks in MiB."""

    def rate(seconds: list[float]) -> float:
        return size / MiB / statistics.median(seconds)

    def ratio(adapter: list[float], bare: list[float]) -> float:
        return statistics.median(b / a for a, b in zip(adapter, bare, strict=True))

    print(
        f"{name:<9}{size // MiB:>5} MiB"
        f"{rate(figures.put):>9.0f}{rate(figures.bare_write):>9.0f}"
        f"{ratio(figures.put, figures.bare_write):>7.2f}"
        f"{rate(figures.read):>9.0f}{rate(figures.bare_read):>9.0f}"
        f"{ratio(figures.read, figures.bare_read):>7.2f}"
        f"{figures.put_peak / MiB:>9.1f}{figures.read_peak / MiB:>9.1f}"
        f"{ratio(figures.floor_write, figures.bare_write):>8.2f}"
        f"{ratio(figures.floor_read, figures.bare_read):>7.2f}"
    )


async def on(files: Package, database: AbstractAsyncContextManager[Database], quick: bool) -> None:
    """Measure every size on one database and print its rows."""
    source = Source(files.chunk_size)
    async with database as db:
        for size in QUICK_SIZES if quick else SIZES:
            runs = QUICK_RUNS if quick else RUNS[size]
            report(db.name, size * MiB, await measure(db, source, size * MiB, runs))


async def main(quick: bool) -> None:
    """Print the table."""
    files = package()
    print(
        f"{'':<9}{'size':>9}{'put':>9}{'bare w':>9}{'ratio':>7}"
        f"{'read':>9}{'bare r':>9}{'ratio':>7}{'put pk':>9}{'read pk':>9}{'floor w':>8}{'r':>7}"
    )
    print(
        f"{'':<18}{'MiB/s':>9}{'MiB/s':>9}{'':>7}{'MiB/s':>9}{'MiB/s':>9}{'':>7}{'MiB':>9}{'MiB':>9}"
    )
    with tempfile.TemporaryDirectory() as folder:
        await on(files, sqlite(files, Path(folder)), quick)
    if await postgres_answers():
        await on(files, postgres(files), quick)
    else:
        print(f"postgres: skipped, nothing answers at {POSTGRES}")
    print(machine_load())


if __name__ == "__main__":
    options = parser(__doc__, quick="1 and 8 MiB, two runs each").parse_args()
    raise SystemExit(run(lambda: main(options.quick)))
