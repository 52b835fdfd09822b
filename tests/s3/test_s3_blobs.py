"""S3Blobs' own behaviour on a real SeaweedFS: keys, large puts, refreshes, damage, failures.

The contract every blob store keeps is ``tests/core/test_blobs.py``; here is what only an object
store does: the conditional create, the staged multipart put and the one straight to the
digest's key when the digest is given, the put-time markers that a
refresh writes and collect reads again, a digest checked on every read, and each way the store
fails, typed: unreachable, bucket missing, credentials refused, throttled (by a real HTTP peer
that answers 503 SlowDown), and any other answer.
"""

import asyncio
import hashlib
import os
import random
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from typing import ClassVar, override

import obstore
import pytest
from artifactr.core import InvalidState, NotFound
from artifactr.workspace import Scope
from obstore.exceptions import AlreadyExistsError
from obstore.store import S3Store

from artifactr.files import FileTooLarge
from artifactr.files.s3 import (
    BlobDamaged,
    BucketMissing,
    CredentialsRefused,
    InvalidStoreUrl,
    S3Blobs,
    StoreFailed,
    StoreThrottled,
    StoreUnreachable,
)
from artifactr.files.s3.blobs import SINGLE_PUT
from tests.clock import Clock
from tests.s3.proxy import BROKEN, SLOW_DOWN, Proxy
from tests.seaweed import ACCESS_KEY, SECRET_KEY, SeaweedFS, s3_blobs, seaweedfs

SCOPE = Scope(tenant_id="t/1", workspace_id="w 1")
MiB = 1 << 20
HOUR = timedelta(hours=1)


def noise(size: int, seed: int = 0) -> bytes:
    return random.Random(seed).randbytes(size)


async def stream(data: bytes, piece: int = 256 * 1024) -> AsyncIterator[bytes]:
    for start in range(0, len(data), piece):
        yield data[start : start + piece]


def bare(seaweed: SeaweedFS, bucket: str = "blobs") -> S3Store:
    """The client itself on the same bucket, to look behind the adapter's back."""
    return S3Store(
        bucket,
        config={
            "endpoint": seaweed.endpoint,
            "region": "us-east-1",
            "access_key_id": ACCESS_KEY,
            "secret_access_key": SECRET_KEY,
        },
        client_options={"allow_http": True},
    )


async def keys(seaweed: SeaweedFS, prefix: str) -> list[str]:
    listed = await obstore.list(bare(seaweed), prefix=prefix).collect_async()
    return sorted(meta["path"] for meta in listed)


async def read_into(served: list[bytes], chunks: AsyncIterator[bytes]) -> None:
    # Chunk by chunk, so what came before a failure is kept.
    async for chunk in chunks:
        served += [chunk]


def prefix_of(blobs: S3Blobs) -> str:
    return blobs._prefix


# ─── keys and puts ────────────────────────────────────────────────────────────


async def test_keys_carry_tenant_workspace_and_artifact_before_the_digest(
    seaweed: SeaweedFS,
) -> None:
    blobs = s3_blobs(seaweed)
    blob = await blobs.put(SCOPE, "a/1", stream(b"hello"), "text/plain")
    prefix = prefix_of(blobs)
    assert await keys(seaweed, prefix) == sorted(
        [
            f"{prefix}t%2F1/w%201/a%2F1/{blob.sha256}",
            *[key for key in await keys(seaweed, prefix) if ".at/" in key],
        ]
    )
    [marker] = [key for key in await keys(seaweed, prefix) if ".at/" in key]
    assert marker.startswith(f"{prefix}t%2F1/w%201/a%2F1/{blob.sha256}.at/")
    assert marker.endswith("-text%2Fplain")


async def test_a_conditional_create_of_stored_bytes_is_refused_and_a_put_only_refreshes_them(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    blobs = s3_blobs(seaweed, clock=clock)
    blob = await blobs.put(SCOPE, "a1", stream(b"same"), "text/plain")
    key = f"{prefix_of(blobs)}t%2F1/w%201/a1/{blob.sha256}"
    before = await obstore.head_async(bare(seaweed), key)
    with pytest.raises(AlreadyExistsError):
        await obstore.put_async(bare(seaweed), key, b"other", mode="create")
    clock.now += HOUR
    # A retried put: the bytes are not written again, and their put time moves on.
    assert await blobs.put(SCOPE, "a1", stream(b"same"), "text/csv") == blob.model_copy(
        update={"media_type": "text/csv"}
    )
    assert await obstore.head_async(bare(seaweed), key) == before
    assert await blobs.stat(SCOPE, "a1", blob.sha256) == blob.model_copy(
        update={"media_type": "text/csv"}
    )
    assert await blobs.collect(SCOPE, set(), before=clock.now - HOUR / 2) == 0
    # Collect keeps only the newest marker of a blob it keeps.
    assert len(await keys(seaweed, f"{key}.at")) == 1


async def test_a_large_put_goes_up_in_parts_and_leaves_no_staged_object(
    seaweed: SeaweedFS,
) -> None:
    blobs = s3_blobs(seaweed)
    data = noise(SINGLE_PUT * 2 + 3)
    first, second = await asyncio.gather(
        blobs.put(SCOPE, "a1", stream(data, MiB), "video/mp4"),
        blobs.put(SCOPE, "a1", stream(data, 3 * MiB), "video/mp4"),
    )
    assert first == second
    assert first.sha256 == hashlib.sha256(data).hexdigest()
    assert await blobs.get(SCOPE, "a1", first.sha256) == data
    again = await blobs.put(SCOPE, "a1", stream(data, MiB), "video/mp4")
    assert again == first
    listed = await keys(seaweed, prefix_of(blobs))
    assert not [key for key in listed if "/~" in key]
    assert len([key for key in listed if ".at/" not in key]) == 1


async def test_a_large_put_whose_bytes_another_put_named_first_keeps_theirs(
    seaweed: SeaweedFS,
) -> None:
    # The other put lands between this one's look for the key and its copy onto it: the look is
    # told "missing" once, as it would have been just before the other put landed.
    class Overtaken(S3Blobs):
        looks: ClassVar[list[str]] = []

        @override
        async def _exists(self, key: str) -> bool:
            Overtaken.looks.append(key)
            return False if len(Overtaken.looks) == 1 else await super()._exists(key)

    plain = s3_blobs(seaweed)
    blobs = Overtaken(
        "blobs",
        prefix=prefix_of(plain),
        endpoint_url=seaweed.endpoint,
        region="us-east-1",
        access_key_id=ACCESS_KEY,
        secret_access_key=SECRET_KEY,
    )
    data = noise(SINGLE_PUT + 5, seed=7)
    first = await plain.put(SCOPE, "a1", stream(data, MiB), "video/mp4")
    second = await blobs.put(SCOPE, "a1", stream(data, MiB), "video/mp4")
    assert second == first
    assert len(Overtaken.looks) == 1
    assert await plain.get(SCOPE, "a1", first.sha256) == data
    listed = await keys(seaweed, prefix_of(plain))
    assert not [key for key in listed if "/~" in key]


@pytest.mark.parametrize("failure", ["too_large", "cut_off"])
async def test_a_large_put_that_fails_raises_the_streams_error_and_stores_nothing(
    seaweed: SeaweedFS, failure: str
) -> None:
    blobs = s3_blobs(seaweed)

    async def cut_off() -> AsyncIterator[bytes]:
        yield noise(SINGLE_PUT + 1)
        yield noise(SINGLE_PUT)
        raise ConnectionResetError("the client went away")

    if failure == "too_large":
        with pytest.raises(FileTooLarge):
            await blobs.put(SCOPE, "a1", stream(noise(3 * SINGLE_PUT), MiB), "x/y", limit=20 * MiB)
    else:
        with pytest.raises(ConnectionResetError):
            await blobs.put(SCOPE, "a1", cut_off(), "x/y")
    assert await keys(seaweed, prefix_of(blobs)) == []


async def test_a_large_put_whose_staged_bytes_were_collected_meanwhile_fails_typed(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    calls = 0

    def collect_meanwhile() -> object:
        # The second stamp is taken once the staged object is complete: another process's
        # collect removes it then, as one would after a put stalled past the grace.
        nonlocal calls
        calls += 1
        if calls == 2:
            store = bare(seaweed)
            staged = [m["path"] for m in obstore.list(store, prefix).collect() if "/~" in m["path"]]
            obstore.delete(store, staged)
        return clock.now

    blobs = s3_blobs(seaweed, clock=collect_meanwhile)
    prefix = prefix_of(blobs)
    with pytest.raises(InvalidState, match="was collected"):
        await blobs.put(SCOPE, "a1", stream(noise(SINGLE_PUT + 1)), "x/y")
    assert await blobs.collect(SCOPE, set(), before=clock.now + HOUR) == 0
    assert await keys(seaweed, prefix) == []


async def test_a_large_put_given_its_digest_goes_straight_to_its_key_and_a_retry_sends_no_part(
    seaweed: SeaweedFS,
) -> None:
    asked: list[str] = []

    def count(line: str) -> None:
        asked.append(line)

    data = noise(SINGLE_PUT * 2 + 3, seed=9)
    given = hashlib.sha256(data).hexdigest()
    async with Proxy(seaweed.ports["s3"], answer=count) as proxy:
        blobs = S3Blobs(
            "blobs",
            prefix=f"direct-{os.urandom(4).hex()}",
            endpoint_url=proxy.endpoint,
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
        )
        blob = await blobs.put(SCOPE, "a1", stream(data, MiB), "video/mp4", sha256=given)
        assert blob.sha256 == given
        # Every byte went to the digest's key, in parts: nothing staged, nothing copied.
        sent = [line.split()[1] for line in asked if line.startswith("PUT")]
        assert [path for path in sent if ".at/" not in path]
        assert all(f"/{given}" in path for path in sent)
        asked.clear()
        assert await blobs.put(SCOPE, "a1", stream(data, MiB), "video/mp4", sha256=given) == blob
        # A retry marks the bytes and finds them there: no part goes up again.
        sent = [line.split()[1] for line in asked if line.startswith(("PUT", "POST"))]
        assert len(sent) == 1
        assert ".at/" in sent[0]
        assert await blobs.get(SCOPE, "a1", given) == data


@pytest.mark.parametrize("failure", ["too_large", "cut_off", "another_digest"])
async def test_a_large_put_given_a_digest_that_fails_completes_no_object(
    seaweed: SeaweedFS, failure: str
) -> None:
    clock = Clock()
    blobs = s3_blobs(seaweed, clock=clock)
    data = noise(3 * SINGLE_PUT)
    given = hashlib.sha256(data).hexdigest()

    async def cut_off() -> AsyncIterator[bytes]:
        yield data[: SINGLE_PUT + 1]
        yield data[SINGLE_PUT + 1 : 2 * SINGLE_PUT]
        raise ConnectionResetError("the client went away")

    if failure == "too_large":
        with pytest.raises(FileTooLarge):
            await blobs.put(SCOPE, "a1", stream(data, MiB), "x/y", limit=20 * MiB, sha256=given)
    elif failure == "cut_off":
        with pytest.raises(ConnectionResetError):
            await blobs.put(SCOPE, "a1", cut_off(), "x/y", sha256=given)
    else:
        with pytest.raises(InvalidState, match="not to the digest they were given"):
            await blobs.put(SCOPE, "a1", stream(data[1:], MiB), "x/y", sha256=given)
    # Nothing was completed, nor marked: the marker goes only once the digest matched.
    assert await keys(seaweed, prefix_of(blobs)) == []


async def test_a_large_put_of_stored_bytes_that_a_collect_removes_between_its_looks_sends_them(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    data = noise(SINGLE_PUT + 1, seed=11)
    given = hashlib.sha256(data).hexdigest()
    plain = s3_blobs(seaweed, clock=clock)
    await plain.put(SCOPE, "a1", stream(data), "x/y", sha256=given)
    removed = False

    def collect_meanwhile() -> object:
        # The put found the object and marks it: a collect that looked at the markers just
        # before removes the object now, so the put's second look finds none.
        nonlocal removed
        if not removed:
            removed = True
            store = bare(seaweed)
            listed = obstore.list(store, prefix_of(plain)).collect()
            obstore.delete(store, [m["path"] for m in listed if m["path"].endswith(given)])
        return clock.now

    blobs = S3Blobs(
        "blobs",
        prefix=prefix_of(plain),
        endpoint_url=seaweed.endpoint,
        region="us-east-1",
        access_key_id=ACCESS_KEY,
        secret_access_key=SECRET_KEY,
        clock=collect_meanwhile,
    )
    assert (await blobs.put(SCOPE, "a1", stream(data), "x/y", sha256=given)).sha256 == given
    assert removed
    assert await blobs.get(SCOPE, "a1", given) == data


async def test_collect_removes_staged_puts_that_died_and_markers_without_bytes(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    blobs = s3_blobs(seaweed, clock=clock)
    prefix = prefix_of(blobs)
    store = bare(seaweed)
    stamp = (clock.now - timedelta(days=1)).timestamp() * 1_000_000
    await obstore.put_async(store, f"{prefix}t%2F1/w%201/~{int(stamp):020d}-dead", b"x" * 10)
    await obstore.put_async(store, f"{prefix}t%2F1/w%201/a1/{'0' * 64}.at/{int(stamp):020d}-x", b"")
    young = f"{prefix}t%2F1/w%201/~{int(stamp + 2 * 86400e6):020d}-alive"
    await obstore.put_async(store, young, b"y")
    assert await blobs.collect(SCOPE, set(), before=clock.now) == 0
    assert await keys(seaweed, prefix) == [young]


# ─── the refresh racing collect ───────────────────────────────────────────────


async def test_a_put_that_refreshes_a_blob_after_collect_listed_it_keeps_it(
    seaweed: SeaweedFS,
) -> None:
    clock = Clock()
    async with Proxy(
        seaweed.ports["s3"], hold=lambda line: "list-type=2" in line and ".at%2F" in line
    ) as proxy:
        prefix = f"race-{os.urandom(4).hex()}"
        options = {"access_key_id": ACCESS_KEY, "secret_access_key": SECRET_KEY}
        collecting = S3Blobs("blobs", prefix=prefix, endpoint_url=proxy.endpoint, **options)
        direct = S3Blobs(
            "blobs", prefix=prefix, endpoint_url=seaweed.endpoint, clock=clock, **options
        )
        blob = await direct.put(SCOPE, "a1", stream(b"old bytes"), "text/plain")
        clock.now += 2 * HOUR
        # Collect lists the blob as old, then looks at its markers again before it removes it:
        # a put lands in between.
        collect = asyncio.create_task(collecting.collect(SCOPE, set(), before=clock.now - HOUR))
        await asyncio.wait_for(proxy.held.wait(), 30)
        await direct.put(SCOPE, "a1", stream(b"old bytes"), "text/plain")
        proxy.go.set()
        assert await collect == 0
        assert await direct.get(SCOPE, "a1", blob.sha256) == b"old bytes"


# ─── damage ───────────────────────────────────────────────────────────────────


async def test_bytes_that_dont_match_their_digest_are_refused_and_never_served_whole(
    seaweed: SeaweedFS,
) -> None:
    blobs = s3_blobs(seaweed)
    data = noise(3 * MiB + 5)
    blob = await blobs.put(SCOPE, "a1", stream(data), "x/y")
    key = f"{prefix_of(blobs)}t%2F1/w%201/a1/{blob.sha256}"
    # Same length, one byte changed: a store that rotted, or someone else's write.
    await obstore.put_async(bare(seaweed), key, data[:-1] + b"!")
    with pytest.raises(BlobDamaged) as raised:
        await blobs.get(SCOPE, "a1", blob.sha256)
    assert isinstance(raised.value, NotFound)
    served: list[bytes] = []
    with pytest.raises(BlobDamaged):
        await read_into(served, blobs.read(SCOPE, "a1", blob.sha256))
    assert 0 < sum(map(len, served)) < len(data)
    # A chunk-sized object that rotted is held back whole.
    small = noise(MiB, seed=2)
    whole = await blobs.put(SCOPE, "a1", stream(small), "x/y")
    await obstore.put_async(
        bare(seaweed), f"{prefix_of(blobs)}t%2F1/w%201/a1/{whole.sha256}", b"?" * MiB
    )
    served.clear()
    with pytest.raises(BlobDamaged):
        await read_into(served, blobs.read(SCOPE, "a1", whole.sha256))
    assert served == []


# ─── failures, typed ──────────────────────────────────────────────────────────


async def test_a_store_that_does_not_answer_is_unreachable(seaweed: SeaweedFS) -> None:
    blobs = S3Blobs(
        "blobs",
        endpoint_url="http://127.0.0.1:9",
        region="us-east-1",
        access_key_id=ACCESS_KEY,
        secret_access_key=SECRET_KEY,
        deadline=1.0,
    )
    with pytest.raises(StoreUnreachable) as raised:
        await blobs.put(SCOPE, "a1", stream(b"x"), "text/plain")
    assert raised.value.details()["failure"] == "unreachable"
    assert "endpoint" in str(raised.value)


async def test_a_missing_bucket_is_named(seaweed: SeaweedFS) -> None:
    blobs = S3Blobs(
        "no-such-bucket",
        endpoint_url=seaweed.endpoint,
        access_key_id=ACCESS_KEY,
        secret_access_key=SECRET_KEY,
    )
    with pytest.raises(BucketMissing, match="no-such-bucket"):
        await blobs.put(SCOPE, "a1", stream(b"x"), "text/plain")
    with pytest.raises(BucketMissing):
        await blobs.get(SCOPE, "a1", "0" * 64)
    with pytest.raises(BucketMissing):
        await blobs.collect(SCOPE, set(), before=Clock().now)
    with pytest.raises(BucketMissing):
        await blobs.put(SCOPE, "a1", stream(noise(SINGLE_PUT + 1)), "text/plain")


@pytest.fixture(scope="module")
def guarded() -> Iterator[SeaweedFS]:
    """A second store that takes one identity only."""
    with seaweedfs([(ACCESS_KEY, SECRET_KEY)]) as store:
        yield store


async def test_credentials_the_store_refuses_are_named(guarded: SeaweedFS) -> None:
    for access, secret in [("stranger", SECRET_KEY), (ACCESS_KEY, "wrong")]:
        blobs = S3Blobs(
            "blobs",
            endpoint_url=guarded.endpoint,
            access_key_id=access,
            secret_access_key=secret,
        )
        with pytest.raises(CredentialsRefused, match="AWS_ACCESS_KEY_ID"):
            await blobs.put(SCOPE, "a1", stream(b"x"), "text/plain")
        with pytest.raises(CredentialsRefused):
            await blobs.collect(SCOPE, set(), before=Clock().now)


async def test_throttling_is_retried_with_backoff_within_the_deadline(seaweed: SeaweedFS) -> None:
    refusals = 3

    def slow_down(line: str) -> bytes | None:
        nonlocal refusals
        if refusals and line.startswith("PUT"):
            refusals -= 1
            return SLOW_DOWN
        return None

    async with Proxy(seaweed.ports["s3"], answer=slow_down) as proxy:
        blobs = S3Blobs(
            "blobs",
            prefix=f"slow-{os.urandom(4).hex()}",
            endpoint_url=proxy.endpoint,
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
            deadline=30.0,
        )
        blob = await blobs.put(SCOPE, "a1", stream(b"patience"), "text/plain")
        assert proxy.answered == 3
        assert await blobs.get(SCOPE, "a1", blob.sha256) == b"patience"


@pytest.mark.parametrize(("reply", "error"), [(SLOW_DOWN, StoreThrottled), (BROKEN, StoreFailed)])
async def test_a_store_that_keeps_failing_fails_typed_once_the_deadline_passes(
    seaweed: SeaweedFS, reply: bytes, error: type[StoreFailed]
) -> None:
    async with Proxy(seaweed.ports["s3"], answer=lambda _: reply) as proxy:
        blobs = S3Blobs(
            "blobs",
            endpoint_url=proxy.endpoint,
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
            deadline=1.0,
        )
        with pytest.raises(error) as raised:
            await blobs.put(SCOPE, "a1", stream(b"x"), "text/plain")
        assert type(raised.value) is error
        assert raised.value.code == "store_failed"
        assert proxy.answered > 1


# ─── from_url ─────────────────────────────────────────────────────────────────


async def test_from_url_names_bucket_prefix_endpoint_and_region(
    seaweed: SeaweedFS, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    prefix = f"url-{os.urandom(4).hex()}"
    blobs = S3Blobs.from_url(
        f"s3://blobs/{prefix}/files/?endpoint_url={seaweed.endpoint}&region=us-east-1"
    )
    blob = await blobs.put(SCOPE, "a1", stream(b"by url"), "text/plain")
    assert f"{prefix}/files/t%2F1/w%201/a1/{blob.sha256}" in await keys(seaweed, prefix)


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://blobs/x", "scheme is 'http'"),
        ("blobs/x", "scheme is 'missing'"),
        ("s3:///x", "names no bucket"),
        ("s3://blobs?endpoint=http://x", "unknown parameters endpoint"),
        ("s3://blobs?endpoint_url=ftp://x", "not an http(s) URL"),
    ],
)
def test_a_store_url_that_cannot_be_used_is_refused_saying_why(url: str, why: str) -> None:
    with pytest.raises(InvalidStoreUrl, match=why.replace("(", r"\(").replace(")", r"\)")):
        S3Blobs.from_url(url)


def test_a_url_without_an_endpoint_is_aws_s3_itself() -> None:
    # Nothing is asked of AWS until a call: the URL alone is taken.
    assert isinstance(S3Blobs.from_url("s3://my-bucket/files?region=eu-west-1"), S3Blobs)


async def test_a_stored_blob_is_stated_in_one_request_with_its_last_media_type(
    seaweed: SeaweedFS,
) -> None:
    asked: list[str] = []

    def count(line: str) -> None:
        asked.append(line)

    async with Proxy(seaweed.ports["s3"], answer=count) as proxy:
        blobs = S3Blobs(
            "blobs",
            prefix=f"stat-{os.urandom(4).hex()}",
            endpoint_url=proxy.endpoint,
            access_key_id=ACCESS_KEY,
            secret_access_key=SECRET_KEY,
        )
        first = await blobs.put(SCOPE, "a1", stream(b"first"), "text/plain")
        await blobs.put(SCOPE, "a1", stream(b"first"), "text/csv")
        second = await blobs.put(SCOPE, "a1", stream(b"second"), "image/png")
        asked.clear()
        assert await blobs.stat(SCOPE, "a1", first.sha256) == first.model_copy(
            update={"media_type": "text/csv"}
        )
        assert len(asked) == 1
        asked.clear()
        found = await blobs.stat_many(SCOPE, [("a1", first.sha256), ("a1", second.sha256)])
        assert found == {
            ("a1", first.sha256): first.model_copy(update={"media_type": "text/csv"}),
            ("a1", second.sha256): second,
        }
        assert len(asked) == 2
