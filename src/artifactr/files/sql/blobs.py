"""SQL blobs: native files' bytes in chunk rows, and the render cache, on SQLAlchemy (RFC-0003).

A put streams. A feeder task reads the caller's stream, hashes and counts it, and cuts it into
rows of :data:`~artifactr.files.core.blobs.CHUNK_SIZE`, at most :data:`QUEUE_ROWS` ahead of the
database; meanwhile the put writes the rows under a fresh upload id, so hashing overlaps the
writes. A transaction writes rows as they come, up to :data:`TRANSACTION_ROWS`, and commits as
soon as the next row is more than :data:`LINGER` away: it is never held open across a slow
stream (SQLite has one connection and one writer), yet a fast one is written in few commits.

Only at the end is the digest known: then the last transaction names the upload with it, or, if
the same bytes are already stored for the artifact, refreshes that blob's put time and drops
the upload. A put that dies half-way leaves an upload without a digest, which no read sees and
:meth:`SqlBlobs.collect` removes once it is old enough.

Reads stream too, from one query while the caller keeps up (and again from where they stopped
when it falls :data:`LINGER` behind), and get every chunk of a blob or raise: a blob collected
while it is read is never silently cut short.
"""

import asyncio
import contextlib
import uuid
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Sequence, Set
from dataclasses import dataclass
from datetime import datetime

from artifactr.core import InvalidState, NotFound
from artifactr.workspace import Scope
from sqlalchemy import ColumnElement, Delete, Select, and_, delete, exists, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from artifactr.files.core.blobs import CHUNK_SIZE, Hashing, RenderKey
from artifactr.files.core.clock import Clock
from artifactr.files.core.manifests import Blob
from artifactr.files.sql._sessions import DatabaseNow, Sessions, finished, to_the_end, upsert_into
from artifactr.files.sql.tables import BlobRow, ChunkRow, RenderRow

QUEUE_ROWS = 2
"""How many chunk rows may wait between the caller's stream and the database: with the rows
being written and the one being cut, what a put holds (about 6 MiB at any size)."""

TRANSACTION_ROWS = 64
"""The most chunk rows one transaction writes, so that even a fast put soon lets others write."""

LINGER = 0.02
"""How long, in seconds, a transaction waits for the stream's next row before it commits, or a
read's for the caller to take one before it ends."""

READ_PAGE = 2
"""How many chunk rows a read fetches per query: what it holds besides the one it hands on."""

type _Item = bytes | Blob | BaseException
"""What the feeder hands the put: chunk rows, then the blob, or whatever stopped the stream."""


type _Rows = asyncio.Queue[bytes | BaseException | None]
"""Where a read's reader task hands rows to the caller: bytes, then None or an error."""

type _Read = tuple[int, int | None, list[bytes]]
"""Where a transaction of a read stopped: the next row, the chunk count (None: no blob), and the
rows the caller was late for."""


@dataclass
class _Upload:
    """A put in progress: where its chunks go, and how many it has written."""

    scope: Scope
    artifact_id: str
    media_type: str
    id: str
    written: int = 0
    started: bool = False


class _Feed:
    """The caller's stream as chunk rows, at most :data:`QUEUE_ROWS` ahead of the database."""

    def __init__(self) -> None:
        self._items: deque[_Item] = deque()
        self._arrived = asyncio.Event()
        self._room = asyncio.Semaphore(QUEUE_ROWS)

    async def fill(self, data: AsyncIterable[bytes], hashing: Hashing, media_type: str) -> None:
        """Read, count and cut the stream into rows; end with its blob or what stopped it.

        Each row is hashed in a worker thread before it is sent, so the event loop goes on
        handing rows to the database meanwhile (hashing releases the GIL).
        """
        try:
            # Pieces wait as views until a row's worth is here; joining them is the one copy.
            parts: list[memoryview] = []
            held = 0
            async for piece in data:
                hashing.count(piece)
                view = memoryview(piece)
                while held + len(view) >= CHUNK_SIZE:
                    cut = CHUNK_SIZE - held
                    await self._send(b"".join([*parts, view[:cut]]), hashing)
                    parts, held, view = [], 0, view[cut:]
                parts.append(view)
                held += len(view)
            if held:
                await self._send(b"".join(parts), hashing)
            self._push(Blob(sha256=hashing.sha256, size=hashing.size, media_type=media_type))
        except BaseException as error:
            # Even a cancellation ends the feed, which never blocks doing so: the put raises
            # the error, or, if it cancelled this task itself, has stopped reading.
            self._push(error)

    async def _send(self, row: bytes, hashing: Hashing) -> None:
        await asyncio.to_thread(hashing.digest, row)
        await self._room.acquire()
        self._push(row)

    def _push(self, item: _Item) -> None:
        self._items.append(item)
        self._arrived.set()

    def _take(self) -> _Item:
        self._room.release()
        return self._items.popleft()

    async def _until(self, count: int, within: float | None) -> None:
        """Wait until ``count`` items are here, or ``within`` seconds pass (None: no limit)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                while len(self._items) < count:
                    self._arrived.clear()
                    await self._arrived.wait()

    async def next(self) -> _Item:
        """Return the next item, waiting for it."""
        await self._until(1, None)
        return self._take()

    async def soon(self, within: float) -> _Item | None:
        """Return the next item if it arrives within ``within`` seconds, else None."""
        await self._until(1, within)
        return self._take() if self._items else None

    async def whole(self) -> tuple[list[bytes], Blob] | None:
        """Take the whole stream if it ends within its first row, with no :data:`LINGER` gap.

        Return its rows (none or one) and its blob; or None, taking nothing, if the stream is
        longer, slower, or failed.
        """
        await self._until(1, None)
        first = self._items[0]
        if isinstance(first, bytes):
            await self._until(2, LINGER)
            if len(self._items) < 2 or not isinstance(last := self._items[1], Blob):
                return None
            self._take()
            self._take()
            return [first], last
        if isinstance(first, Blob):
            self._take()
            return [], first
        return None

    def end(self) -> Blob | None:
        """Return the stream's blob if it is the next item and already here, else None."""
        if self._items and isinstance(first := self._items[0], Blob):
            self._take()
            return first
        return None

    def row(self) -> bytes | None:
        """Return the next item if it is a row that is already here, else None."""
        if self._items and isinstance(first := self._items[0], bytes):
            self._take()
            return first
        return None


class SqlBlobs:
    """Blobs in a SQL database, in chunk rows, so memory stays flat at any size.

    Create the tables with :func:`~artifactr.files.sql.migrate` first. The engine may be
    artifactr's own; on SQLite it must come from :func:`~artifactr.sql.create_sqlite_engine`.

    Args:
        engine: The database. It is not disposed of here.
        clock: The time puts are stamped with; the database's clock if omitted.
    """

    def __init__(self, engine: AsyncEngine, *, clock: Clock | None = None) -> None:
        self._sessions = Sessions(engine, clock)

    async def put(
        self,
        scope: Scope,
        artifact_id: str,
        data: AsyncIterable[bytes],
        media_type: str,
        *,
        limit: int | None = None,
    ) -> Blob:
        """Store bytes as they stream in; see :meth:`artifactr.files.core.blobs.Blobs.put`.

        Raises:
            FileTooLarge: If more than ``limit`` bytes arrive; nothing is stored.
            InvalidState: If the put stalled for so long that :meth:`collect` removed it.
        """
        feed = _Feed()
        feeding = asyncio.ensure_future(feed.fill(data, Hashing(limit), media_type))
        upload = _Upload(scope, artifact_id, media_type, uuid.uuid4().hex)
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
        whole = [(_rows(data), _blob_of(data, media_type)) for data, media_type in items]
        return await self._put_whole(scope, artifact_id, whole)

    @finished
    async def _put_whole(
        self, scope: Scope, artifact_id: str, whole: Sequence[tuple[Sequence[bytes], Blob]]
    ) -> list[Blob]:
        """Store blobs whose every row and digest are known, in one transaction."""
        now = self._sessions.stamp()
        if whole:
            async with self._sessions.begin(scope.tenant_id) as connection:
                await _upsert(connection, scope, artifact_id, whole, now)
        return [blob for _, blob in whole]

    @finished
    async def _store(self, upload: _Upload, item: _Item, feed: _Feed) -> Blob | None:
        """Write rows in one transaction, from ``item`` on, while they keep coming.

        Return the blob if its digest arrived and the transaction attached it, or None if the
        stream fell :data:`LINGER` behind (or :data:`TRANSACTION_ROWS` were written): the put
        then waits for more outside any transaction.
        """
        now = self._sessions.stamp()
        async with self._sessions.begin(upload.scope.tenant_id) as connection:
            await _claim(connection, upload, now)
            written = 0
            while isinstance(item, bytes):
                rows = [item]
                while written + len(rows) < TRANSACTION_ROWS and (row := feed.row()) is not None:
                    rows.append(row)
                await _insert_chunks(connection, upload, rows)
                written += len(rows)
                # At the cap, only the stream's end (its blob, if here already) is let in.
                after = await feed.soon(LINGER) if written < TRANSACTION_ROWS else feed.end()
                if after is None:
                    return None
                item = after
            if isinstance(item, BaseException):
                raise item
            await _attach(connection, upload, item, now)
            return item

    @finished
    async def _discard(self, upload: _Upload) -> None:
        scope = upload.scope
        async with self._sessions.begin(scope.tenant_id) as connection:
            await _drop(connection, scope, upload.id, BlobRow.sha256.is_(None))

    @finished
    async def get(self, scope: Scope, artifact_id: str, sha256: str) -> bytes | None:
        """Return a blob's bytes whole, or None (:meth:`~artifactr.files.core.blobs.Blobs.get`)."""
        async with self._sessions.read(scope.tenant_id) as connection:
            found = await connection.execute(
                select(BlobRow.size, ChunkRow.data)
                .select_from(BlobRow)
                .outerjoin(ChunkRow, _owned_chunks())
                .where(*_blob(scope, artifact_id, sha256))
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
        async with self._sessions.read(scope.tenant_id) as connection:
            found = await connection.execute(
                select(BlobRow.size, BlobRow.media_type).where(*_blob(scope, artifact_id, sha256))
            )
            row = found.first()
        if row is None:
            return None
        return Blob(sha256=sha256, size=row.size, media_type=row.media_type)

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
        async with self._sessions.read(scope.tenant_id) as connection:
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
        never got its digest (a put that died) goes too, but only blobs are counted. Each goes
        in its own short transaction, and only if it is still older than ``before`` then, so
        a put that refreshes it meanwhile keeps it.

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
        for blob_id in doomed:
            gone = await self._remove(scope, blob_id, before)
            removed += sum(sha256 is not None for sha256 in gone)
        return removed

    @finished
    async def _candidates(
        self, scope: Scope, before: datetime
    ) -> Sequence[tuple[str, str, str | None]]:
        async with self._sessions.read(scope.tenant_id) as connection:
            found = await connection.execute(
                select(BlobRow.id, BlobRow.artifact_id, BlobRow.sha256).where(
                    *_scoped(scope), BlobRow.put_at < before
                )
            )
            return [(blob_id, artifact_id, sha256) for blob_id, artifact_id, sha256 in found]

    @finished
    async def _remove(self, scope: Scope, blob_id: str, before: datetime) -> Sequence[str | None]:
        async with self._sessions.begin(scope.tenant_id) as connection:
            gone = await connection.execute(
                delete(BlobRow)
                .where(*_row(scope, blob_id), BlobRow.put_at < before)
                .returning(BlobRow.sha256)
            )
            digests = gone.scalars().all()
            await connection.execute(_orphaned_chunks(scope, blob_id))
        return digests


class SqlRenders:
    """Rendered pages in a SQL database, keyed by :class:`~artifactr.files.core.blobs.RenderKey`.

    Args:
        engine: The database. It is not disposed of here.
    """

    def __init__(self, engine: AsyncEngine) -> None:
        self._sessions = Sessions(engine)

    @finished
    async def get(self, key: RenderKey) -> bytes | None:
        """Return the cached PNG, or None."""
        async with self._sessions.read(key.tenant_id) as connection:
            return await connection.scalar(select(RenderRow.png).where(*_render(key)))

    @finished
    async def put(self, key: RenderKey, png: bytes) -> None:
        """Cache a PNG, replacing any under the same key."""
        # Two renders of one page racing both insert; either PNG will do.
        with contextlib.suppress(IntegrityError):
            async with self._sessions.begin(key.tenant_id) as connection:
                await connection.execute(delete(RenderRow).where(*_render(key)))
                await connection.execute(
                    insert(RenderRow).values(
                        tenant_id=key.tenant_id,
                        workspace_id=key.workspace_id,
                        artifact_id=key.artifact_id,
                        sha256=key.sha256,
                        page=key.page,
                        scale=key.scale,
                        build=key.build,
                        png=png,
                    )
                )


# ─── statements ───────────────────────────────────────────────────────────────


async def _claim(connection: AsyncConnection, upload: _Upload, now: datetime | DatabaseNow) -> None:
    """Create the upload's row, or move its put time on; fail if collect removed it."""
    scope = upload.scope
    if not upload.started:
        upload.started = True
        await connection.execute(
            insert(BlobRow).values(
                tenant_id=scope.tenant_id,
                workspace_id=scope.workspace_id,
                id=upload.id,
                artifact_id=upload.artifact_id,
                sha256=None,
                size=0,
                chunks=0,
                media_type=upload.media_type,
                put_at=now,
            )
        )
        return
    touched = await connection.execute(
        update(BlobRow).where(*_row(scope, upload.id), BlobRow.sha256.is_(None)).values(put_at=now)
    )
    if touched.rowcount == 0:
        raise InvalidState(
            f"upload {upload.id} stalled for longer than the grace period and was collected"
        )


async def _upsert(
    connection: AsyncConnection,
    scope: Scope,
    artifact_id: str,
    whole: Sequence[tuple[Sequence[bytes], Blob]],
    now: datetime | DatabaseNow,
) -> None:
    """Store blobs whose rows and digests are known, or refresh the artifact's copies of them.

    One statement names every new blob, or, where the same bytes are stored already, moves
    their put time on (locking the row, so a concurrent collect waits and then sees it fresh);
    one more writes the chunks of those that are new.
    """
    # A statement may touch a row once: one blob per digest, the last media type named.
    latest = {blob.sha256: (rows, blob) for rows, blob in whole}
    ids = {sha256: uuid.uuid4().hex for sha256 in latest}
    # The time is one value for every row, given apart, so the statement is compiled once.
    new = upsert_into(BlobRow, connection.dialect.name).values(put_at=now)
    named = new.on_conflict_do_update(
        index_elements=[
            BlobRow.tenant_id,
            BlobRow.workspace_id,
            BlobRow.artifact_id,
            BlobRow.sha256,
        ],
        set_={"put_at": new.excluded.put_at, "media_type": new.excluded.media_type},
    ).returning(BlobRow.id)
    named_rows = [
        {
            "tenant_id": scope.tenant_id,
            "workspace_id": scope.workspace_id,
            "id": ids[sha256],
            "artifact_id": artifact_id,
            "sha256": sha256,
            "size": blob.size,
            "chunks": len(rows),
            "media_type": blob.media_type,
        }
        for sha256, (rows, blob) in latest.items()
    ]
    owners = set((await connection.execute(named, named_rows)).scalars())
    chunks = [
        chunk
        for sha256, (rows, _) in latest.items()
        if ids[sha256] in owners
        for chunk in _chunk_rows(scope, ids[sha256], 0, rows)
    ]
    if chunks:
        await connection.execute(insert(ChunkRow), chunks)


def _rows(data: bytes) -> list[bytes]:
    """Cut bytes in memory into chunk rows."""
    return [data[start : start + CHUNK_SIZE] for start in range(0, len(data), CHUNK_SIZE)]


def _blob_of(data: bytes, media_type: str) -> Blob:
    hashing = Hashing()
    hashing.update(data)
    return Blob(sha256=hashing.sha256, size=hashing.size, media_type=media_type)


async def _insert_chunks(
    connection: AsyncConnection, upload: _Upload, rows: Sequence[bytes]
) -> None:
    chunks = _chunk_rows(upload.scope, upload.id, upload.written, rows)
    await connection.execute(insert(ChunkRow), chunks)
    upload.written += len(rows)


def _chunk_rows(
    scope: Scope, blob_id: str, first: int, rows: Sequence[bytes]
) -> list[dict[str, object]]:
    """Return the parameters of a blob's chunk rows, numbered from ``first``."""
    return [
        {
            "tenant_id": scope.tenant_id,
            "workspace_id": scope.workspace_id,
            "blob_id": blob_id,
            "seq": first + offset,
            "data": row,
        }
        for offset, row in enumerate(rows)
    ]


async def _attach(
    connection: AsyncConnection, upload: _Upload, blob: Blob, now: datetime | DatabaseNow
) -> None:
    """Name the upload with its digest, or keep the artifact's copy of the same bytes instead.

    Either way the stored blob's put time is ``now``: the upload's row got it when this
    transaction claimed it.
    """
    scope = upload.scope
    stored = (
        select(BlobRow.id).where(*_blob(scope, upload.artifact_id, blob.sha256)).with_for_update()
    )
    # Locked, so a concurrent collect waits and then sees the fresh put time. If another put of
    # the same bytes names its upload first, naming ours fails on the unique digest, and the
    # next look finds theirs (or, if collect took it meanwhile, nothing: name ours again).
    owner = await connection.scalar(stored)
    while owner is None:
        owner = await _name(connection, upload, blob) or await connection.scalar(stored)
    if owner != upload.id:
        # The same bytes are stored already: keep them, fresh, and drop this upload.
        await connection.execute(
            update(BlobRow)
            .where(*_row(scope, owner))
            .values(put_at=now, media_type=blob.media_type)
        )
        await _drop(connection, scope, upload.id)


async def _name(connection: AsyncConnection, upload: _Upload, blob: Blob) -> str | None:
    """Give the upload its digest; return its id, or None if another upload has the digest."""
    named = None
    with contextlib.suppress(IntegrityError):
        async with connection.begin_nested():
            await connection.execute(
                update(BlobRow)
                .where(*_row(upload.scope, upload.id))
                .values(sha256=blob.sha256, size=blob.size, chunks=upload.written)
            )
        named = upload.id
    return named


async def _drop(
    connection: AsyncConnection, scope: Scope, blob_id: str, *also: ColumnElement[bool]
) -> None:
    """Delete a blob's row (if ``also`` holds), then its chunks if the row is gone."""
    await connection.execute(delete(BlobRow).where(*_row(scope, blob_id), *also))
    await connection.execute(_orphaned_chunks(scope, blob_id))


def _scoped(scope: Scope) -> tuple[ColumnElement[bool], ...]:
    return BlobRow.tenant_id == scope.tenant_id, BlobRow.workspace_id == scope.workspace_id


def _row(scope: Scope, blob_id: str) -> tuple[ColumnElement[bool], ...]:
    return (*_scoped(scope), BlobRow.id == blob_id)


def _blob(scope: Scope, artifact_id: str, sha256: str) -> tuple[ColumnElement[bool], ...]:
    return (*_scoped(scope), BlobRow.artifact_id == artifact_id, BlobRow.sha256 == sha256)


def _chunks(scope: Scope, blob_id: str) -> tuple[ColumnElement[bool], ...]:
    return (
        ChunkRow.tenant_id == scope.tenant_id,
        ChunkRow.workspace_id == scope.workspace_id,
        ChunkRow.blob_id == blob_id,
    )


def _orphaned_chunks(scope: Scope, blob_id: str) -> Delete:
    """Delete a blob's chunks once its row is gone; while a put keeps the row, they stay."""
    return delete(ChunkRow).where(*_chunks(scope, blob_id), ~exists().where(*_row(scope, blob_id)))


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
    chunks = and_(_owned_chunks(), ChunkRow.seq >= start)
    if end is not None:
        chunks = and_(chunks, ChunkRow.seq < end)
    return (
        select(BlobRow.chunks, ChunkRow.seq, ChunkRow.data)
        .select_from(BlobRow)
        .outerjoin(ChunkRow, chunks)
        .where(*_blob(scope, *key))
        .order_by(ChunkRow.seq)
    )


def _owned_chunks() -> ColumnElement[bool]:
    """Joins a blob's row to its chunk rows."""
    return and_(
        ChunkRow.tenant_id == BlobRow.tenant_id,
        ChunkRow.workspace_id == BlobRow.workspace_id,
        ChunkRow.blob_id == BlobRow.id,
    )


def _render(key: RenderKey) -> tuple[ColumnElement[bool], ...]:
    return (
        RenderRow.tenant_id == key.tenant_id,
        RenderRow.workspace_id == key.workspace_id,
        RenderRow.artifact_id == key.artifact_id,
        RenderRow.sha256 == key.sha256,
        RenderRow.page == key.page,
        RenderRow.scale == key.scale,
        RenderRow.build == key.build,
    )
