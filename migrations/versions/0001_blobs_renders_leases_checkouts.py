"""Blobs in chunk rows, the render cache, artifact leases and check-outs, each tenant's own.

Revision ID: 0001
Revises:
Create Date: 2026-11-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from artifactr.sql.tenancy import tenant_policy

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = (
    "artifactr_files_blobs",
    "artifactr_files_chunks",
    "artifactr_files_renders",
    "artifactr_files_leases",
    "artifactr_files_checkouts",
)
"""Every table this revision creates: each names its tenant in ``tenant_id``."""

_DOUBLE: sa.Double[float] = sa.Double()


def _scope() -> list[sa.Column[str]]:
    return [
        sa.Column("tenant_id", sa.String(), nullable=False),
        sa.Column("workspace_id", sa.String(), nullable=False),
    ]


def upgrade() -> None:
    """Upgrade the schema."""
    op.create_table(
        "artifactr_files_blobs",
        *_scope(),
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("artifact_id", sa.String(), nullable=False),
        sa.Column("sha256", sa.String(), nullable=True),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("chunks", sa.Integer(), nullable=False),
        sa.Column("media_type", sa.String(), nullable=False),
        sa.Column("put_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "workspace_id", "id", name=op.f("pk_artifactr_files_blobs")
        ),
        sa.UniqueConstraint(
            "tenant_id",
            "workspace_id",
            "artifact_id",
            "sha256",
            name="uq_artifactr_files_blobs_digest",
        ),
    )
    op.create_table(
        "artifactr_files_chunks",
        *_scope(),
        sa.Column("blob_id", sa.String(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "workspace_id", "blob_id", "seq", name=op.f("pk_artifactr_files_chunks")
        ),
    )
    op.create_table(
        "artifactr_files_renders",
        *_scope(),
        sa.Column("artifact_id", sa.String(), nullable=False),
        sa.Column("sha256", sa.String(), nullable=False),
        sa.Column("page", sa.Integer(), nullable=False),
        sa.Column("scale", _DOUBLE, nullable=False),
        sa.Column("build", sa.String(), nullable=False),
        sa.Column("png", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id",
            "workspace_id",
            "artifact_id",
            "sha256",
            "page",
            "scale",
            "build",
            name=op.f("pk_artifactr_files_renders"),
        ),
    )
    op.create_table(
        "artifactr_files_leases",
        *_scope(),
        sa.Column("artifact_id", sa.String(), nullable=False),
        sa.Column("holder", sa.String(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "workspace_id", "artifact_id", name=op.f("pk_artifactr_files_leases")
        ),
    )
    op.create_table(
        "artifactr_files_checkouts",
        *_scope(),
        sa.Column("id", sa.String(), nullable=False),
        sa.Column("artifact_id", sa.String(), nullable=False),
        sa.Column("base_version", sa.Integer(), nullable=False),
        sa.Column("base_sha256", sa.String(), nullable=False),
        sa.Column("actor", sa.JSON(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("checked_in", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "workspace_id", "id", name=op.f("pk_artifactr_files_checkouts")
        ),
    )
    # Enabled, not forced: the owner, which migrates, is not held; every other role sees and
    # writes only the rows of the tenant its transaction names.
    if op.get_bind().dialect.name == "postgresql":
        for table in TABLES:
            for statement in tenant_policy(table):
                op.execute(statement)


def downgrade() -> None:
    """Downgrade the schema."""
    # Dropping a table drops its policy.
    for table in reversed(TABLES):
        op.drop_table(table)
