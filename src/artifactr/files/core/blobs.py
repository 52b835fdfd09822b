"""Blobs: the content-addressed store of native files' bytes (RFC-0003).

A manifest names bytes by digest; they live here, scoped by tenant, workspace and artifact, and
are never returned to another scope. A put is idempotent and refreshes the blob's put time, so
:meth:`Blobs.collect`'s grace period protects a put that races a commit. The port and the
in-memory adapter; the SQL one is :mod:`artifactr.files.sql.blobs`.
"""

import hashlib
from collections.abc import AsyncIterable, AsyncIterator, Sequence, Set
from datetime import datetime
from typing import Protocol

from artifactr.core import InvalidState, NotFound
from artifactr.workspace import Scope

from artifactr.files.core.clock import Clock, utc_now
from artifactr.files.core.errors import FileTooLarge
from artifactr.files.core.manifests import Blob

CHUNK_SIZE = 1 << 20
"""How many bytes a streaming read yields at a time, and the SQL adapter's row size (1 MiB)."""


class Blobs(Protocol):
    """Where native files' bytes live, by scope, artifact and SHA-256.

    Every method is scoped: a blob put for one tenant, workspace or artifact is never returned
    for another, even with the same digest.
    """

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
        """Store bytes as they stream in, hashing and counting them; return their :class:`Blob`.

        Idempotent: putting the same bytes again returns the same blob and refreshes its put
        time. ``sha256`` is the digest the bytes are known to have, if the caller hashed them
        already (a spooled upload): an adapter may store them under it as they stream, where it
        would otherwise store them aside and move them once their digest is known (S3: a copy,
        ADR-0024). The bytes are hashed all the same, and checked against it before any of
        them is stored under it.

        Raises:
            FileTooLarge: If more than ``limit`` bytes arrive; nothing is stored.
            InvalidState: If the bytes don't hash to ``sha256``; nothing is stored.
        """
        ...

    async def put_many(
        self, scope: Scope, artifact_id: str, items: Sequence[tuple[bytes, str]]
    ) -> list[Blob]:
        """Store several blobs already in memory, as ``(bytes, media type)``, all in one go.

        Return a :class:`Blob` for each, in order. Each is put as :meth:`put` puts it,
        idempotently, but an adapter may store them together: the SQL one in one transaction,
        which is what an edit's content, text, review and commands cost.
        """
        ...

    async def get(self, scope: Scope, artifact_id: str, sha256: str) -> bytes | None:
        """Return a blob's bytes whole, or None if there is none."""
        ...

    async def stat(self, scope: Scope, artifact_id: str, sha256: str) -> Blob | None:
        """Return the store's record of a blob (digest, size, media type), or None if none.

        What a download reports (length, ``ETag``, type) comes from here, never from a
        manifest alone: a manifest is a claim anyone with a generic write may make.
        """
        ...

    async def stat_many(
        self, scope: Scope, blobs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], Blob]:
        """Return the store's records of many blobs, by ``(artifact_id, sha256)``, at once.

        A blob the store lacks is left out. A listing of many files reports each one's bytes
        from this one read (issue 41), as :meth:`stat` reports one file's.
        """
        ...

    def read(self, scope: Scope, artifact_id: str, sha256: str) -> AsyncIterator[bytes]:
        """Return a blob's bytes as chunks of at most :data:`CHUNK_SIZE`, in bounded memory.

        Raises:
            NotFound: On the first iteration, if there is no such blob.
        """
        ...

    async def collect(
        self, scope: Scope, referenced: Set[tuple[str, str]], *, before: datetime
    ) -> int:
        """Remove the scope's blobs that no ``(artifact_id, sha256)`` names, put before ``before``.

        Return how many were removed.
        """
        ...


class Hashing:
    """Hashes and counts bytes as they pass, refusing more than a limit.

    Args:
        limit: The most bytes that may pass; any number if omitted.
        expected: The digest the bytes should have, which :meth:`confirmed` checks.
    """

    def __init__(self, limit: int | None = None, *, expected: str | None = None) -> None:
        self._sha = hashlib.sha256()
        self._limit = limit
        self._expected = expected
        self.size = 0
        """How many bytes have passed."""

    def update(self, chunk: bytes) -> None:
        """Count and hash a chunk.

        Raises:
            FileTooLarge: If the total passes the limit.
        """
        self.count(chunk)
        self.digest(chunk)

    def count(self, chunk: bytes) -> None:
        """Count a chunk, which must then be passed to :meth:`digest`, in order.

        Raises:
            FileTooLarge: If the total passes the limit.
        """
        self.size += len(chunk)
        if self._limit is not None and self.size > self._limit:
            raise FileTooLarge(self._limit)

    def digest(self, data: bytes) -> None:
        """Hash counted bytes, in the order they were counted, and in any thread."""
        self._sha.update(data)

    @property
    def sha256(self) -> str:
        """The hex digest of what has passed."""
        return self._sha.hexdigest()

    def confirmed(self) -> str:
        """Return the hex digest of everything that passed, once it is the one expected.

        Raises:
            InvalidState: If a digest was expected and the bytes have another.
        """
        digest = self.sha256
        if self._expected is not None and digest != self._expected:
            raise InvalidState(
                f"the bytes put hash to {digest[:12]}..., not to the digest they were given "
                f"({self._expected[:12]}...): nothing was stored"
            )
        return digest


class InMemoryBlobs:
    """Blobs in a dict: for tests and the embedded demo.

    Args:
        clock: The time a put is stamped with; UTC now if omitted.
    """

    def __init__(self, *, clock: Clock = utc_now) -> None:
        self._clock = clock
        self._blobs: dict[tuple[str, str, str, str], tuple[bytes, str, datetime]] = {}

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
        """Store bytes; see :meth:`Blobs.put`."""
        hashing = Hashing(limit, expected=sha256)
        parts: list[bytes] = []
        async for chunk in data:
            hashing.update(chunk)
            parts.append(chunk)
        digest = hashing.confirmed()
        key = (scope.tenant_id, scope.workspace_id, artifact_id, digest)
        self._blobs[key] = (b"".join(parts), media_type, self._clock())
        return Blob(sha256=digest, size=hashing.size, media_type=media_type)

    async def put_many(
        self, scope: Scope, artifact_id: str, items: Sequence[tuple[bytes, str]]
    ) -> list[Blob]:
        """Store blobs in memory; see :meth:`Blobs.put_many`."""
        return [await self.put(scope, artifact_id, _once(data), media) for data, media in items]

    async def get(self, scope: Scope, artifact_id: str, sha256: str) -> bytes | None:
        """Return a blob's bytes; see :meth:`Blobs.get`."""
        found = self._blobs.get((scope.tenant_id, scope.workspace_id, artifact_id, sha256))
        return None if found is None else found[0]

    async def stat(self, scope: Scope, artifact_id: str, sha256: str) -> Blob | None:
        """Return a blob's record; see :meth:`Blobs.stat`."""
        found = self._blobs.get((scope.tenant_id, scope.workspace_id, artifact_id, sha256))
        if found is None:
            return None
        data, media_type, _ = found
        return Blob(sha256=sha256, size=len(data), media_type=media_type)

    async def stat_many(
        self, scope: Scope, blobs: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], Blob]:
        """Return many blobs' records; see :meth:`Blobs.stat_many`."""
        found: dict[tuple[str, str], Blob] = {}
        for artifact_id, sha256 in blobs:
            record = await self.stat(scope, artifact_id, sha256)
            if record is not None:
                found[artifact_id, sha256] = record
        return found

    async def read(self, scope: Scope, artifact_id: str, sha256: str) -> AsyncIterator[bytes]:
        """Yield a blob's bytes in chunks; see :meth:`Blobs.read`."""
        data = await self.get(scope, artifact_id, sha256)
        if data is None:
            raise NotFound("blob", sha256)
        for start in range(0, len(data), CHUNK_SIZE):
            yield data[start : start + CHUNK_SIZE]

    async def collect(
        self, scope: Scope, referenced: Set[tuple[str, str]], *, before: datetime
    ) -> int:
        """Remove unreferenced old blobs; see :meth:`Blobs.collect`."""
        doomed = [
            key
            for key, (_, _, put_at) in self._blobs.items()
            if key[:2] == (scope.tenant_id, scope.workspace_id)
            and key[2:] not in referenced
            and put_at < before
        ]
        for key in doomed:
            del self._blobs[key]
        return len(doomed)


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data
