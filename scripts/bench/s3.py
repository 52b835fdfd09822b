"""Benchmark: S3Blobs against the bare client on the same SeaweedFS, in one run (ADR-0024).

It starts a SeaweedFS of its own (``weed`` from the dev group, on free loopback ports, in a
temporary directory), and removes it afterwards, even when interrupted. Three parts:

1. **Throughput.** A put of N MiB streamed in 256 KiB pieces through :class:`S3Blobs` with its
   digest known, as a check-in hands it over from its spool (checked as it goes up in parts
   straight to its digest's key), and the bare client's own streamed multipart put of the same
   bytes (obstore, the same part size and concurrency); then the same put with no digest given
   (staged in parts, copied to its digest's key); then S3Blobs' read (re-chunked, digest
   checked) against the bare client's streamed get. Runs alternate; the table shows medians
   and the median of the pairs' ratios (target: at least 0.9 for the put and the read).
2. **One large check-in's put**, run first while the process is idle: the bytes of a check-in
   of N MiB, with the digest its spool took, streamed into S3Blobs, and the same into SqlBlobs
   on PostgreSQL
   (``ARTIFACTR_TEST_POSTGRES_URL``, a schema of its own): time, and S3's peak resident memory
   over idle, sampled as the bytes flow (target: at most 64 MiB). Without PostgreSQL its row
   says it was skipped; S3's figures are still given.
3. **Small files.** 1,000 puts of 30 KiB documents at concurrency 16 through S3Blobs (marker,
   conditional create) and through the bare client (one put each): p50 and p99 latency.

Run it as ``.venv/bin/python -m scripts.bench.s3`` (a few minutes; ``--large-mib 1024``
for the 1 GiB check-in), or ``--quick`` for a smoke run of a few seconds.
"""

import argparse
import asyncio
import hashlib
import os
import random
import signal
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import obstore
from artifactr.workspace import Scope
from obstore.store import S3Store
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from artifactr.files.s3 import S3Blobs
from artifactr.files.s3.blobs import PART_SIZE, PARTS_AT_ONCE
from artifactr.files.sql import SqlBlobs, migrate
from tests.seaweed import ACCESS_KEY, SECRET_KEY, SeaweedFS, seaweedfs

MiB = 1 << 20
PIECE = 256 * 1024
"""How many bytes a client sends at a time."""
SCOPE = Scope(tenant_id="bench", workspace_id="w1")


@dataclass(frozen=True)
class Plan:
    """How much each part moves."""

    size_mib: int
    runs: int
    large_mib: int
    small: int
    small_kib: int = 30
    concurrency: int = 16


def parser() -> argparse.ArgumentParser:
    """Return the command line's parser."""
    command = argparse.ArgumentParser(
        prog="scripts/bench/s3.py",
        description="S3Blobs against the bare client (obstore) on a SeaweedFS of its own.",
    )
    command.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    command.add_argument("--size-mib", type=int, default=128, help="throughput body (MiB)")
    command.add_argument("--runs", type=int, default=5, help="alternating runs per side")
    command.add_argument("--large-mib", type=int, default=256, help="the large check-in (MiB)")
    command.add_argument("--small", type=int, default=1000, help="how many 30 KiB puts")
    return command


def resident() -> int:
    """Return this process's resident memory in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


async def peak_during(work: Awaitable[object], idle: int) -> tuple[float, int]:
    """Return how long ``work`` took and the peak resident memory over ``idle``."""
    peak = resident()
    done = False

    async def sample() -> None:
        nonlocal peak
        while not done:
            peak = max(peak, resident())
            await asyncio.sleep(0.01)

    sampler = asyncio.create_task(sample())
    began = time.perf_counter()
    try:
        await work
    finally:
        done = True
        await sampler
    return time.perf_counter() - began, max(peak, resident()) - idle


async def pieces(data: bytes) -> AsyncIterator[bytes]:
    """Yield bytes in :data:`PIECE` pieces, as a client's upload arrives."""
    view = memoryview(data)
    for start in range(0, len(data), PIECE):
        yield bytes(view[start : start + PIECE])


async def lazily(total: int) -> AsyncIterator[bytes]:
    """Yield ``total`` bytes without holding them: one random block, again and again."""
    block = random.Random(1).randbytes(PIECE)
    for _ in range(total // PIECE):
        yield block


async def digest_of(data: AsyncIterator[bytes]) -> str:
    """The SHA-256 of a stream, as a check-in's spool takes it while the upload arrives."""
    sha = hashlib.sha256()
    async for piece in data:
        sha.update(piece)
    return sha.hexdigest()


def bare_store(store: SeaweedFS) -> S3Store:
    """The bare client on the benchmark's bucket."""
    return S3Store(
        "bench",
        config={
            "endpoint": store.endpoint,
            "region": "us-east-1",
            "access_key_id": ACCESS_KEY,
            "secret_access_key": SECRET_KEY,
        },
        client_options={"allow_http": True},
    )


def adapter(store: SeaweedFS) -> S3Blobs:
    """S3Blobs on the benchmark's bucket, under a prefix of its own."""
    return S3Blobs(
        "bench",
        prefix=f"run-{uuid.uuid4().hex[:8]}",
        endpoint_url=store.endpoint,
        region="us-east-1",
        access_key_id=ACCESS_KEY,
        secret_access_key=SECRET_KEY,
    )


async def timed(work: Callable[[], Awaitable[object]]) -> float:
    """Return how long one call of ``work`` took, in seconds."""
    began = time.perf_counter()
    await work()
    return time.perf_counter() - began


async def throughput(store: SeaweedFS, plan: Plan) -> list[str]:
    """Part 1: put and read rates of S3Blobs and the bare client, alternating."""
    data = random.Random(0).randbytes(plan.size_mib * MiB)
    blobs, bare = adapter(store), bare_store(store)
    puts: list[tuple[float, float]] = []
    staged: list[tuple[float, float]] = []
    reads: list[tuple[float, float]] = []
    for run in range(plan.runs):
        # Fresh bytes each run, so no put finds them stored and skips the upload.
        data = data[1:] + bytes([run])
        digest = hashlib.sha256(data).hexdigest()
        key = f"bare/{uuid.uuid4().hex}"

        async def put_bare(key: str = key, data: bytes = data) -> None:
            await obstore.put_async(
                bare,
                key,
                pieces(data),
                chunk_size=PART_SIZE,
                max_concurrency=PARTS_AT_ONCE,
            )

        async def put_adapter(data: bytes = data, digest: str = digest) -> None:
            await blobs.put(SCOPE, "a1", pieces(data), "application/octet-stream", sha256=digest)

        async def put_staged(data: bytes = data) -> None:
            await blobs.put(SCOPE, "a2", pieces(data), "application/octet-stream")

        puts.append((await timed(put_adapter), await timed(put_bare)))
        staged.append((await timed(put_staged), await timed(put_bare)))
        sha = digest

        async def read_bare(key: str = key) -> None:
            result = await obstore.get_async(bare, key)
            async for _ in result.stream(min_chunk_size=MiB):
                pass

        async def read_adapter(sha: str = sha) -> None:
            async for _ in blobs.read(SCOPE, "a1", sha):
                pass

        reads.append((await timed(read_adapter), await timed(read_bare)))
    rows: list[str] = []
    size = f"{plan.size_mib} MiB"
    named = ((f"put {size}", puts), (f"put {size}, no digest (staged)", staged))
    for name, pairs in (*named, (f"read {size}", reads)):
        ours = statistics.median(plan.size_mib / adapter_s for adapter_s, _ in pairs)
        theirs = statistics.median(plan.size_mib / bare_s for _, bare_s in pairs)
        ratio = statistics.median(bare_s / adapter_s for adapter_s, bare_s in pairs)
        rows.append(f"| {name} | {ours:.0f} MiB/s | {theirs:.0f} MiB/s | {ratio:.2f}x |")
    return rows


async def large(store: SeaweedFS, plan: Plan) -> list[str]:
    """Part 2: a large check-in's bytes into S3Blobs and into SqlBlobs on PostgreSQL."""
    size = plan.large_mib * MiB
    blobs = adapter(store)
    # Idle: before the client's first call (its runtime, pools and first upload count).
    idle = resident()
    await blobs.put(SCOPE, "warm", lazily(16 * MiB), "application/octet-stream")
    digest = await digest_of(lazily(size))
    put = blobs.put(SCOPE, "big", lazily(size), "video/mp4", sha256=digest)
    s3_time, s3_peak = await peak_during(put, idle)
    rows = [
        f"| S3Blobs, {plan.large_mib} MiB | {s3_time:.1f} s | "
        f"{size / MiB / s3_time:.0f} MiB/s | {s3_peak / MiB:.0f} MiB |"
    ]
    url = os.environ.get("ARTIFACTR_TEST_POSTGRES_URL")
    if url is None:
        rows.append("| SqlBlobs on PostgreSQL | skipped: ARTIFACTR_TEST_POSTGRES_URL unset | | |")
        return rows
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    admin = create_async_engine(url)
    async with admin.begin() as connection:
        await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = create_async_engine(url, connect_args={"server_settings": {"search_path": schema}})
    try:
        await migrate(engine)
        sql = SqlBlobs(engine)
        idle = resident()
        put = sql.put(SCOPE, "big", lazily(size), "video/mp4")
        pg_time, pg_peak = await peak_during(put, idle)
        rows.append(
            f"| SqlBlobs on PostgreSQL, {plan.large_mib} MiB | {pg_time:.1f} s | "
            f"{size / MiB / pg_time:.0f} MiB/s | {pg_peak / MiB:.0f} MiB |"
        )
        rows.append(f"| S3Blobs' time over PostgreSQL's | {s3_time / pg_time:.2f}x | | |")
    finally:
        await engine.dispose()
        async with admin.begin() as connection:
            await connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()
    return rows


async def small(store: SeaweedFS, plan: Plan) -> list[str]:
    """Part 3: many small puts at a concurrency, per-put latency of each side."""
    documents = [random.Random(n).randbytes(plan.small_kib * 1024) for n in range(plan.small)]
    blobs, bare = adapter(store), bare_store(store)

    async def run(put: Callable[[bytes], Awaitable[object]]) -> list[float]:
        gate = asyncio.Semaphore(plan.concurrency)
        latencies: list[float] = []

        async def one(document: bytes) -> None:
            async with gate:
                began = time.perf_counter()
                await put(document)
                latencies.append(time.perf_counter() - began)

        await asyncio.gather(*(one(document) for document in documents))
        return sorted(latencies)

    async def put_adapter(document: bytes) -> None:
        await blobs.put(SCOPE, "a1", pieces(document), "application/octet-stream")

    async def put_bare(document: bytes) -> None:
        await obstore.put_async(bare, f"small/{uuid.uuid4().hex}", document, mode="create")

    ours, theirs = await run(put_adapter), await run(put_bare)

    def cut(latencies: list[float], share: float) -> float:
        return latencies[min(len(latencies) - 1, int(len(latencies) * share))] * 1000

    return [
        f"| p{int(share * 100)} | {cut(ours, share):.1f} ms | {cut(theirs, share):.1f} ms | "
        f"{cut(ours, share) / cut(theirs, share):.2f}x |"
        for share in (0.5, 0.99)
    ]


async def bench(store: SeaweedFS, plan: Plan) -> None:
    """Run the three parts and print their tables."""
    print(f"SeaweedFS at {store.endpoint}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    # The large put first, while the process is idle: its peak is over that.
    print("\n| a check-in's put | time | rate | peak memory over idle |\n|---|---|---|---|")
    print("\n".join(await large(store, plan)))
    print("\n| throughput | S3Blobs | bare obstore | ratio |\n|---|---|---|---|")
    print("\n".join(await throughput(store, plan)))
    print(
        f"\n| {plan.small} puts of {plan.small_kib} KiB, concurrency {plan.concurrency} "
        "| S3Blobs | bare obstore | ratio |\n|---|---|---|---|"
    )
    print("\n".join(await small(store, plan)))
    elapsed = timedelta(seconds=round(time.perf_counter() - STARTED))
    print(f"\n(done in {elapsed})")


STARTED = time.perf_counter()


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, start a SeaweedFS, run the benchmark, stop it.

    Returns:
        0, or 130 if interrupted (Ctrl-C or SIGTERM), the store stopped all the same.
    """
    arguments = parser().parse_args(argv)
    if arguments.quick:
        plan = Plan(size_mib=16, runs=1, large_mib=24, small=50)
    else:
        plan = Plan(arguments.size_mib, arguments.runs, arguments.large_mib, arguments.small)

    def interrupted(number: int, _: object) -> None:
        raise KeyboardInterrupt(f"signal {number}")

    # A SIGTERM unwinds like Ctrl-C, so the store is stopped and its files removed either way.
    signal.signal(signal.SIGTERM, interrupted)
    try:
        with seaweedfs() as store:
            store.bucket("bench")
            asyncio.run(bench(store, plan))
    except KeyboardInterrupt:
        print("interrupted: the SeaweedFS it started is stopped and its files removed")
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
