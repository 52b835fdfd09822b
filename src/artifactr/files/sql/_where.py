"""Where: the conditions that pick a scope's blob rows and their chunk rows (RFC-0003).

A blob's row is found by its scope and id (an upload's) or its artifact and digest (a stored
blob's); its chunk rows by the blob's id. A chunk row whose blob row is gone is an orphan, which
a put's end, a discard or a collect deletes.
"""

from collections.abc import Sequence

from artifactr.workspace import Scope
from sqlalchemy import ColumnElement, Delete, and_, delete, exists

from artifactr.files.sql.tables import BlobRow, ChunkRow


def scoped(scope: Scope) -> tuple[ColumnElement[bool], ...]:
    """Pick the scope's blob rows."""
    return BlobRow.tenant_id == scope.tenant_id, BlobRow.workspace_id == scope.workspace_id


def blob_row(scope: Scope, blob_id: str) -> tuple[ColumnElement[bool], ...]:
    """Pick a blob's row by its id: an upload's, or a stored blob's."""
    return (*scoped(scope), BlobRow.id == blob_id)


def stored_blob(scope: Scope, artifact_id: str, sha256: str) -> tuple[ColumnElement[bool], ...]:
    """Pick the artifact's stored blob of these bytes, by their digest."""
    return (*scoped(scope), BlobRow.artifact_id == artifact_id, BlobRow.sha256 == sha256)


def _chunks(scope: Scope, blob_id: str) -> tuple[ColumnElement[bool], ...]:
    return (
        ChunkRow.tenant_id == scope.tenant_id,
        ChunkRow.workspace_id == scope.workspace_id,
        ChunkRow.blob_id == blob_id,
    )


def orphaned_chunks(scope: Scope, blob_id: str) -> Delete:
    """Delete a blob's chunks once its row is gone; while a put keeps the row, they stay."""
    return delete(ChunkRow).where(
        *_chunks(scope, blob_id), ~exists().where(*blob_row(scope, blob_id))
    )


def orphans_among(scope: Scope, blob_ids: Sequence[str]) -> Delete:
    """Delete the chunks of these blobs whose rows are gone, in one statement."""
    return delete(ChunkRow).where(
        ChunkRow.tenant_id == scope.tenant_id,
        ChunkRow.workspace_id == scope.workspace_id,
        ChunkRow.blob_id.in_(blob_ids),
        ~exists().where(*scoped(scope), BlobRow.id == ChunkRow.blob_id),
    )


def owned_chunks() -> ColumnElement[bool]:
    """Joins a blob's row to its chunk rows."""
    return and_(
        ChunkRow.tenant_id == BlobRow.tenant_id,
        ChunkRow.workspace_id == BlobRow.workspace_id,
        ChunkRow.blob_id == BlobRow.id,
    )
