"""S3 blobs: native files' bytes as objects in any S3-compatible store, on obstore (ADR-0024).

Every key starts with the store's prefix, then the tenant, workspace and artifact, each
percent-quoted so none holds a ``/``; the digest comes last, never alone::

    {prefix}{tenant}/{workspace}/{artifact}/{sha256}                    the bytes
    {prefix}{tenant}/{workspace}/{artifact}/{sha256}.at/{stamp}-{media} a put of them
    {prefix}{tenant}/{workspace}/{artifact}/{sha256}.gone/{stamp}-{uuid} bytes collect set aside
    {prefix}{tenant}/{workspace}/~{stamp}-{uuid}                        a large put, staged

A put first records itself (a marker, an empty object named with the time and media type), then
creates the object with a conditional create (``If-None-Match: *``): two puts of the same bytes
never fight, and a retried put writes a marker and nothing more. Bytes that end within
:data:`SINGLE_PUT` go in one request. A larger stream goes up in a multipart upload, so memory
stays flat at any size: straight to its digest's key if the caller gave the digest (a check-in's
spool has it), its marker written once the last byte matched it and before the upload completes;
otherwise to a staging key, then copied to its digest's key with a conditional create. The
newest marker is the blob's put time and media type: a put of bytes already stored refreshes
them without touching the bytes. :meth:`S3Blobs.collect` lists the
scope's prefix and removes unreferenced blobs whose newest marker is older than the cutoff,
stale markers, and staged puts that died. It never deletes a blob's bytes outright: it copies
them aside (``.gone/``), deletes the object, then looks at the markers again; a put marked
meanwhile gets its bytes back from the copy before the copy goes. A read that finds no object
reads the copy set aside, so a put that returned is never lost and never unreadable.

Reads stream and check the digest as they go: a mismatch raises :class:`BlobDamaged` before the
last chunk is handed on, so a damaged object is never served whole.
"""

import asyncio
import contextlib
import hashlib
import urllib.parse
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Buffer, Callable, Sequence, Set
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Self

import obstore
from artifactr.core import InvalidState, NotFound
from artifactr.workspace import Scope
from obstore.exceptions import AlreadyExistsError
from obstore.store import S3Store

from artifactr.files.core.blobs import CHUNK_SIZE, Hashing
from artifactr.files.core.clock import Clock, utc_now
from artifactr.files.core.manifests import Blob
from artifactr.files.s3._failures import object_missing, translated
from artifactr.files.s3.errors import BlobDamaged, InvalidStoreUrl

if TYPE_CHECKING:
    from obstore import ObjectMeta
    from obstore.store import S3Config

SINGLE_PUT = 8 << 20
"""The most bytes a put sends in one request (8 MiB); a longer stream goes up in parts."""
PART_SIZE = 8 << 20
"""The size of one part of a multipart upload."""
PARTS_AT_ONCE = 4
"""How many parts go up at once: with the part being cut, what a large put holds (40 MiB)."""
READ_PIECE = CHUNK_SIZE
"""The least a read asks the client for at a time, hashed as one piece (1 MiB: measured
faster than 4 or 8 MiB, the hash of one piece overlapping the next one's download)."""
STAT_AT_ONCE = 16
"""How many blobs' heads :meth:`S3Blobs.stat_many` asks the store for at once."""
DEADLINE = 60.0
"""How long, in seconds, one request and its retries may take by default."""
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
"""Where put times count from."""


@dataclass
class _Entry:
    """What a listing shows of one blob: whether its bytes are there, and its markers."""

    key: str | None = None
    markers: dict[str, int] = field(default_factory=dict[str, int])
    set_aside: dict[str, int] = field(default_factory=dict[str, int])

    @property
    def put_at(self) -> int:
        return max(self.markers.values(), default=0)


class S3Blobs:
    """Blobs as objects in an S3-compatible store (AWS S3, SeaweedFS, MinIO, Ceph, R2).

    Credentials come from the standard environment (``AWS_ACCESS_KEY_ID``,
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``) or the machine's role unless given.

    Args:
        bucket: The bucket, which must exist.
        prefix: Where in the bucket the keys start (``files/``); none: at its root.
        endpoint_url: The store's URL for a store other than AWS S3.
        region: The bucket's region.
        access_key_id: The access key, if not from the environment.
        secret_access_key: Its secret.
        deadline: Seconds one request may take with its retries (5xx, SlowDown, dropped
            connections are retried with backoff within it).
        clock: The time puts are stamped with; UTC now if omitted.
    """

    def __init__(
        self,
        bucket: str,
        *,
        prefix: str = "",
        endpoint_url: str | None = None,
        region: str | None = None,
        access_key_id: str | None = None,
        secret_access_key: str | None = None,
        deadline: float = DEADLINE,
        clock: Clock = utc_now,
    ) -> None:
        self._prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self._clock = clock
        self._bucket = bucket
        config: S3Config = {"copy_if_not_exists": "multipart"}
        if endpoint_url is not None:
            config["endpoint"] = endpoint_url
        if region is not None:
            config["region"] = region
        if access_key_id is not None and secret_access_key is not None:
            config["access_key_id"] = access_key_id
            config["secret_access_key"] = secret_access_key
        within = timedelta(seconds=deadline)
        self._store = S3Store(
            bucket,
            config=config,
            client_options={
                "allow_http": endpoint_url is not None and endpoint_url.startswith("http://"),
                "connect_timeout": timedelta(seconds=min(deadline, 5.0)),
                "timeout": within,
            },
            retry_config={
                "max_retries": 10,
                "retry_timeout": within,
                "backoff": {
                    "init_backoff": timedelta(milliseconds=50),
                    "max_backoff": timedelta(seconds=2),
                    "base": 2,
                },
            },
        )

    @classmethod
    def from_url(cls, url: str, *, deadline: float = DEADLINE, clock: Clock = utc_now) -> Self:
        """Return blobs in the store a URL names: ``s3://bucket/prefix?endpoint_url=..&region=..``.

        Raises:
            InvalidStoreUrl: If the URL is not ``s3://``, names no bucket, or has another query
                parameter than ``endpoint_url`` and ``region``.
        """
        parts = urllib.parse.urlsplit(url)
        if parts.scheme != "s3":
            raise InvalidStoreUrl(url, f"the scheme is {parts.scheme or 'missing'!r}, not 's3'")
        if not parts.netloc:
            raise InvalidStoreUrl(url, "it names no bucket")
        query = urllib.parse.parse_qs(parts.query)
        unknown = sorted(set(query) - {"endpoint_url", "region"})
        if unknown:
            raise InvalidStoreUrl(url, f"unknown parameters {', '.join(unknown)}")
        endpoint = query.get("endpoint_url", [None])[-1]
        if endpoint is not None and urllib.parse.urlsplit(endpoint).scheme not in ("http", "https"):
            raise InvalidStoreUrl(url, f"endpoint_url {endpoint!r} is not an http(s) URL")
        return cls(
            parts.netloc,
            prefix=parts.path,
            endpoint_url=endpoint,
            region=query.get("region", [None])[-1],
            deadline=deadline,
            clock=clock,
        )

    # ─── keys ─────────────────────────────────────────────────────────────────

    def _scope_key(self, scope: Scope) -> str:
        return f"{self._prefix}{_quote(scope.tenant_id)}/{_quote(scope.workspace_id)}/"

    def _key(self, scope: Scope, artifact_id: str, sha256: str) -> str:
        return f"{self._scope_key(scope)}{_quote(artifact_id)}/{sha256}"

    def _stamp(self) -> int:
        return (self._clock() - EPOCH) // timedelta(microseconds=1)

    # ─── puts ─────────────────────────────────────────────────────────────────

    async def put(
        self,
        scope: Scope,
        artifact_id: str,
        data: AsyncIterable[bytes],
        media_type: str,
        *,
        limit: int | None = None,
        sha256: str | None = None,
    ) -> Blob:
        """Store bytes as they stream in; see :meth:`artifactr.files.core.blobs.Blobs.put`.

        A stream longer than :data:`SINGLE_PUT` whose digest is given goes up in parts straight
        to its digest's key, checked before the upload completes; one whose digest is not known
        yet is staged and copied there once it is.

        Raises:
            FileTooLarge: If more than ``limit`` bytes arrive; nothing is stored.
            InvalidState: If the bytes don't hash to ``sha256`` (nothing is stored), or if a
                large put stalled so long that :meth:`collect` removed it.
            StoreFailed: If the store failed (:mod:`artifactr.files.s3.errors` says how).
        """
        hashing = Hashing(limit, expected=sha256)
        pieces = aiter(data)
        head: list[bytes] = []
        held = 0
        async for piece in pieces:
            hashing.update(piece)
            head.append(piece)
            held += len(piece)
            if held > SINGLE_PUT:
                rest = _joined(head, pieces, hashing)
                if sha256 is None:
                    return await self._put_staged(scope, artifact_id, rest, hashing, media_type)
                key = self._key(scope, artifact_id, sha256)
                await self._put_direct(key, rest, media_type)
                return Blob(sha256=sha256, size=hashing.size, media_type=media_type)
        blob = Blob(sha256=hashing.confirmed(), size=hashing.size, media_type=media_type)
        await self._create(self._key(scope, artifact_id, blob.sha256), media_type, b"".join(head))
        return blob

    async def put_many(
        self, scope: Scope, artifact_id: str, items: Sequence[tuple[bytes, str]]
    ) -> list[Blob]:
        """Store blobs in memory, each as :meth:`put` does; see :meth:`~.blobs.Blobs.put_many`.

        Bytes longer than :data:`SINGLE_PUT` are hashed first (in a worker thread), so they go
        up straight to their digest's key.
        """

        async def one(data: bytes, media_type: str) -> Blob:
            known = None
            if len(data) > SINGLE_PUT:
                known = await asyncio.to_thread(lambda: hashlib.sha256(data).hexdigest())
            return await self.put(scope, artifact_id, _once(data), media_type, sha256=known)

        return list(await asyncio.gather(*(one(data, media) for data, media in items)))

    async def _mark(self, key: str, media_type: str) -> None:
        """Record a put of the blob at ``key`` now: its put time and media type."""
        marker = f"{key}.at/{self._stamp():020d}-{_quote(media_type)}"
        async with translated(self._bucket):
            await obstore.put_async(self._store, marker, b"")

    async def _create(self, key: str, media_type: str, data: bytes) -> None:
        await self._mark(key, media_type)
        async with translated(self._bucket):
            # The same bytes there already are kept: the marker refreshed them.
            with contextlib.suppress(AlreadyExistsError):
                await obstore.put_async(self._store, key, data, mode="create")

    async def _upload(self, key: str, data: AsyncIterator[bytes]) -> None:
        """Send a stream up in parts to ``key``: nothing is there unless it ended well."""
        failed: list[BaseException] = []
        async with translated(self._bucket):
            try:
                await obstore.put_async(
                    self._store,
                    key,
                    _kept(data, failed),
                    use_multipart=True,
                    chunk_size=PART_SIZE,
                    max_concurrency=PARTS_AT_ONCE,
                )
            except Exception:
                # The caller's stream failed (too large, cut off, not the digest it was given):
                # its error, not the client's wrapping of it, and nothing was completed.
                if failed:
                    raise failed[0] from None
                raise

    async def _put_direct(self, key: str, data: AsyncIterator[bytes], media_type: str) -> None:
        """Put a stream whose digest is known straight to its key, in parts: no copy.

        If the object is there (a head), the put is a put of stored bytes: a marker, then a
        head that finds it, and the stream is only read through to check it. Otherwise the
        parts go up as they come, and once the last byte is read and the digest matched, the
        marker is written before the upload completes: the marker, then the object, as a small
        put's (ADR-0024's amendment of 2026-12-05 walks every interleaving with collects). A
        multipart upload cannot be completed conditionally through the client, so two puts of
        the same new bytes may both complete: the second writes the same bytes again.
        """
        async with translated(self._bucket):
            stored = await self._exists(key)
        if stored:
            await self._mark(key, media_type)
            async with translated(self._bucket):
                stored = await self._exists(key)
        if stored:
            # The caller's stream, read only to check it: its own errors pass as they are.
            async for _ in data:
                pass
            return
        await self._upload(key, _then(data, lambda: self._mark(key, media_type)))

    async def _put_staged(
        self,
        scope: Scope,
        artifact_id: str,
        data: AsyncIterator[bytes],
        hashing: Hashing,
        media_type: str,
    ) -> Blob:
        staged = f"{self._scope_key(scope)}~{self._stamp():020d}-{uuid.uuid4().hex}"
        try:
            await self._upload(staged, data)
            blob = Blob(sha256=hashing.sha256, size=hashing.size, media_type=media_type)
            key = self._key(scope, artifact_id, blob.sha256)
            await self._mark(key, media_type)
            async with translated(self._bucket):
                if not await self._exists(key):
                    await self._copy(staged, key)
            return blob
        finally:
            async with translated(self._bucket):
                await obstore.delete_async(self._store, staged)

    async def _exists(self, key: str) -> bool:
        try:
            await obstore.head_async(self._store, key)
        except FileNotFoundError as missing:
            object_missing(missing, self._bucket)
            return False
        return True

    async def _copy(self, staged: str, key: str) -> None:
        try:
            await obstore.copy_async(self._store, staged, key, overwrite=False)
        except AlreadyExistsError:
            # Another put of the same bytes named them first.
            pass
        except FileNotFoundError as gone:
            object_missing(gone, self._bucket)
            raise InvalidState(
                "a large put stalled for longer than the grace period and was collected"
            ) from gone

    # ─── reads ────────────────────────────────────────────────────────────────

    async def get(self, scope: Scope, artifact_id: str, sha256: str) -> bytes | None:
        """Return a blob's bytes whole, or None; see :meth:`~.blobs.Blobs.get`.

        Raises:
            BlobDamaged: If the stored bytes don't match their digest.
            StoreFailed: If the store failed.
        """
        try:
            return b"".join([chunk async for chunk in self.read(scope, artifact_id, sha256)])
        except BlobDamaged:
            raise
        except NotFound:
            return None

    async def stat(self, scope: Scope, artifact_id: str, sha256: str) -> Blob | None:
        """Return a blob's record, or None; see :meth:`~.blobs.Blobs.stat`.

        One listing answers it: the artifact's keys from just before the blob's, in the store's
        (lexicographic) order, show the object with its size, then its markers, then any copy a
        collect set aside. Only a blob the listing doesn't show is asked for again, as a read
        asks (the listing may have passed the object before a collect put it back).
        """
        key = self._key(scope, artifact_id, sha256)
        size: int | None = None
        markers: dict[str, int] = {}
        async with translated(self._bucket):
            async for page in obstore.list(
                self._store, prefix=key.rsplit("/", 1)[0], offset=key[:-1]
            ):
                for meta in page:
                    path = meta["path"]
                    if path == key or (path.startswith(f"{key}.gone/") and size is None):
                        size = meta["size"]
                    elif path.startswith(f"{key}.at/"):
                        markers[path] = int(path.rsplit("/", 1)[1].partition("-")[0])
                if page and _beyond(page[-1]["path"], key):
                    break
            if size is None:
                try:
                    size = (await self._found(key, self._head))["size"]
                except FileNotFoundError as missing:
                    object_missing(missing, self._bucket)
                    return None
        newest = max(markers, key=markers.__getitem__, default="-application%2Foctet-stream")
        media = urllib.parse.unquote(newest.rsplit("/", 1)[-1].partition("-")[2])
        return Blob(sha256=sha256, size=size, media_type=media)

    async def _head(self, key: str) -> "ObjectMeta":
        return await obstore.head_async(self._store, key)

    async def stat_many(
        self, scope: Scope, blobs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], Blob]:
        """Return many blobs' records, a missing one left out; see :meth:`~.blobs.Blobs.stat_many`.

        The store has no batch read of heads: they are asked :data:`STAT_AT_ONCE` at a time.
        """
        gate = asyncio.Semaphore(STAT_AT_ONCE)

        async def one(artifact_id: str, sha256: str) -> Blob | None:
            async with gate:
                return await self.stat(scope, artifact_id, sha256)

        found = await asyncio.gather(*(one(*blob) for blob in blobs))
        return {blob: record for blob, record in zip(blobs, found, strict=True) if record}

    async def _markers(self, key: str) -> dict[str, int]:
        """Return a blob's markers, each with its put time."""
        markers: dict[str, int] = {}
        async for page in obstore.list(self._store, prefix=f"{key}.at/"):
            for meta in page:
                markers[meta["path"]] = int(meta["path"].rsplit("/", 1)[1].partition("-")[0])
        return markers

    async def _set_aside(self, key: str) -> list[str]:
        """Return the copies of a blob's bytes that a running (or died) collect set aside."""
        listed = await obstore.list(self._store, prefix=f"{key}.gone/").collect_async()
        return [meta["path"] for meta in listed]

    async def _found[T](self, key: str, ask: Callable[[str], Awaitable[T]]) -> T:
        """Ask for a blob's object; if it is missing, for a copy collect set aside, then again.

        A collect that set the bytes aside for a put marked meanwhile puts them back before it
        deletes the copy: a read finds the object, or the copy, or (once it is back) the object.

        Raises:
            FileNotFoundError: If there is neither.
        """
        try:
            return await ask(key)
        except FileNotFoundError as missing:
            object_missing(missing, self._bucket)
        for copy in await self._set_aside(key):
            try:
                return await ask(copy)
            except FileNotFoundError as missing:
                object_missing(missing, self._bucket)
        return await ask(key)

    async def read(self, scope: Scope, artifact_id: str, sha256: str) -> AsyncIterator[bytes]:
        """Yield a blob's bytes in chunks of ``CHUNK_SIZE``, checking the digest as they go.

        The last chunk is held back until the digest matches: a damaged object is cut short.

        Raises:
            NotFound: On the first iteration, if there is no such blob.
            BlobDamaged: Before the last chunk, if the bytes don't match their digest.
            StoreFailed: If the store failed.
        """
        key = self._key(scope, artifact_id, sha256)
        async with translated(self._bucket):
            try:
                result = await self._found(key, lambda at: obstore.get_async(self._store, at))
            except FileNotFoundError as missing:
                object_missing(missing, self._bucket)
                raise NotFound("blob", sha256) from None
            digest = hashlib.sha256()
            held: bytes | None = None
            pieces = _hashed(result.stream(min_chunk_size=READ_PIECE), digest.update)
            async for chunk in _chunks(pieces):
                if held is not None:
                    yield held
                held = chunk
            if digest.hexdigest() != sha256:
                raise BlobDamaged(sha256)
            if held is not None:
                yield held

    # ─── collect ──────────────────────────────────────────────────────────────

    async def collect(
        self, scope: Scope, referenced: Set[tuple[str, str]], *, before: datetime
    ) -> int:
        """Remove unreferenced blobs whose newest put is before ``before``; return how many.

        Also removes stale markers, and staged large puts begun before ``before`` (puts that
        died). Each blob's markers are listed again just before it goes, so a put that
        refreshed it meanwhile keeps it.
        """
        cutoff = (before - EPOCH) // timedelta(microseconds=1)
        start = self._scope_key(scope)
        entries: dict[tuple[str, str], _Entry] = {}
        staged: list[str] = []
        async with translated(self._bucket):
            async for page in obstore.list(self._store, prefix=start):
                for meta in page:
                    path = meta["path"]
                    parts = path[len(start) :].split("/")
                    if len(parts) == 1:
                        if parts[0].startswith("~") and int(parts[0][1:21]) < cutoff:
                            staged.append(path)
                        continue
                    artifact_id = urllib.parse.unquote(parts[0])
                    sha256 = parts[1].removesuffix(".at").removesuffix(".gone")
                    entry = entries.setdefault((artifact_id, sha256), _Entry())
                    if len(parts) == 2:
                        entry.key = path
                    elif parts[1].endswith(".gone"):
                        entry.set_aside[path] = int(parts[2].partition("-")[0])
                    else:
                        entry.markers[path] = int(parts[2].partition("-")[0])
        removed = 0
        for (artifact_id, sha256), entry in entries.items():
            if entry.set_aside:
                # A collect is setting these bytes aside, or died doing it: one that died
                # (before the cutoff) has its copy put back, and the blob waits for a later run.
                await self._restore(self._key(scope, artifact_id, sha256), entry, cutoff)
                continue
            if entry.put_at >= cutoff or ((artifact_id, sha256) in referenced and entry.key):
                stale = [path for path, stamp in entry.markers.items() if stamp < entry.put_at]
                await self._delete(stale)
                continue
            removed += await self._remove(entry, cutoff)
        await self._delete(staged)
        return removed

    async def _restore(self, key: str, entry: _Entry, cutoff: int) -> None:
        """Put back the copies a collect that died set aside, and delete them."""
        died = [copy for copy, stamp in entry.set_aside.items() if stamp < cutoff]
        async with translated(self._bucket):
            for copy in died:
                await self._put_back(copy, key)
        await self._delete(died)

    async def _put_back(self, copy: str, key: str) -> None:
        # A put may have created the object again meanwhile: the same bytes.
        with contextlib.suppress(AlreadyExistsError):
            await obstore.copy_async(self._store, copy, key, overwrite=False)

    async def _marked_since(self, key: str, cutoff: int) -> bool:
        """Whether a put marked the blob at or after the cutoff."""
        async with translated(self._bucket):
            return _Entry(markers=await self._markers(key)).put_at >= cutoff

    async def _remove(self, entry: _Entry, cutoff: int) -> int:
        """Remove a blob and its markers if no put marked it since the listing; 1 if removed.

        The bytes are copied aside, the object deleted, and the markers looked at again: a put
        that marked the blob before that look gets its bytes back; one that marks it after
        finds no object and creates it (ADR-0024 lists every interleaving).
        """
        if entry.key is not None:
            if await self._marked_since(entry.key, cutoff):
                return 0
            copy = f"{entry.key}.gone/{self._stamp():020d}-{uuid.uuid4().hex}"
            async with translated(self._bucket):
                try:
                    await obstore.copy_async(self._store, entry.key, copy)
                except FileNotFoundError as gone:
                    # Another collect set them aside first: it decides.
                    object_missing(gone, self._bucket)
                    return 0
                await obstore.delete_async(self._store, entry.key)
            kept = await self._marked_since(entry.key, cutoff)
            if kept:
                async with translated(self._bucket):
                    await self._put_back(copy, entry.key)
            await self._delete([copy])
            if kept:
                return 0
        await self._delete(list(entry.markers))
        return int(entry.key is not None)

    async def _delete(self, keys: list[str]) -> None:
        if keys:
            async with translated(self._bucket):
                await obstore.delete_async(self._store, keys)


async def _hashed(
    pieces: AsyncIterator[Buffer], update: Callable[[Buffer], object]
) -> AsyncIterator[Buffer]:
    """Yield the client's pieces as they come, each hashed in a worker thread meanwhile.

    The hash releases the GIL: a piece is hashed while the next one downloads and the one
    before is handed on. The digest is whole once the last piece is yielded and the loop ends.
    """
    hashed: asyncio.Future[object] | None = None
    async for piece in pieces:
        if hashed is not None:
            await hashed
        hashed = asyncio.ensure_future(asyncio.to_thread(update, piece))
        yield piece
    if hashed is not None:
        await hashed


async def _chunks(pieces: AsyncIterator[Buffer]) -> AsyncIterator[bytes]:
    """Cut the client's pieces into chunks of exactly :data:`CHUNK_SIZE`, the last shorter."""
    pending: list[memoryview] = []
    held = 0
    async for piece in pieces:
        view = memoryview(piece)
        while held + len(view) >= CHUNK_SIZE:
            cut = CHUNK_SIZE - held
            yield b"".join([*pending, view[:cut]])
            pending, held, view = [], 0, view[cut:]
        if view:
            pending.append(view)
            held += len(view)
    if held:
        yield b"".join(pending)


def _beyond(path: str, key: str) -> bool:
    """Whether a listing in the store's order has passed a key and everything named after it."""
    return path > key and not path.startswith(key)


def _quote(part: str) -> str:
    return urllib.parse.quote(part, safe="")


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def _joined(
    head: list[bytes], rest: AsyncIterator[bytes], hashing: Hashing
) -> AsyncIterator[bytes]:
    """Yield the pieces already read, then hash and yield the rest of the stream, then check it.

    Raises:
        InvalidState: At the end, if the bytes don't hash to the digest expected.
    """
    for piece in head:
        yield piece
    head.clear()
    async for piece in rest:
        hashing.update(piece)
        yield piece
    # A digest given but not matched stops the stream before it ends: no upload completes.
    hashing.confirmed()


async def _then(
    data: AsyncIterator[bytes], last: Callable[[], Awaitable[None]]
) -> AsyncIterator[bytes]:
    """Yield the stream, then do ``last`` before it ends: before a multipart upload completes."""
    async for piece in data:
        yield piece
    await last()


async def _kept(data: AsyncIterator[bytes], failed: list[BaseException]) -> AsyncIterator[bytes]:
    """Yield the stream, keeping whatever stopped it so the put can raise it as it was."""
    try:
        async for piece in data:
            yield piece
    except BaseException as error:
        failed.append(error)
        raise
