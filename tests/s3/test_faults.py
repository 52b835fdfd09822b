"""The store killed (-9) and restarted in the middle of a check-in through NativeFiles.

The check-in fails typed (the store's failure, never a client exception) or succeeds whole; a
retry after the restart is answered once; no revision ever names an object that isn't there; and
what the dead put left (a put-time marker without bytes) is collected after the grace.
"""

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime, timedelta

import obstore
import pytest
from artifactr.workspace import InMemoryStorage

from artifactr.files import InMemoryCheckouts, InMemoryLeases, InMemoryRenders
from artifactr.files.s3 import StoreFailed
from tests.clock import Clock
from tests.documents import build_docx
from tests.s3.test_s3_blobs import bare
from tests.seaweed import SeaweedFS, s3_blobs, seaweedfs
from tests.world import assemble, chunks


async def retried[T](call: Callable[[], Awaitable[T]]) -> T:
    """Call until the store takes it, as a client does on 503: a fresh store may still be slow,
    and every failure meanwhile is typed."""
    for _ in range(30):
        try:
            return await call()
        except StoreFailed:
            await asyncio.sleep(1)
    return await call()


@pytest.fixture
def doomed() -> Iterator[SeaweedFS]:
    """A store of the test's own, to kill."""
    with seaweedfs() as store:
        store.bucket("blobs")
        yield store


@pytest.mark.timeout(180)
@pytest.mark.parametrize("dies_at", [1, 2], ids=["before-its-first-put", "after-its-first-put"])
async def test_a_check_in_whose_store_dies_fails_typed_and_its_retry_is_answered_once(
    doomed: SeaweedFS, dies_at: int
) -> None:
    clock = Clock()
    stamps = 0
    kill_at: int | None = None

    def killing_clock() -> datetime:
        # The store dies as a put stamps its marker: the check-in's first put, or its second
        # (the first one's bytes are then stored, and its retry finds them).
        nonlocal stamps
        stamps += 1
        if stamps == kill_at:
            doomed.kill()
        return clock()

    blobs = s3_blobs(doomed, clock=killing_clock, deadline=10.0)
    world = assemble(
        "s3",
        InMemoryStorage(),
        blobs,
        InMemoryLeases(clock=clock),
        InMemoryCheckouts(),
        InMemoryRenders(),
        clock=clock,
    )
    first = build_docx((("Title", "First"), "Version one."))
    artifact_id = await world.upload(first)
    ws = await world.ws()
    checkout = await world.files.check_out(ws, artifact_id)
    second = build_docx((("Title", "Second"), "Version two, checked in as the store dies."))

    kill_at = stamps + dies_at
    with pytest.raises(StoreFailed) as failed:
        await world.files.check_in(ws, checkout.id, chunks(second))
    assert failed.value.retry_after > 0
    assert (await world.files.manifest(ws, artifact_id))[0] == 1

    doomed.start()
    answer = await retried(lambda: world.files.check_in(ws, checkout.id, chunks(second)))
    assert (answer.status, answer.version) == ("applied", 2)
    again = await retried(lambda: world.files.check_in(ws, checkout.id, chunks(second)))
    assert again == answer

    # Every revision's bytes are there, whole.
    for version, data in [(1, first), (2, second)]:
        read = b"".join([chunk async for chunk in world.files.content(ws, artifact_id, version)])
        assert read == data
        _, manifest = await world.files.manifest(ws, artifact_id, version)
        assert await blobs.stat(world.scope, artifact_id, manifest.content.sha256) is not None

    # What the dead put left goes once the grace has passed, and nothing a revision names.
    assert await world.files.collect(ws, grace=timedelta(hours=1)) == 0
    clock.advance(timedelta(hours=2))
    await world.files.collect(ws, grace=timedelta(hours=1))
    listed = await obstore.list(bare(doomed), prefix=blobs._prefix).collect_async()
    paths = {meta["path"] for meta in listed}
    assert [path for path in paths if path.split(".at/")[0] not in paths] == []
    for version in (1, 2):
        assert b"".join([c async for c in world.files.content(ws, artifact_id, version)])
