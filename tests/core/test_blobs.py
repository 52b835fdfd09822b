"""Blobs and renders: one contract suite over memory, SQLite, PostgreSQL and S3, then SQL's own.

Every adapter (S3's on a real SeaweedFS, :mod:`tests.seaweed`) must keep scopes apart, put
idempotently (refreshing the put time), honour a limit, stream a multi-chunk blob, and collect
only old, unreferenced blobs. The SQL adapters must also keep a half-finished put invisible and
collectable, hold no transaction while the caller's stream is slow, survive cancellation, and
put a large file in flat memory. S3's own behaviour is in ``tests/s3``.
"""

import asyncio
import hashlib
import random
import tracemalloc
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from artifactr.core import InvalidState, NotFound
from artifactr.workspace import Scope
from sqlalchemy import delete, event, func, select
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files import FileTooLarge, InMemoryBlobs, InMemoryRenders, RenderKey
from artifactr.files.core.blobs import CHUNK_SIZE, Blobs
from artifactr.files.core.manifests import Blob
from artifactr.files.core.renders import Renders
from artifactr.files.sql import SqlBlobs, SqlRenders, migrate
from artifactr.files.sql import blobs as sql_blobs
from artifactr.files.sql.blobs import LINGER, TRANSACTION_ROWS
from artifactr.files.sql.tables import BlobRow, ChunkRow
from tests.clock import Clock
from tests.databases import BACKENDS, sql_engine
from tests.seaweed import SeaweedFS, s3_blobs

SCOPE = Scope(tenant_id="t1", workspace_id="w1")
BLOB_BACKENDS = [*BACKENDS, "s3"]
"""Every blob store the contract runs on."""
MiB = 1 << 20
HOUR = timedelta(hours=1)


@dataclass
class Store:
    backend: str
    blobs: Blobs
    renders: Renders
    clock: Clock


@pytest.fixture(params=BLOB_BACKENDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    clock = Clock()
    if request.param == "memory":
        yield Store("memory", InMemoryBlobs(clock=clock), InMemoryRenders(), clock)
        return
    if request.param == "s3":
        # The render cache stays in the database (ADR-0024): the memory one stands in here.
        seaweed: SeaweedFS = request.getfixturevalue("seaweed")
        yield Store("s3", s3_blobs(seaweed, clock=clock), InMemoryRenders(), clock)
        return
    async with sql_engine(request.param, tmp_path) as engine:
        await migrate(engine)
        yield Store(request.param, SqlBlobs(engine, clock=clock), SqlRenders(engine), clock)


@pytest.fixture
async def migrated(engine: AsyncEngine) -> AsyncEngine:
    await migrate(engine)
    return engine


def noise(size: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(size)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def stream(data: bytes, piece: int = 64 * 1024) -> AsyncIterator[bytes]:
    for start in range(0, len(data), piece):
        yield data[start : start + piece]


async def read_all(blobs: Blobs, scope: Scope, artifact_id: str, digest: str) -> list[bytes]:
    return [chunk async for chunk in blobs.read(scope, artifact_id, digest)]


async def count(engine: AsyncEngine, model: type[BlobRow] | type[ChunkRow]) -> int:
    async with engine.connect() as connection:
        return await connection.scalar(select(func.count()).select_from(model)) or 0


async def written(engine: AsyncEngine, chunks: int) -> None:
    """Wait until a put in progress has committed ``chunks`` chunk rows."""
    for _ in range(1000):
        if await count(engine, ChunkRow) >= chunks:
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"the put wrote fewer than {chunks} chunks in 10 s")


# ─── every adapter ────────────────────────────────────────────────────────────


async def test_a_put_returns_the_digest_size_and_media_type_and_get_returns_the_bytes(
    store: Store,
) -> None:
    data = noise(100_000)
    blob = await store.blobs.put(SCOPE, "a1", stream(data, 7_000), "text/plain")
    assert (blob.sha256, blob.size, blob.media_type) == (sha(data), len(data), "text/plain")
    assert await store.blobs.get(SCOPE, "a1", blob.sha256) == data
    assert b"".join(await read_all(store.blobs, SCOPE, "a1", blob.sha256)) == data


async def test_an_empty_blob_round_trips_with_no_chunks(store: Store) -> None:
    blob = await store.blobs.put(SCOPE, "a1", stream(b""), "text/plain")
    assert (blob.sha256, blob.size) == (sha(b""), 0)
    assert await store.blobs.get(SCOPE, "a1", blob.sha256) == b""
    assert await read_all(store.blobs, SCOPE, "a1", blob.sha256) == []


async def test_a_multi_chunk_blob_streams_back_in_chunks_of_at_most_chunk_size(
    store: Store,
) -> None:
    data = noise(3 * MiB + MiB // 2)
    blob = await store.blobs.put(SCOPE, "a1", stream(data, 300_000), "application/octet-stream")
    chunks = await read_all(store.blobs, SCOPE, "a1", blob.sha256)
    assert [len(chunk) for chunk in chunks] == [CHUNK_SIZE] * 3 + [MiB // 2]
    assert b"".join(chunks) == data


async def test_pieces_larger_than_a_chunk_are_split_into_chunks(store: Store) -> None:
    data = noise(5 * MiB + 3)
    blob = await store.blobs.put(SCOPE, "a1", stream(data, 5 * MiB), "application/octet-stream")
    chunks = await read_all(store.blobs, SCOPE, "a1", blob.sha256)
    assert [len(chunk) for chunk in chunks] == [CHUNK_SIZE] * 5 + [3]
    assert await store.blobs.get(SCOPE, "a1", blob.sha256) == data


async def test_putting_the_same_bytes_again_returns_the_same_blob_and_refreshes_its_put_time(
    store: Store,
) -> None:
    data = noise(2 * MiB + 5)
    first = await store.blobs.put(SCOPE, "a1", stream(data), "text/plain")
    store.clock.now += 3 * HOUR
    again = await store.blobs.put(SCOPE, "a1", stream(data, MiB), "text/plain")
    assert again == first
    # Put three hours later, so a cutoff two hours after the first put keeps it.
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now - HOUR) == 0
    assert await store.blobs.get(SCOPE, "a1", first.sha256) == data
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now + HOUR) == 1
    assert await store.blobs.get(SCOPE, "a1", first.sha256) is None


async def test_the_last_put_of_the_same_bytes_names_their_media_type(store: Store) -> None:
    await store.blobs.put(SCOPE, "a1", stream(b"{}"), "text/plain")
    again = await store.blobs.put(SCOPE, "a1", stream(b"{}"), "application/json")
    assert again.media_type == "application/json"


async def test_concurrent_puts_of_the_same_bytes_store_one_blob(store: Store) -> None:
    data = noise(3 * MiB)
    puts = [store.blobs.put(SCOPE, "a1", stream(data, MiB), "text/plain") for _ in range(4)]
    blobs = await asyncio.gather(*puts)
    assert len(set(blobs)) == 1
    assert await store.blobs.get(SCOPE, "a1", blobs[0].sha256) == data
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now + HOUR) == 1


async def test_put_many_stores_each_blob_as_put_would_in_order(store: Store) -> None:
    big, text, empty = noise(2 * MiB + 7), "été".encode(), b""
    items = [(big, "application/octet-stream"), (text, "text/plain"), (empty, "text/plain")]
    blobs = await store.blobs.put_many(SCOPE, "a1", items)
    assert blobs == [
        await store.blobs.put(SCOPE, "a1", stream(data), media) for data, media in items
    ]
    assert [await store.blobs.get(SCOPE, "a1", blob.sha256) for blob in blobs] == [big, text, b""]
    chunks = await read_all(store.blobs, SCOPE, "a1", blobs[0].sha256)
    assert [len(chunk) for chunk in chunks] == [CHUNK_SIZE] * 2 + [7]
    assert await read_all(store.blobs, SCOPE, "a1", blobs[2].sha256) == []


async def test_put_many_of_stored_or_repeated_bytes_keeps_one_copy_and_refreshes_it(
    store: Store,
) -> None:
    data = noise(MiB + 1)
    first = await store.blobs.put(SCOPE, "a1", stream(data), "text/plain")
    store.clock.now += 3 * HOUR
    again = await store.blobs.put_many(SCOPE, "a1", [(data, "text/plain"), (data, "text/csv")])
    assert [blob.sha256 for blob in again] == [first.sha256] * 2
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now - HOUR) == 0
    assert await store.blobs.get(SCOPE, "a1", first.sha256) == data
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now + HOUR) == 1
    assert await store.blobs.put_many(SCOPE, "a1", []) == []


async def test_concurrent_put_manys_of_the_same_bytes_store_one_blob(store: Store) -> None:
    data = noise(2 * MiB)
    puts = [store.blobs.put_many(SCOPE, "a1", [(data, "text/plain")]) for _ in range(4)]
    stored = await asyncio.gather(*puts)
    assert len({blob for [blob] in stored}) == 1
    assert await store.blobs.get(SCOPE, "a1", sha(data)) == data
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now + HOUR) == 1


@pytest.mark.parametrize(
    "other",
    [
        Scope(tenant_id="t2", workspace_id="w1"),
        Scope(tenant_id="t1", workspace_id="w2"),
    ],
    ids=["tenant", "workspace"],
)
async def test_a_blob_is_never_returned_for_another_scope_even_with_the_same_digest(
    store: Store, other: Scope
) -> None:
    blob = await store.blobs.put(SCOPE, "a1", stream(b"secret"), "text/plain")
    assert await store.blobs.get(other, "a1", blob.sha256) is None
    with pytest.raises(NotFound):
        await read_all(store.blobs, other, "a1", blob.sha256)
    # The other scope's own copy is its own: collecting it leaves the first.
    await store.blobs.put(other, "a1", stream(b"secret"), "text/plain")
    assert await store.blobs.collect(other, set(), before=store.clock.now + HOUR) == 1
    assert await store.blobs.get(SCOPE, "a1", blob.sha256) == b"secret"


async def test_a_blob_is_never_returned_for_another_artifact_even_with_the_same_digest(
    store: Store,
) -> None:
    blob = await store.blobs.put(SCOPE, "a1", stream(b"secret"), "text/plain")
    assert await store.blobs.get(SCOPE, "a2", blob.sha256) is None
    with pytest.raises(NotFound):
        await read_all(store.blobs, SCOPE, "a2", blob.sha256)


async def test_stat_reports_the_stored_size_and_last_media_type_and_none_when_missing(
    store: Store,
) -> None:
    data = noise(2 * MiB + 1)
    blob = await store.blobs.put(SCOPE, "a1", stream(data), "text/plain")
    await store.blobs.put(SCOPE, "a1", stream(data), "text/csv")
    assert await store.blobs.stat(SCOPE, "a1", blob.sha256) == blob.model_copy(
        update={"media_type": "text/csv"}
    )
    assert await store.blobs.stat(SCOPE, "a2", blob.sha256) is None
    assert await store.blobs.stat(SCOPE, "a1", "0" * 64) is None


async def test_reading_a_missing_blob_raises_not_found_on_the_first_iteration(
    store: Store,
) -> None:
    chunks = store.blobs.read(SCOPE, "a1", "0" * 64)
    with pytest.raises(NotFound) as raised:
        await anext(chunks)
    assert raised.value.details() == {"entity": "blob", "id": "0" * 64}
    assert await store.blobs.get(SCOPE, "a1", "0" * 64) is None


@pytest.mark.parametrize("size", [10, 3 * MiB], ids=["small", "multi-chunk"])
async def test_more_bytes_than_the_limit_raise_and_store_nothing(store: Store, size: int) -> None:
    data = noise(size + 1)
    with pytest.raises(FileTooLarge) as raised:
        await store.blobs.put(SCOPE, "a1", stream(data, MiB // 4), "text/plain", limit=size)
    assert raised.value.limit == size
    assert await store.blobs.get(SCOPE, "a1", sha(data)) is None
    assert await store.blobs.get(SCOPE, "a1", sha(data[:size])) is None
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now + HOUR) == 0


async def test_exactly_the_limit_is_allowed(store: Store) -> None:
    blob = await store.blobs.put(SCOPE, "a1", stream(b"12345"), "text/plain", limit=5)
    assert blob.size == 5


async def test_a_stream_that_fails_stores_nothing_and_its_error_passes_through(
    store: Store,
) -> None:
    async def broken() -> AsyncIterator[bytes]:
        yield noise(3 * MiB)
        raise ConnectionResetError("the client went away")

    with pytest.raises(ConnectionResetError):
        await store.blobs.put(SCOPE, "a1", broken(), "text/plain")
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now + HOUR) == 0


@pytest.mark.parametrize("size", [100_000, 9 * MiB + 5], ids=["small", "past-one-request"])
async def test_a_put_given_its_digest_stores_the_bytes_under_it_once(
    store: Store, size: int
) -> None:
    data = noise(size, seed=3)
    given = sha(data)
    puts = [
        store.blobs.put(SCOPE, "a1", stream(data, MiB), "video/mp4", sha256=given) for _ in range(2)
    ]
    first, second = await asyncio.gather(*puts)
    assert first == second == Blob(sha256=given, size=size, media_type="video/mp4")
    assert await store.blobs.get(SCOPE, "a1", given) == data
    # Put again three hours later, given its digest or not: the same blob, its put time new.
    store.clock.now += 3 * HOUR
    again = await store.blobs.put(SCOPE, "a1", stream(data, MiB), "text/plain", sha256=given)
    assert again == first.model_copy(update={"media_type": "text/plain"})
    assert await store.blobs.put(SCOPE, "a1", stream(data, MiB), "text/plain") == again
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now - HOUR) == 0
    assert await store.blobs.stat(SCOPE, "a1", given) == again
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now + HOUR) == 1


@pytest.mark.parametrize("size", [100_000, 9 * MiB + 5], ids=["small", "past-one-request"])
async def test_a_put_given_another_digest_is_refused_and_stores_nothing(
    store: Store, size: int
) -> None:
    data, other = noise(size, seed=4), noise(size, seed=5)
    with pytest.raises(InvalidState, match="not to the digest they were given"):
        await store.blobs.put(SCOPE, "a1", stream(data, MiB), "text/plain", sha256=sha(other))
    assert await store.blobs.stat(SCOPE, "a1", sha(other)) is None
    assert await store.blobs.stat(SCOPE, "a1", sha(data)) is None
    # Nor do bytes claiming the digest of bytes stored pass for them.
    stored = await store.blobs.put(SCOPE, "a1", stream(other, MiB), "text/plain")
    with pytest.raises(InvalidState, match="not to the digest they were given"):
        await store.blobs.put(SCOPE, "a1", stream(data, MiB), "text/plain", sha256=sha(other))
    assert await store.blobs.get(SCOPE, "a1", stored.sha256) == other
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now + HOUR) == 1


async def test_put_many_of_bytes_past_one_request_stores_them_under_their_digest(
    store: Store,
) -> None:
    large, small = noise(9 * MiB + 1, seed=6), b"small"
    blobs = await store.blobs.put_many(SCOPE, "a1", [(large, "video/mp4"), (small, "text/plain")])
    assert [(blob.sha256, blob.size) for blob in blobs] == [
        (sha(large), len(large)),
        (sha(small), len(small)),
    ]
    assert await store.blobs.get(SCOPE, "a1", sha(large)) == large


async def test_collect_removes_only_unreferenced_blobs_put_before_the_cutoff(
    store: Store,
) -> None:
    kept = await store.blobs.put(SCOPE, "a1", stream(b"referenced"), "text/plain")
    old = await store.blobs.put(SCOPE, "a1", stream(b"orphan"), "text/plain")
    same_digest = await store.blobs.put(SCOPE, "a2", stream(b"referenced"), "text/plain")
    store.clock.now += 2 * HOUR
    young = await store.blobs.put(SCOPE, "a1", stream(b"just put"), "text/plain")

    removed = await store.blobs.collect(SCOPE, {("a1", kept.sha256)}, before=store.clock.now - HOUR)

    assert removed == 2
    assert await store.blobs.get(SCOPE, "a1", kept.sha256) == b"referenced"
    assert await store.blobs.get(SCOPE, "a1", young.sha256) == b"just put"
    assert await store.blobs.get(SCOPE, "a1", old.sha256) is None
    # A reference names an artifact's blob, never the digest alone.
    assert await store.blobs.get(SCOPE, "a2", same_digest.sha256) is None


async def test_collect_touches_only_its_own_scope(store: Store) -> None:
    other = Scope(tenant_id="t1", workspace_id="w2")
    blob = await store.blobs.put(other, "a1", stream(b"elsewhere"), "text/plain")
    assert await store.blobs.collect(SCOPE, set(), before=store.clock.now + HOUR) == 0
    assert await store.blobs.get(other, "a1", blob.sha256) == b"elsewhere"


def key(**changes: object) -> RenderKey:
    fields: dict[str, object] = {
        "tenant_id": "t1",
        "workspace_id": "w1",
        "artifact_id": "a1",
        "sha256": "a" * 64,
        "page": 1,
        "scale": 1.5,
        "build": "wc-1",
    }
    return RenderKey(**(fields | changes))


async def test_a_render_is_cached_and_replaced_under_its_whole_key(store: Store) -> None:
    assert await store.renders.get(key()) is None
    await store.renders.put(key(), b"png-1")
    await store.renders.put(key(), b"png-2")
    assert await store.renders.get(key()) == b"png-2"


async def test_a_render_is_never_returned_under_a_key_that_differs_in_any_part(
    store: Store,
) -> None:
    await store.renders.put(key(), b"png")
    changes: list[dict[str, object]] = [
        {"tenant_id": "t2"},
        {"workspace_id": "w2"},
        {"artifact_id": "a2"},
        {"sha256": "b" * 64},
        {"page": 2},
        {"scale": 2.0},
        {"build": "wc-2"},
    ]
    assert [await store.renders.get(key(**change)) for change in changes] == [None] * 7


# ─── SQL only ─────────────────────────────────────────────────────────────────


class Stall:
    """A stream that sends some bytes, then waits until it is let go, then sends the rest."""

    def __init__(self, first: bytes, rest: bytes) -> None:
        self.first, self.rest = first, rest
        self.waiting = asyncio.Event()
        self.go = asyncio.Event()

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for piece in stream(self.first, MiB):
            yield piece
        # Asked for more: every full batch before this one is written.
        self.waiting.set()
        await self.go.wait()
        async for piece in stream(self.rest, MiB):
            yield piece


async def test_a_half_finished_put_is_invisible_and_holds_no_transaction(
    migrated: AsyncEngine,
) -> None:
    blobs = SqlBlobs(migrated)
    stall = Stall(noise(4 * MiB), noise(MiB, seed=1))
    put = asyncio.create_task(blobs.put(SCOPE, "a1", stall, "text/plain"))
    await stall.waiting.wait()
    await written(migrated, 4)

    # SQLite has one connection: a put holding a transaction here would block these.
    assert await blobs.get(SCOPE, "a1", sha(stall.first)) is None
    other = await asyncio.wait_for(blobs.put(SCOPE, "a2", stream(b"x"), "text/plain"), 30)
    assert await blobs.get(SCOPE, "a2", other.sha256) == b"x"

    stall.go.set()
    blob = await put
    assert await blobs.get(SCOPE, "a1", blob.sha256) == stall.first + stall.rest


async def test_a_stalled_put_is_collected_once_older_than_the_cutoff_and_then_fails(
    migrated: AsyncEngine,
) -> None:
    clock = Clock()
    blobs = SqlBlobs(migrated, clock=clock)
    stall = Stall(noise(4 * MiB), noise(MiB, seed=1))
    put = asyncio.create_task(blobs.put(SCOPE, "a1", stall, "text/plain"))
    await stall.waiting.wait()
    await written(migrated, 4)

    assert await blobs.collect(SCOPE, set(), before=clock.now) == 0
    assert await count(migrated, BlobRow) == 1
    # Abandoned uploads are removed but not counted as blobs.
    assert await blobs.collect(SCOPE, set(), before=clock.now + HOUR) == 0
    assert (await count(migrated, BlobRow), await count(migrated, ChunkRow)) == (0, 0)

    stall.go.set()
    with pytest.raises(InvalidState, match="was collected"):
        await put
    assert (await count(migrated, BlobRow), await count(migrated, ChunkRow)) == (0, 0)


async def test_a_fast_stream_is_written_in_few_transactions_of_bounded_size(
    migrated: AsyncEngine,
) -> None:
    blobs = SqlBlobs(migrated)
    data = noise((TRANSACTION_ROWS + 8) * MiB)
    with Commits(migrated) as commits:
        blob = await blobs.put(SCOPE, "a1", stream(data, MiB), "text/plain")
    # The first transaction stops at the cap; the second writes the rest and names the blob.
    assert commits.count == 2
    assert await blobs.get(SCOPE, "a1", blob.sha256) == data


class Commits:
    """Counts the engine's commits while in use."""

    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.count = 0

    def committed(self, connection: object) -> None:
        del connection
        self.count += 1

    def __enter__(self) -> "Commits":
        event.listen(self.engine.sync_engine, "commit", self.committed)
        return self

    def __exit__(self, *_: object) -> None:
        event.remove(self.engine.sync_engine, "commit", self.committed)


async def test_a_stream_that_ends_within_a_row_is_put_in_one_transaction(
    migrated: AsyncEngine,
) -> None:
    blobs = SqlBlobs(migrated)
    data = noise(MiB)
    with Commits(migrated) as commits:
        blob = await blobs.put(SCOPE, "a1", stream(data), "text/plain")
        again = await blobs.put(SCOPE, "a1", stream(data), "text/plain")
        empty = await blobs.put(SCOPE, "a1", stream(b""), "text/plain")
    assert commits.count == 3
    assert (blob, await blobs.get(SCOPE, "a1", blob.sha256)) == (again, data)
    assert await blobs.get(SCOPE, "a1", empty.sha256) == b""
    assert (await count(migrated, BlobRow), await count(migrated, ChunkRow)) == (2, 1)


async def test_put_many_is_one_transaction_and_stores_new_bytes_once(
    migrated: AsyncEngine,
) -> None:
    blobs = SqlBlobs(migrated)
    data = noise(3 * MiB)
    with Commits(migrated) as commits:
        await blobs.put_many(SCOPE, "a1", [(data, "text/plain"), (b"x", "text/plain")])
        await blobs.put_many(SCOPE, "a1", [(data, "text/plain"), (data, "text/plain")])
    assert commits.count == 2
    assert (await count(migrated, BlobRow), await count(migrated, ChunkRow)) == (2, 4)


async def test_a_one_row_stream_slower_than_the_linger_is_still_stored(
    migrated: AsyncEngine,
) -> None:
    async def slow() -> AsyncIterator[bytes]:
        yield b"first"
        await asyncio.sleep(LINGER * 3)
        yield b" and last"

    blobs = SqlBlobs(migrated)
    blob = await blobs.put(SCOPE, "a1", slow(), "text/plain")
    assert await blobs.get(SCOPE, "a1", blob.sha256) == b"first and last"


@pytest.mark.parametrize(("rows", "transactions"), [(4, 1), (5, 2)])
async def test_a_stream_that_ends_at_the_cap_is_named_in_the_same_transaction(
    migrated: AsyncEngine, monkeypatch: pytest.MonkeyPatch, rows: int, transactions: int
) -> None:
    monkeypatch.setattr(sql_blobs, "TRANSACTION_ROWS", 4)
    blobs = SqlBlobs(migrated)
    data = noise(rows * MiB)
    with Commits(migrated) as commits:
        blob = await blobs.put(SCOPE, "a1", stream(data, MiB), "text/plain")
    assert commits.count == transactions
    assert await blobs.get(SCOPE, "a1", blob.sha256) == data


async def test_a_put_that_fails_leaves_no_rows(migrated: AsyncEngine) -> None:
    blobs = SqlBlobs(migrated)
    with pytest.raises(FileTooLarge):
        await blobs.put(SCOPE, "a1", stream(noise(9 * MiB)), "text/plain", limit=8 * MiB)
    assert (await count(migrated, BlobRow), await count(migrated, ChunkRow)) == (0, 0)


async def test_a_duplicate_put_leaves_one_copy_of_the_chunks(migrated: AsyncEngine) -> None:
    blobs = SqlBlobs(migrated)
    data = noise(6 * MiB)
    await blobs.put(SCOPE, "a1", stream(data), "text/plain")
    await blobs.put(SCOPE, "a1", stream(data), "text/plain")
    assert (await count(migrated, BlobRow), await count(migrated, ChunkRow)) == (1, 6)


async def test_cancelling_a_put_stores_nothing_and_leaves_the_database_usable(
    migrated: AsyncEngine,
) -> None:
    blobs = SqlBlobs(migrated)
    stall = Stall(noise(4 * MiB), b"")
    put = asyncio.create_task(blobs.put(SCOPE, "a1", stall, "text/plain"))
    await stall.waiting.wait()
    await written(migrated, 4)
    put.cancel()
    with pytest.raises(asyncio.CancelledError):
        await put
    assert (await count(migrated, BlobRow), await count(migrated, ChunkRow)) == (0, 0)
    blob = await blobs.put(SCOPE, "a1", stream(b"after"), "text/plain")
    assert await blobs.get(SCOPE, "a1", blob.sha256) == b"after"


async def test_a_cancelled_database_call_finishes_before_the_cancellation_is_raised(
    migrated: AsyncEngine,
) -> None:
    blobs = SqlBlobs(migrated)
    blob = await blobs.put(SCOPE, "a1", stream(noise(2 * MiB)), "text/plain")
    call = asyncio.create_task(blobs.get(SCOPE, "a1", blob.sha256))
    await asyncio.sleep(0)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert await asyncio.wait_for(blobs.get(SCOPE, "a1", blob.sha256), 30) == noise(2 * MiB)


async def test_a_blob_collected_while_it_is_read_raises_not_found_instead_of_ending_short(
    migrated: AsyncEngine,
) -> None:
    blobs = SqlBlobs(migrated)
    blob = await blobs.put(SCOPE, "a1", stream(noise(8 * MiB)), "text/plain")
    chunks = blobs.read(SCOPE, "a1", blob.sha256)
    await anext(chunks)
    # The caller is slow, so the reader lets go of its transaction and collect goes ahead.
    await asyncio.sleep(LINGER * 5)
    assert await blobs.collect(SCOPE, set(), before=datetime.now(UTC) + HOUR) == 1
    with pytest.raises(NotFound):
        async for _ in chunks:
            pass


async def test_a_slow_reader_holds_no_transaction_and_a_reader_that_stops_frees_it(
    migrated: AsyncEngine,
) -> None:
    blobs = SqlBlobs(migrated)
    data = noise(6 * MiB)
    blob = await blobs.put(SCOPE, "a1", stream(data), "text/plain")
    chunks = blobs.read(SCOPE, "a1", blob.sha256)
    first = await anext(chunks)
    await asyncio.sleep(LINGER * 5)
    # SQLite has one connection: a reader holding a transaction here would block these.
    other = await asyncio.wait_for(blobs.put(SCOPE, "a2", stream(b"x"), "text/plain"), 30)
    assert await asyncio.wait_for(blobs.get(SCOPE, "a2", other.sha256), 30) == b"x"
    assert first + b"".join([chunk async for chunk in chunks]) == data
    # A caller that stops early lets the reader go too.
    async for _ in blobs.read(SCOPE, "a1", blob.sha256):
        break
    assert await asyncio.wait_for(blobs.get(SCOPE, "a2", other.sha256), 30) == b"x"


@pytest.fixture(params=BLOB_BACKENDS)
async def unclocked(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Blobs]:
    if request.param == "memory":
        yield InMemoryBlobs()
        return
    if request.param == "s3":
        yield s3_blobs(request.getfixturevalue("seaweed"))
        return
    async with sql_engine(request.param, tmp_path) as engine:
        await migrate(engine)
        yield SqlBlobs(engine)


async def test_without_a_clock_puts_are_stamped_with_the_current_time(unclocked: Blobs) -> None:
    before = datetime.now(UTC)
    blob = await unclocked.put(SCOPE, "a1", stream(b"x"), "text/plain")
    assert await unclocked.collect(SCOPE, set(), before=before - HOUR) == 0
    assert await unclocked.collect(SCOPE, set(), before=before + HOUR) == 1
    assert await unclocked.get(SCOPE, "a1", blob.sha256) is None


async def test_a_blob_missing_chunk_rows_is_answered_as_missing(migrated: AsyncEngine) -> None:
    blobs = SqlBlobs(migrated)
    blob = await blobs.put(SCOPE, "a1", stream(noise(3 * MiB)), "text/plain")
    async with migrated.begin() as connection:
        await connection.execute(delete(ChunkRow).where(ChunkRow.seq == 1))
    assert await blobs.get(SCOPE, "a1", blob.sha256) is None
    with pytest.raises(NotFound):
        await read_all(blobs, SCOPE, "a1", blob.sha256)


async def test_without_a_clock_put_times_are_the_databases_in_utc(migrated: AsyncEngine) -> None:
    before = datetime.now(UTC)
    await SqlBlobs(migrated).put(SCOPE, "a1", stream(b"x"), "text/plain")
    async with migrated.connect() as connection:
        put_at = await connection.scalar(select(BlobRow.put_at))
    assert put_at is not None
    assert put_at.utcoffset() == timedelta(0)
    assert before - timedelta(seconds=5) <= put_at <= datetime.now(UTC) + timedelta(seconds=5)


async def lazily(total: int, piece: int) -> AsyncIterator[bytes]:
    block = noise(piece)
    for _ in range(total // piece):
        yield block


async def test_a_large_blob_is_put_and_read_in_flat_memory_on_sqlite(tmp_path: Path) -> None:
    size = 256 * MiB
    async with sql_engine("sqlite", tmp_path) as engine:
        await migrate(engine)
        blobs = SqlBlobs(engine)
        tracemalloc.start()
        try:
            blob = await blobs.put(SCOPE, "big", lazily(size, 256 * 1024), "video/mp4")
            _, put_peak = tracemalloc.get_traced_memory()
            tracemalloc.reset_peak()
            digest, total = hashlib.sha256(), 0
            async for chunk in blobs.read(SCOPE, "big", blob.sha256):
                digest.update(chunk)
                total += len(chunk)
            _, read_peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert (blob.size, total, digest.hexdigest()) == (size, size, blob.sha256)
    assert put_peak < 32 * MiB
    assert read_peak < 32 * MiB


async def test_many_blobs_are_stated_at_once_and_a_missing_one_left_out(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Batches of two, so the SQL adapter's batching is crossed too.
    monkeypatch.setattr(sql_blobs, "STAT_BATCH", 2)
    first, second, third = noise(10, 1), noise(20, 2), noise(30, 3)
    await store.blobs.put_many(SCOPE, "a1", [(first, "text/plain"), (second, "image/png")])
    await store.blobs.put_many(SCOPE, "a2", [(third, "text/plain")])

    found = await store.blobs.stat_many(
        SCOPE, [("a1", sha(first)), ("a1", sha(second)), ("a2", sha(third)), ("a2", sha(first))]
    )

    assert found == {
        ("a1", sha(first)): Blob(sha256=sha(first), size=10, media_type="text/plain"),
        ("a1", sha(second)): Blob(sha256=sha(second), size=20, media_type="image/png"),
        ("a2", sha(third)): Blob(sha256=sha(third), size=30, media_type="text/plain"),
    }
    assert await store.blobs.stat_many(SCOPE, []) == {}
