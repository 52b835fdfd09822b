"""Spooling: an incoming file, hashed and counted as it arrives (RFC-0003 "People").

An upload and a check-in stream their file in. It is held in memory up to :data:`SPOOL_SIZE`
and on disk past it, hashed and counted on the way, and refused past the service's size limit,
so the fingerprint, the app and the blob store each read it from the start, in bounded memory.
"""

import tempfile
from collections.abc import AsyncIterable, AsyncIterator
from typing import IO, Final

from artifactr.files.core.blobs import CHUNK_SIZE, Hashing

SPOOL_SIZE: Final = 8 * 1024 * 1024
"""How much of an incoming file is held in memory before it spools to disk."""


class Spooled:
    """An incoming file, hashed and counted as it arrived, held in memory or on disk."""

    def __init__(self, file: IO[bytes], hashing: Hashing) -> None:
        self.file = file
        """The bytes, rewound."""
        self.sha256 = hashing.sha256
        """Their digest."""
        self.size = hashing.size
        """How many."""

    async def chunks(self) -> AsyncIterator[bytes]:
        """Yield the bytes in chunks, from the start."""
        self.file.seek(0)
        while chunk := self.file.read(CHUNK_SIZE):
            yield chunk

    def close(self) -> None:
        """Free the memory or the temporary file."""
        self.file.close()


async def spool(data: AsyncIterable[bytes], *, limit: int) -> Spooled:
    """Take a stream into memory, or disk past :data:`SPOOL_SIZE`, hashing it as it arrives.

    Raises:
        FileTooLarge: If more than ``limit`` bytes arrive.
    """
    file = _spool_file()
    hashing = Hashing(limit)
    try:
        async for chunk in data:
            hashing.update(chunk)
            file.write(chunk)
    except BaseException:
        file.close()
        raise
    file.seek(0)
    return Spooled(file, hashing)


def _spool_file() -> IO[bytes]:
    return tempfile.SpooledTemporaryFile(max_size=SPOOL_SIZE)
