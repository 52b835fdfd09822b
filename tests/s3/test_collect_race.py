"""Collect racing puts and reads, step by step on a real SeaweedFS (ADR-0024).

Collect never deletes a blob's bytes outright: it copies them aside, deletes the object, looks
at the markers again and puts the bytes back if a put marked them meanwhile. Each test pauses a
collect at one exact step (a hook on its looks at the markers, no timing) and runs a put, a read
or another collect there: no put that returned loses its bytes, and no read of them fails.
The last tests run a put's two steps (its marker, its create) in every order among collect's,
for a small put and for a large one whose digest is given (no staging: a look for the object,
its parts sent, then its marker once the digest matched, then the upload's completion; or, if
the object is there, its marker and a second look); and a large put that stalls past the grace
halfway, whose put time is its end.
"""

import asyncio
import hashlib
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta

import obstore
import pytest
from artifactr.workspace import Scope

from artifactr.files.core.manifests import Blob
from artifactr.files.s3 import S3Blobs
from artifactr.files.s3.blobs import SINGLE_PUT
from tests.clock import Clock
from tests.s3.test_s3_blobs import bare, keys, prefix_of, stream
from tests.seaweed import ACCESS_KEY, SECRET_KEY, SeaweedFS, s3_blobs

SCOPE = Scope(tenant_id="t/1", workspace_id="w 1")
HOUR = timedelta(hours=1)
BYTES = b"bytes a put and a collect both want"
LARGE = bytes(range(256)) * ((SINGLE_PUT + 3 * 256) // 256)
"""Bytes past one request: a put given their digest sends them in parts to their key."""


class Stepped(S3Blobs):
    """S3Blobs that stops just before or after one look of collect at the markers.

    It also runs a hook after a read lists the copies set aside.
    """

    def __init__(
        self, blobs: S3Blobs, seaweed: SeaweedFS, clock: Clock, pause_at: int, *, after: bool
    ) -> None:
        super().__init__(
            "blobs",
            prefix=prefix_of(blobs),
            endpoint_url=seaweed.endpoint,
            region="us-east-1",
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
            clock=clock,
        )
        self.pause_at = pause_at
        self.after = after
        self.looks = 0
        self.paused = asyncio.Event()
        self.go = asyncio.Event()
        self.listed_aside: Callable[[], Awaitable[None]] | None = None

    async def _marked_since(self, key: str, cutoff: int) -> bool:
        self.looks += 1
        if self.looks == self.pause_at and not self.after:
            await self._pause()
        marked = await super()._marked_since(key, cutoff)
        if self.looks == self.pause_at and self.after:
            await self._pause()
        return marked

    async def _pause(self) -> None:
        self.paused.set()
        await self.go.wait()

    async def _set_aside(self, key: str) -> list[str]:
        copies = await super()._set_aside(key)
        if self.listed_aside is not None:
            await self.listed_aside()
        return copies


async def old_blob(seaweed: SeaweedFS, clock: Clock, data: bytes = BYTES) -> tuple[S3Blobs, str]:
    """Store the bytes two hours ago; return the blobs and the digest."""
    blobs = s3_blobs(seaweed, clock=clock)
    blob = await blobs.put(SCOPE, "a1", stream(data), "text/plain")
    clock.now += 2 * HOUR
    return blobs, blob.sha256


def key_of(blobs: S3Blobs, sha256: str) -> str:
    return f"{prefix_of(blobs)}t%2F1/w%201/a1/{sha256}"


async def aside(seaweed: SeaweedFS, key: str) -> list[str]:
    """The copies of a blob's bytes set aside."""
    listed = await keys(seaweed, key.rsplit("/", 1)[0])
    return [path for path in listed if path.startswith(f"{key}.gone/")]


async def paused(
    blobs: S3Blobs, seaweed: SeaweedFS, clock: Clock, pause_at: int, *, after: bool
) -> tuple[Stepped, asyncio.Task[int]]:
    """Start a collect of everything older than an hour; return once it paused at the step."""
    collecting = Stepped(blobs, seaweed, clock, pause_at, after=after)
    collect = asyncio.create_task(collecting.collect(SCOPE, set(), before=clock.now - HOUR))
    await asyncio.wait_for(collecting.paused.wait(), 30)
    return collecting, collect


async def test_a_put_between_collects_look_and_its_delete_keeps_its_bytes(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    blobs, sha256 = await old_blob(seaweed, clock)
    # Collect has seen only the old marker and is about to remove the bytes: a put of the same
    # bytes marks them now, finds the object there and returns.
    collecting, collect = await paused(blobs, seaweed, clock, pause_at=1, after=True)
    await blobs.put(SCOPE, "a1", stream(BYTES), "text/plain")
    collecting.go.set()
    assert await collect == 0
    assert await blobs.get(SCOPE, "a1", sha256) == BYTES
    assert await aside(seaweed, key_of(blobs, sha256)) == []
    # A later collect, with the put older than the grace, removes them as it should.
    clock.now += 2 * HOUR
    assert await blobs.collect(SCOPE, set(), before=clock.now - HOUR) == 1
    assert await blobs.get(SCOPE, "a1", sha256) is None


async def test_reads_between_collects_delete_and_its_second_look_find_the_bytes_set_aside(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    blobs, sha256 = await old_blob(seaweed, clock)
    collecting, collect = await paused(blobs, seaweed, clock, pause_at=2, after=False)
    # The object is deleted, its copy set aside: reads are served from the copy.
    assert key_of(blobs, sha256) not in await keys(seaweed, prefix_of(blobs))
    assert len(await aside(seaweed, key_of(blobs, sha256))) == 1
    assert await blobs.get(SCOPE, "a1", sha256) == BYTES
    stat = await blobs.stat(SCOPE, "a1", sha256)
    assert stat is not None
    assert stat.size == len(BYTES)
    collecting.go.set()
    # No put came: the blob is removed, copy and markers with it.
    assert await collect == 1
    assert await blobs.get(SCOPE, "a1", sha256) is None
    assert await keys(seaweed, prefix_of(blobs)) == []


async def test_a_put_between_collects_delete_and_its_second_look_keeps_its_bytes(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    blobs, sha256 = await old_blob(seaweed, clock)
    collecting, collect = await paused(blobs, seaweed, clock, pause_at=2, after=False)
    # The put finds no object and creates it; collect then sees its marker and keeps it.
    await blobs.put(SCOPE, "a1", stream(BYTES), "text/plain")
    collecting.go.set()
    assert await collect == 0
    assert await blobs.get(SCOPE, "a1", sha256) == BYTES
    assert await aside(seaweed, key_of(blobs, sha256)) == []


async def test_a_read_whose_copy_went_back_meanwhile_reads_the_object_again(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    blobs, sha256 = await old_blob(seaweed, clock)
    collecting, collect = await paused(blobs, seaweed, clock, pause_at=2, after=False)

    async def collect_finishes() -> None:
        # Between the read's listing of the copy and its asking for it, a put marks the bytes
        # and collect puts them back and deletes its copy.
        await blobs.put(SCOPE, "a1", stream(BYTES), "text/plain")
        collecting.go.set()
        assert await collect == 0

    reading = Stepped(blobs, seaweed, clock, pause_at=0, after=False)
    reading.listed_aside = collect_finishes
    assert await reading.get(SCOPE, "a1", sha256) == BYTES


async def test_a_collect_whose_blob_another_collect_removed_meanwhile_leaves_it_be(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    blobs, _ = await old_blob(seaweed, clock)
    collecting, collect = await paused(blobs, seaweed, clock, pause_at=1, after=True)
    assert await blobs.collect(SCOPE, set(), before=clock.now - HOUR) == 1
    collecting.go.set()
    assert await collect == 0
    assert await keys(seaweed, prefix_of(blobs)) == []


async def test_bytes_a_collect_set_aside_before_it_died_are_read_and_put_back(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    blobs, sha256 = await old_blob(seaweed, clock)
    other = await blobs.put(SCOPE, "a1", stream(b"other bytes"), "text/plain")
    store = bare(seaweed)
    key = key_of(blobs, sha256)
    # One collect died three hours ago with the bytes set aside; one is setting others aside now.
    died = f"{key}.gone/{0:020d}-died"
    await obstore.copy_async(store, key, died)
    await obstore.delete_async(store, key)
    running = f"{key_of(blobs, other.sha256)}.gone/{99999999999999999999}-running"
    await obstore.copy_async(store, key_of(blobs, other.sha256), running)
    assert await blobs.get(SCOPE, "a1", sha256) == BYTES
    assert await blobs.collect(SCOPE, set(), before=clock.now - HOUR) == 0
    # The died one's copy went back; the running one's copy is its own to finish.
    assert await aside(seaweed, key) == []
    assert (await obstore.head_async(store, key))["size"] == len(BYTES)
    assert await aside(seaweed, key_of(blobs, other.sha256)) == [running]


class Steps(S3Blobs):
    """S3Blobs that stops at every step a test names: a collect's four, a put's marker."""

    def __init__(self, blobs: S3Blobs, seaweed: SeaweedFS, clock: Clock) -> None:
        super().__init__(
            "blobs",
            prefix=prefix_of(blobs),
            endpoint_url=seaweed.endpoint,
            region="us-east-1",
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
            clock=clock,
        )
        self.reached = [asyncio.Event() for _ in range(5)]
        self.go = [asyncio.Event() for _ in range(5)]
        self.looks = 0

    async def _step(self, at: int) -> None:
        self.reached[at].set()
        await self.go[at].wait()

    async def _marked_since(self, key: str, cutoff: int) -> bool:
        self.looks += 1
        await self._step(2 * self.looks - 2)
        marked = await super()._marked_since(key, cutoff)
        await self._step(2 * self.looks - 1)
        return marked

    async def _mark(self, key: str, media_type: str) -> None:
        await super()._mark(key, media_type)
        await self._step(4)


GAPS = ["before L1", "L1..delete", "delete..L2", "L2..end", "after"]


@pytest.mark.parametrize("size", ["small", "large"])
@pytest.mark.parametrize(
    ("marked", "created"),
    [(w, c) for w in range(len(GAPS)) for c in range(w, len(GAPS))],
    ids=lambda gap: GAPS[gap].replace(" ", "-"),
)
async def test_a_put_marking_and_creating_at_any_step_of_collect_keeps_its_bytes(
    seaweed: SeaweedFS, marked: int, created: int, size: str
) -> None:
    # A large put is given its digest, as a check-in's spool gives it. It looks for the object
    # first: if it is there, it marks it (in the gap `marked`) and looks again (in `created`);
    # if not, it sends its parts, marks the bytes once the digest matched (`marked`) and
    # completes the upload (`created`).
    data, given = (BYTES, None) if size == "small" else (LARGE, hashlib.sha256(LARGE).hexdigest())
    clock = Clock()
    blobs, sha256 = await old_blob(seaweed, clock, data)
    collecting = Steps(blobs, seaweed, clock)
    putting = Steps(blobs, seaweed, clock)
    collect = asyncio.create_task(collecting.collect(SCOPE, set(), before=clock.now - HOUR))
    put: asyncio.Task[Blob] | None = None
    # The put writes its marker in the gap `marked`, and creates (or finds) the object in the
    # gap `created`, between collect's steps: before its first look, between that look and its
    # delete, between its delete and its second look, after that look, or once it is done.
    for gap in range(len(GAPS)):
        # A collect that kept the blob at its first look takes no further step.
        step = asyncio.ensure_future(collecting.reached[min(gap, 3)].wait())
        await asyncio.wait([step, collect], timeout=30, return_when=asyncio.FIRST_COMPLETED)
        step.cancel()
        if gap == len(GAPS) - 1:
            await collect
        if gap == marked:
            put = asyncio.create_task(
                putting.put(SCOPE, "a1", stream(data), "text/plain", sha256=given)
            )
            await asyncio.wait_for(putting.reached[4].wait(), 30)
        if gap == created:
            assert put is not None
            putting.go[4].set()
            assert (await put).sha256 == sha256
        if gap < len(GAPS) - 1:
            collecting.go[gap].set()
    await collect
    assert await blobs.get(SCOPE, "a1", sha256) == data
    assert await aside(seaweed, key_of(blobs, sha256)) == []


async def test_a_large_put_that_stalls_past_the_grace_midway_is_marked_as_it_ends(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    blobs = s3_blobs(seaweed, clock=clock)
    sha256 = hashlib.sha256(LARGE).hexdigest()
    halfway, resume = asyncio.Event(), asyncio.Event()

    async def stalling() -> AsyncIterator[bytes]:
        half = len(LARGE) // 2
        async for piece in stream(LARGE[:half]):
            yield piece
        halfway.set()
        await resume.wait()
        async for piece in stream(LARGE[half:]):
            yield piece

    put = asyncio.create_task(blobs.put(SCOPE, "a1", stalling(), "text/plain", sha256=sha256))
    await asyncio.wait_for(halfway.wait(), 30)
    # Halfway through, the put stalls for two hours, and a collect runs: nothing is there yet.
    clock.now += 2 * HOUR
    assert await blobs.collect(SCOPE, set(), before=clock.now - HOUR) == 0
    resume.set()
    assert (await put).sha256 == sha256
    # Its put time is when it ended, not when it began: a collect within the grace keeps it.
    assert await blobs.collect(SCOPE, set(), before=clock.now - HOUR) == 0
    assert await blobs.get(SCOPE, "a1", sha256) == LARGE
