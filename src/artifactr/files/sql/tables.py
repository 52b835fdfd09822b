"""Tables: the SQL state of artifactr.files, as SQLAlchemy declarative models (RFC-0003).

Every table is ``artifactr_files_*`` and its primary key starts with the tenant and the
workspace, so the package shares artifactr's database without sharing its tables. A blob's bytes
are rows of at most :data:`~artifactr.files.core.blobs.CHUNK_SIZE`, owned by an upload whose
digest is empty until the put has seen every byte. Timestamps are :class:`UtcDateTime`: aware
UTC on every database.
"""

from datetime import UTC, datetime
from typing import Any, override

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    Dialect,
    Double,
    LargeBinary,
    MetaData,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

VERSION_TABLE = "artifactr_files_alembic_version"
"""Where Alembic records this package's schema version, apart from artifactr's and the app's."""

PREFIX = "artifactr_files_"
"""What every table of this package is named with."""


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware timestamp that is always UTC, on PostgreSQL and SQLite alike.

    SQLite keeps datetimes as text and drops their zone, so a value is converted to UTC
    before it is written, and a value read without a zone is UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    @override
    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else value.astimezone(UTC)

    @override
    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        return None if value is None else _utc(value)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class Base(DeclarativeBase):
    """The declarative base of this package's tables."""

    metadata = MetaData(naming_convention={"pk": "pk_%(table_name)s"})


metadata = Base.metadata
"""The schema the migrations build."""


class ScopedRow(Base):
    """A row that belongs to one tenant's workspace."""

    __abstract__ = True

    # Negative sort orders put the scope first, so it leads every primary key, and a
    # workspace's rows are one range of each table's index.
    tenant_id: Mapped[str] = mapped_column(primary_key=True, sort_order=-3)
    workspace_id: Mapped[str] = mapped_column(primary_key=True, sort_order=-2)


class BlobRow(ScopedRow):
    """An upload, and once its digest is known, a blob: bytes of one artifact, by SHA-256.

    While a put streams, ``sha256`` is null and the row is invisible to reads; its ``put_at``
    moves with every batch of chunks, so a stalled put is collected once it is older than
    :meth:`~artifactr.files.sql.SqlBlobs.collect`'s ``before``.
    """

    __tablename__ = "artifactr_files_blobs"
    __table_args__ = (
        UniqueConstraint(
            "tenant_id",
            "workspace_id",
            "artifact_id",
            "sha256",
            name="uq_artifactr_files_blobs_digest",
        ),
    )

    id: Mapped[str] = mapped_column(primary_key=True, sort_order=-1)
    """The upload's id, which its chunks name."""
    artifact_id: Mapped[str]
    sha256: Mapped[str | None]
    """The bytes' digest: null until the put has seen them all."""
    size: Mapped[int] = mapped_column(BigInteger)
    chunks: Mapped[int]
    """How many chunk rows hold the bytes."""
    media_type: Mapped[str]
    put_at: Mapped[datetime] = mapped_column(UtcDateTime())
    """When the bytes were last put, or an upload last wrote a chunk."""


class ChunkRow(ScopedRow):
    """Up to :data:`~artifactr.files.core.blobs.CHUNK_SIZE` bytes of an upload, in order."""

    __tablename__ = "artifactr_files_chunks"

    blob_id: Mapped[str] = mapped_column(primary_key=True, sort_order=-1)
    seq: Mapped[int] = mapped_column(primary_key=True)
    """The chunk's place, from 0."""
    data: Mapped[bytes] = mapped_column(LargeBinary)


class RenderRow(ScopedRow):
    """A rendered page, cached under everything that made it, never the digest alone."""

    __tablename__ = "artifactr_files_renders"

    artifact_id: Mapped[str] = mapped_column(primary_key=True)
    sha256: Mapped[str] = mapped_column(primary_key=True)
    page: Mapped[int] = mapped_column(primary_key=True)
    scale: Mapped[float] = mapped_column(Double, primary_key=True)
    build: Mapped[str] = mapped_column(primary_key=True)
    png: Mapped[bytes] = mapped_column(LargeBinary)


class LeaseRow(ScopedRow):
    """Who holds an artifact, and until when: one row per artifact."""

    __tablename__ = "artifactr_files_leases"

    artifact_id: Mapped[str] = mapped_column(primary_key=True)
    holder: Mapped[str]
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())


class CheckoutRow(ScopedRow):
    """A person's check-out of a native file: open, or ended and what its check-in did."""

    __tablename__ = "artifactr_files_checkouts"

    id: Mapped[str] = mapped_column(primary_key=True)
    artifact_id: Mapped[str]
    base_version: Mapped[int]
    base_sha256: Mapped[str]
    actor: Mapped[Any] = mapped_column(JSON)
    """The actor as JSON, one of artifactr's ``Actor`` union."""
    expires_at: Mapped[datetime] = mapped_column(UtcDateTime())
    created_at: Mapped[datetime] = mapped_column(UtcDateTime())
    state: Mapped[str]
    """``open``, ``checked_in`` or ``discarded``."""
    ended_by: Mapped[Any | None] = mapped_column(JSON(none_as_null=True))
    """Who ended it, as the actor's JSON; null while open."""
    ended_at: Mapped[datetime | None] = mapped_column(UtcDateTime())
    outcome: Mapped[str | None]
    """What its check-in did (``applied``, ``unchanged``, ``proposed``); null until one did."""
    outcome_version: Mapped[int | None]
    proposal_id: Mapped[str | None]
    fingerprint: Mapped[str | None]
    """The fingerprint of the file its check-in took."""
    claim: Mapped[str | None]
    """The token of the check-in at work on it, until ``claimed_until``."""
    claimed_until: Mapped[datetime | None] = mapped_column(UtcDateTime())
    lock: Mapped[str | None]
    """The editor's lock string (WOPI, WebDAV), as given; null for a person's check-out."""


class DavNameRow(ScopedRow):
    """A live native file's WebDAV name, unique in its workspace in any case (ADR-0026).

    Kept by :class:`~artifactr.files.sql.SqlHistory` from artifactr's log: a file gets a name
    when it is created or renamed, and loses it when it is archived.
    """

    __tablename__ = "artifactr_files_dav_names"
    __table_args__ = (
        UniqueConstraint(
            "tenant_id", "workspace_id", "folded", name="uq_artifactr_files_dav_names_folded"
        ),
    )

    artifact_id: Mapped[str] = mapped_column(primary_key=True)
    name: Mapped[str]
    """The name, made unique: ``a (2).docx``."""
    folded: Mapped[str]
    """The name casefolded: what a request's name is looked up by."""
    base: Mapped[str]
    """The file's own name as WebDAV cleans it, before it was made unique."""


class DavMarkRow(ScopedRow):
    """How far into a workspace's log its WebDAV names are kept: the last ``seq`` read."""

    __tablename__ = "artifactr_files_dav_marks"

    seq: Mapped[int] = mapped_column(BigInteger)


TABLES = tuple(metadata.tables)
"""Every table's name, in the order the migrations create them."""


def owned(name: str | None, type_: str, parent_names: object) -> bool:
    """Return whether Alembic should compare a schema object: only this package's tables.

    For autogenerate's ``include_name``, so a revision never proposes dropping the tables of
    artifactr or the application in the same database.
    """
    del parent_names
    return type_ != "table" or (name or "").startswith(PREFIX)
