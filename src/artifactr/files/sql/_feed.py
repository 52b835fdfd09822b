"""The feed: a put's stream cut into chunk rows, a few rows ahead of the database (RFC-0003).

:class:`Feed` reads, hashes and counts the caller's stream in a task of its own, and cuts it into
rows of :data:`~artifactr.files.core.blobs.CHUNK_SIZE`, at most :data:`QUEUE_ROWS` ahead of the
database, then hands on the blob or whatever stopped the stream.
"""

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterable

from artifactr.files.core.blobs import CHUNK_SIZE, Hashing
from artifactr.files.core.manifests import Blob

QUEUE_ROWS = 2
"""How many chunk rows may wait between the caller's stream and the database: with the rows
being written and the one being cut, what a put holds (about 6 MiB at any size)."""

LINGER = 0.02
"""How long, in seconds, a transaction waits for the stream's next row before it commits, or a
read's for the caller to take one before it ends."""

type Item = bytes | Blob | BaseException
"""What the feed hands the put: chunk rows, then the blob, or whatever stopped the stream."""


class Feed:
    """The caller's stream as chunk rows, at most :data:`QUEUE_ROWS` ahead of the database."""

    def __init__(self) -> None:
        self._items: deque[Item] = deque()
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
            self._push(Blob(sha256=hashing.confirmed(), size=hashing.size, media_type=media_type))
        except BaseException as error:
            # Even a cancellation ends the feed, which never blocks doing so: the put raises
            # the error, or, if it cancelled this task itself, has stopped reading.
            self._push(error)

    async def _send(self, row: bytes, hashing: Hashing) -> None:
        await asyncio.to_thread(hashing.digest, row)
        await self._room.acquire()
        self._push(row)

    def _push(self, item: Item) -> None:
        self._items.append(item)
        self._arrived.set()

    def _take(self) -> Item:
        self._room.release()
        return self._items.popleft()

    async def _until(self, count: int, within: float | None) -> None:
        """Wait until ``count`` items are here, or ``within`` seconds pass (None: no limit)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(within):
                while len(self._items) < count:
                    self._arrived.clear()
                    await self._arrived.wait()

    async def next(self) -> Item:
        """Return the next item, waiting for it."""
        await self._until(1, None)
        return self._take()

    async def soon(self, within: float) -> Item | None:
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
