"""One streamed 1 GiB body through S3Blobs on SeaweedFS, put and read in flat memory.

Memory is the process's resident set, sampled as the bytes flow (the client's buffers live in
Rust, out of tracemalloc's sight): at most 64 MiB over what it was before, whatever the size.
"""

import asyncio
import hashlib
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from artifactr.workspace import Scope

from tests.seaweed import SeaweedFS, s3_blobs

GiB = 1 << 30
MiB = 1 << 20
SCOPE = Scope(tenant_id="t1", workspace_id="w1")


def resident() -> int:
    """Return the process's resident memory in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


class Peak:
    """Samples resident memory every 10 ms while in use; ``over`` is the peak over the start."""

    def __init__(self) -> None:
        self.start = resident()
        self.peak = self.start
        self._task: asyncio.Task[None] | None = None

    async def _sample(self) -> None:
        while True:
            self.peak = max(self.peak, resident())
            await asyncio.sleep(0.01)

    async def __aenter__(self) -> "Peak":
        self._task = asyncio.create_task(self._sample())
        return self

    async def __aexit__(self, *_: object) -> None:
        assert self._task is not None
        self._task.cancel()
        self.peak = max(self.peak, resident())

    @property
    def over(self) -> int:
        return self.peak - self.start


async def lazily(total: int, piece: int) -> AsyncIterator[bytes]:
    block = random.Random(0).randbytes(piece)
    for _ in range(total // piece):
        yield block


@pytest.mark.timeout(600)
async def test_a_1_gib_body_is_put_and_read_back_streamed_in_flat_memory(
    seaweed: SeaweedFS,
) -> None:
    blobs = s3_blobs(seaweed)
    # Warm the client (its pools, its first multipart upload) before measuring.
    await blobs.put(SCOPE, "warm", lazily(16 * MiB, MiB), "video/mp4")
    async with Peak() as put:
        blob = await blobs.put(SCOPE, "big", lazily(GiB, 256 * 1024), "video/mp4")
    digest, total = hashlib.sha256(), 0
    async with Peak() as read:
        async for chunk in blobs.read(SCOPE, "big", blob.sha256):
            digest.update(chunk)
            total += len(chunk)
    assert (blob.size, total, digest.hexdigest()) == (GiB, GiB, blob.sha256)
    assert put.over < 64 * MiB, f"the put took {put.over / MiB:.0f} MiB more"
    assert read.over < 64 * MiB, f"the read took {read.over / MiB:.0f} MiB more"
    # Nothing names them: both go, and the store is left as it was.
    assert await blobs.collect(SCOPE, set(), before=datetime.now(UTC) + timedelta(hours=1)) == 2
