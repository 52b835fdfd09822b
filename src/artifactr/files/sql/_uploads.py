"""Uploads: the statements that write a put's rows, and name them with its digest (RFC-0003).

A streamed put claims an upload row (:func:`claim`), writes its chunks (:func:`insert_chunks`)
and names the upload with its digest, or keeps the artifact's copy of the same bytes
(:func:`attach`). :func:`upsert` stores a blob known whole; :func:`drop` deletes one.
"""

import contextlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from artifactr.core import InvalidState
from artifactr.workspace import Scope
from sqlalchemy import ColumnElement, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from artifactr.files.core.blobs import CHUNK_SIZE, Hashing
from artifactr.files.core.manifests import Blob
from artifactr.files.sql._connections import DatabaseNow, upsert_into
from artifactr.files.sql._where import blob_row, orphaned_chunks, stored_blob
from artifactr.files.sql.tables import BlobRow, ChunkRow


@dataclass
class Upload:
    """A put in progress: where its chunks go, and how many it has written."""

    scope: Scope
    artifact_id: str
    media_type: str
    id: str
    written: int = 0
    started: bool = False


async def claim(connection: AsyncConnection, upload: Upload, now: datetime | DatabaseNow) -> None:
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
        update(BlobRow)
        .where(*blob_row(scope, upload.id), BlobRow.sha256.is_(None))
        .values(put_at=now)
    )
    if touched.rowcount == 0:
        raise InvalidState(
            f"upload {upload.id} stalled for longer than the grace period and was collected"
        )


async def upsert(
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


def rows_of(data: bytes) -> list[bytes]:
    """Cut bytes in memory into chunk rows."""
    return [data[start : start + CHUNK_SIZE] for start in range(0, len(data), CHUNK_SIZE)]


def blob_of(data: bytes, media_type: str) -> Blob:
    """Return the blob of bytes in memory: their digest, size and media type."""
    hashing = Hashing()
    hashing.update(data)
    return Blob(sha256=hashing.sha256, size=hashing.size, media_type=media_type)


async def insert_chunks(connection: AsyncConnection, upload: Upload, rows: Sequence[bytes]) -> None:
    """Write an upload's next chunk rows, numbered on from those it has written."""
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


async def attach(
    connection: AsyncConnection, upload: Upload, blob: Blob, now: datetime | DatabaseNow
) -> None:
    """Name the upload with its digest, or keep the artifact's copy of the same bytes instead.

    Either way the stored blob's put time is ``now``: the upload's row got it when this
    transaction claimed it.
    """
    scope = upload.scope
    stored = (
        select(BlobRow.id)
        .where(*stored_blob(scope, upload.artifact_id, blob.sha256))
        .with_for_update()
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
            .where(*blob_row(scope, owner))
            .values(put_at=now, media_type=blob.media_type)
        )
        await drop(connection, scope, upload.id)


async def _name(connection: AsyncConnection, upload: Upload, blob: Blob) -> str | None:
    """Give the upload its digest; return its id, or None if another upload has the digest."""
    named = None
    with contextlib.suppress(IntegrityError):
        async with connection.begin_nested():
            await connection.execute(
                update(BlobRow)
                .where(*blob_row(upload.scope, upload.id))
                .values(sha256=blob.sha256, size=blob.size, chunks=upload.written)
            )
        named = upload.id
    return named


async def drop(
    connection: AsyncConnection, scope: Scope, blob_id: str, *also: ColumnElement[bool]
) -> None:
    """Delete a blob's row (if ``also`` holds), then its chunks if the row is gone."""
    await connection.execute(delete(BlobRow).where(*blob_row(scope, blob_id), *also))
    await connection.execute(orphaned_chunks(scope, blob_id))
