"""SQL blobs: native files' bytes in chunk rows, on SQLAlchemy (RFC-0003).

A put streams: a feeder (:mod:`._feed`) hashes the caller's stream and cuts it into rows of
:data:`~artifactr.files.core.blobs.CHUNK_SIZE` while the put writes them under a fresh upload id
(:mod:`._uploads`), in transactions of up to :data:`TRANSACTION_ROWS` that never wait on a slow
stream longer than :data:`LINGER`. The last transaction names the upload with its digest, or
drops it when the artifact already holds those bytes. An upload that dies half-way is seen by no
read, and :meth:`SqlBlobs.collect` removes it.

Reads stream and get every chunk of a blob or raise: a blob collected while it is read is never
cut short.
"""

import asyncio
import uuid
from collections.abc import AsyncIterable, AsyncIterator, Sequence, Set
from datetime import datetime

from artifactr.core import NotFound
from artifactr.workspace import Scope
from sqlalchemy import Select, and_, delete, select, tuple_
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from artifactr.files.core.blobs import Hashing
from artifactr.files.core.clock import Clock
from artifactr.files.core.manifests import Blob
from artifactr.files.sql._connections import TenantConnections, finished, to_the_end
from artifactr.files.sql._feed import LINGER, Feed, Item
from artifactr.files.sql._feed import QUEUE_ROWS as QUEUE_ROWS
from artifactr.files.sql._uploads import (
    Upload,
    attach,
    blob_of,
    claim,
    drop,
    insert_chunks,
    rows_of,
    upsert,
)
from artifactr.files.sql._where import (
    orphans_among,
    owned_chunks,
    scoped,
    stored_blob,
)
from artifactr.files.sql.renders import SqlRenders as SqlRenders
from artifactr.files.sql.tables import BlobRow, ChunkRow

STAT_BATCH = 4_000
"""How many blobs one statement of :meth:`SqlBlobs.stat_many` asks for: two parameters each,
well under PostgreSQL's 32,767 and SQLite's 32,766."""

COLLECT_BATCH = 500
"""How many blobs one transaction of :meth:`SqlBlobs.collect` removes: two statements."""

TRANSACTION_ROWS = 64
"""The most chunk rows one transaction writes, so that even a fast put soon lets others write."""

READ_PAGE = 2
"""How many chunk rows a read fetches per query: what it holds besides the one it hands on."""

type _Rows = asyncio.Queue[bytes | BaseException | None]
"""Where a read's reader task hands rows to the caller: bytes, then None or an error."""

type _Read = tuple[int, int | None, list[bytes]]
"""Where a transaction of a read stopped: the next row, the chunk count (None: no blob), and the
rows the caller was late for."""


class SqlBlobs:
    """Blobs in a SQL database, in chunk rows, so memory stays flat at any size.

    Create the tables with :func:`~artifactr.files.sql.migrate` first. The engine may be
    artifactr's own; on SQLite it must come from :func:`~artifactr.sql.create_sqlite_engine`.

    Args:
        engine: The database. It is not disposed of here.
        clock: The time puts are stamped with; the database's clock if omitted.
    """

    def __init__(self, engine: AsyncEngine, *, clock: Clock | None = None) -> None:
        self._connections = TenantConnections(engine, clock)

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

        Raises:
            FileTooLarge: If more than ``limit`` bytes arrive; nothing is stored.
            InvalidState: If the bytes don't hash to ``sha256`` (nothing is stored), or if the
                put stalled for so long that :meth:`collect` removed it.
        """
        feed = Feed()
        hashing = Hashing(limit, expected=sha256)
        feeding = asyncio.ensure_future(feed.fill(data, hashing, media_type))
        upload = Upload(scope, artifact_id, media_type, uuid.uuid4().hex)
        try:
            whole = await feed.whole()
            if whole is not None:
                rows, blob = whole
                [stored] = await self._put_whole(scope, artifact_id, [(rows, blob)])
                return stored
            blob = None
            while blob is None:
                blob = await self._store(upload, await feed.next(), feed)
        except BaseException:
            # Whatever stopped the put (too many bytes, the caller's stream, a cancellation),
            # nothing of it may stay; what a crash leaves, collect removes.
            feeding.cancel()
            await asyncio.wait([feeding])
            await self._discard(upload)
            raise
        return blob

    async def put_many(
        self, scope: Scope, artifact_id: str, items: Sequence[tuple[bytes, str]]
    ) -> list[Blob]:
        """Store blobs in memory in one transaction; see :meth:`~.blobs.Blobs.put_many`."""
        whole = [(rows_of(data), blob_of(data, media_type)) for data, media_type in items]
        return await self._put_whole(scope, artifact_id, whole)

    @finished
    async def _put_whole(
        self, scope: Scope, artifact_id: str, whole: Sequence[tuple[Sequence[bytes], Blob]]
    ) -> list[Blob]:
        """Store blobs whose every row and digest are known, in one transaction."""
        now = self._connections.stamp()
        if whole:
            async with self._connections.begin(scope.tenant_id) as connection:
                await upsert(connection, scope, artifact_id, whole, now)
        return [blob for _, blob in whole]

    @finished
    async def _store(self, upload: Upload, item: Item, feed: Feed) -> Blob | None:
        """Write rows in one transaction, from ``item`` on, while they keep coming.

        Return the blob if its digest arrived and the transaction attached it, or None if the
        stream fell :data:`LINGER` behind (or :data:`TRANSACTION_ROWS` were written): the put
        then waits for more outside any transaction.
        """
        now = self._connections.stamp()
        async with self._connections.begin(upload.scope.tenant_id) as connection:
            await claim(connection, upload, now)
            written = 0
            while isinstance(item, bytes):
                rows = [item]
                while written + len(rows) < TRANSACTION_ROWS and (row := feed.row()) is not None:
                    rows.append(row)
                await insert_chunks(connection, upload, rows)
                written += len(rows)
                # At the cap, only the stream's end (its blob, if here already) is let in.
                after = await feed.soon(LINGER) if written < TRANSACTION_ROWS else feed.end()
                if after is None:
                    return None
                item = after
            if isinstance(item, BaseException):
                raise item
            await attach(connection, upload, item, now)
            return item

    @finished
    async def _discard(self, upload: Upload) -> None:
        scope = upload.scope
        async with self._connections.begin(scope.tenant_id) as connection:
            await drop(connection, scope, upload.id, BlobRow.sha256.is_(None))

    @finished
    async def get(self, scope: Scope, artifact_id: str, sha256: str) -> bytes | None:
        """Return a blob's bytes whole, or None (:meth:`~artifactr.files.core.blobs.Blobs.get`)."""
        async with self._connections.read(scope.tenant_id) as connection:
            found = await connection.execute(
                select(BlobRow.size, ChunkRow.data)
                .select_from(BlobRow)
                .outerjoin(ChunkRow, owned_chunks())
                .where(*stored_blob(scope, artifact_id, sha256))
                .order_by(ChunkRow.seq)
            )
            rows = found.all()
        if not rows:
            return None
        # An empty blob's one row carries NULL; fewer bytes than its size mean a damaged store:
        # answer missing.
        data = b"".join(chunk for _, chunk in rows if chunk)
        return data if len(data) == rows[0].size else None

    @finished
    async def stat(self, scope: Scope, artifact_id: str, sha256: str) -> Blob | None:
        """Return a blob's record, or None; see :meth:`artifactr.files.core.blobs.Blobs.stat`."""
        async with self._connections.read(scope.tenant_id) as connection:
            found = await connection.execute(
                select(BlobRow.size, BlobRow.media_type).where(
                    *stored_blob(scope, artifact_id, sha256)
                )
            )
            row = found.first()
        if row is None:
            return None
        return Blob(sha256=sha256, size=row.size, media_type=row.media_type)

    @finished
    async def stat_many(
        self, scope: Scope, blobs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], Blob]:
        """Return many blobs' records; see :meth:`artifactr.files.core.blobs.Blobs.stat_many`.

        One statement for each :data:`STAT_BATCH` blobs, in one transaction.
        """
        wanted = sorted(set(blobs))
        found: dict[tuple[str, str], Blob] = {}
        async with self._connections.read(scope.tenant_id) as connection:
            for start in range(0, len(wanted), STAT_BATCH):
                batch = wanted[start : start + STAT_BATCH]
                rows = await connection.execute(
                    select(
                        BlobRow.artifact_id, BlobRow.sha256, BlobRow.size, BlobRow.media_type
                    ).where(*scoped(scope), tuple_(BlobRow.artifact_id, BlobRow.sha256).in_(batch))
                )
                for artifact_id, sha256, size, media_type in rows:
                    # Matched by its digest, so it has one (a row mid-upload has none yet).
                    digest = str(sha256)
                    found[artifact_id, digest] = Blob(
                        sha256=digest, size=size, media_type=media_type
                    )
        return found

    async def read(self, scope: Scope, artifact_id: str, sha256: str) -> AsyncIterator[bytes]:
        """Yield a blob's bytes in chunks of at most ``CHUNK_SIZE``, in bounded memory.

        A reader task fetches the rows in one transaction, at most one row ahead of the caller
        (on SQLite from one query's cursor; on PostgreSQL :data:`READ_PAGE` rows per query).
        If the caller falls :data:`LINGER` behind, the reader ends its transaction, and once
        the caller takes the row, begins again from the next one: no transaction stays open
        while a slow caller holds a chunk.

        Raises:
            NotFound: On the first iteration, if there is no such blob; later, if the blob
                was collected while it was read.
        """
        rows: _Rows = asyncio.Queue(maxsize=1)
        reading = asyncio.ensure_future(self._read_into(rows, scope, artifact_id, sha256))
        try:
            while (row := await rows.get()) is not None:
                if isinstance(row, BaseException):
                    raise row
                yield row
        finally:
            # Whether the blob ended or the caller stopped early, the reader is done with.
            reading.cancel()
            await asyncio.wait([reading])

    async def _read_into(
        self,
        rows: _Rows,
        scope: Scope,
        artifact_id: str,
        sha256: str,
    ) -> None:
        """Hand the blob's rows to ``rows``, then None; or the error that stopped them."""
        try:
            start, count = 0, 1
            while start < count:
                start, count = await self._stream(rows, scope, artifact_id, sha256, start)
        except Exception as error:
            await rows.put(error)
            return
        await rows.put(None)

    async def _stream(
        self,
        rows: _Rows,
        scope: Scope,
        artifact_id: str,
        sha256: str,
        start: int,
    ) -> tuple[int, int]:
        """Hand rows from ``start`` on in one transaction, until they end or the caller lags.

        Returns:
            The next row to read and the blob's chunk count.

        Raises:
            NotFound: If the blob is gone, or a row is missing (a damaged store).
        """
        key = (artifact_id, sha256)
        async with self._connections.read(scope.tenant_id) as connection:
            if connection.dialect.name == "sqlite":
                start, count, late = await _cursor(connection, rows, scope, key, start)
            else:
                start, count, late = await _pages(connection, rows, scope, key, start)
        if count is None or (not late and start < count):
            # No blob, or a gap in its rows: a damaged store, or a blob collected meanwhile.
            raise NotFound("blob", sha256)
        # The caller is slow: wait for it outside any transaction.
        for chunk in late:
            await rows.put(chunk)
        return start, count

    async def collect(
        self, scope: Scope, referenced: Set[tuple[str, str]], *, before: datetime
    ) -> int:
        """Remove unreferenced blobs and abandoned uploads put before ``before``.

        A blob goes if no ``(artifact_id, sha256)`` in ``referenced`` names it; an upload that
        never got its digest (a put that died) goes too, but only blobs are counted. They go
        :data:`COLLECT_BATCH` at a time, each batch in its own short transaction of two
        statements, and each blob only if it is still older than ``before`` then, so a put that
        refreshes it meanwhile keeps it.

        Returns:
            How many blobs were removed.
        """
        candidates = await self._candidates(scope, before)
        doomed = [
            blob_id
            for blob_id, artifact_id, sha256 in candidates
            if sha256 is None or (artifact_id, sha256) not in referenced
        ]
        removed = 0
        for start in range(0, len(doomed), COLLECT_BATCH):
            gone = await self._remove(scope, doomed[start : start + COLLECT_BATCH], before)
            removed += sum(sha256 is not None for sha256 in gone)
        return removed

    @finished
    async def _candidates(
        self, scope: Scope, before: datetime
    ) -> Sequence[tuple[str, str, str | None]]:
        async with self._connections.read(scope.tenant_id) as connection:
            found = await connection.execute(
                select(BlobRow.id, BlobRow.artifact_id, BlobRow.sha256).where(
                    *scoped(scope), BlobRow.put_at < before
                )
            )
            return [(blob_id, artifact_id, sha256) for blob_id, artifact_id, sha256 in found]

    @finished
    async def _remove(
        self, scope: Scope, blob_ids: Sequence[str], before: datetime
    ) -> Sequence[str | None]:
        async with self._connections.begin(scope.tenant_id) as connection:
            gone = await connection.execute(
                delete(BlobRow)
                .where(*scoped(scope), BlobRow.id.in_(blob_ids), BlobRow.put_at < before)
                .returning(BlobRow.sha256)
            )
            digests = gone.scalars().all()
            await connection.execute(orphans_among(scope, blob_ids))
        return digests


# ─── statements ───────────────────────────────────────────────────────────────


async def _hand(rows: _Rows, data: list[bytes]) -> list[bytes]:
    """Hand rows to the caller while it keeps up; return those it was :data:`LINGER` late for."""
    for taken, chunk in enumerate(data):
        try:
            async with asyncio.timeout(LINGER):
                await rows.put(chunk)
        except TimeoutError:
            return data[taken:]
    return []


async def _cursor(
    connection: AsyncConnection, rows: _Rows, scope: Scope, key: tuple[str, str], start: int
) -> _Read:
    """Hand rows from one query's cursor, one fetched at a time (SQLite: no round trips)."""
    query = _rows_from(scope, key, start).execution_options(yield_per=1)
    count, late = None, []
    found = await to_the_end(connection.stream(query))
    while not late and (row := await to_the_end(found.fetchone())) is not None:
        count, seq, chunk = row
        # An empty blob's one row carries NULL; a gap in the rows ends the read short.
        if seq != start:
            break
        start += 1
        late = await _hand(rows, [chunk])
    await to_the_end(found.close())
    return start, count, late


async def _pages(
    connection: AsyncConnection, rows: _Rows, scope: Scope, key: tuple[str, str], start: int
) -> _Read:
    """Hand rows :data:`READ_PAGE` per query (PostgreSQL: asyncpg's cursor fetches 50 rows)."""
    count: int | None = None
    late: list[bytes] = []
    while not late and (count is None or start < count):
        page = await to_the_end(
            connection.execute(_rows_from(scope, key, start, start + READ_PAGE))
        )
        found = page.all()
        if not found:
            return start, None, []
        count = total = found[0].chunks
        data = [chunk for _, _, chunk in found if chunk]
        # A page short of rows is a gap in the blob: stop, and the read ends short.
        if len(data) != min(total, start + READ_PAGE) - start:
            break
        start += len(data)
        late = await _hand(rows, data)
    return start, count, late


def _rows_from(
    scope: Scope, key: tuple[str, str], start: int, end: int | None = None
) -> Select[int, int, bytes]:
    """Select a blob's chunk count with each of its rows from ``start`` (to ``end``).

    ``key`` is the blob's artifact and digest.
    """
    chunks = and_(owned_chunks(), ChunkRow.seq >= start)
    if end is not None:
        chunks = and_(chunks, ChunkRow.seq < end)
    return (
        select(BlobRow.chunks, ChunkRow.seq, ChunkRow.data)
        .select_from(BlobRow)
        .outerjoin(ChunkRow, chunks)
        .where(*stored_blob(scope, *key))
        .order_by(ChunkRow.seq)
    )
