"""WebDAV names: each live native file's name, unique in its workspace, kept from the log.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from artifactr.sql.tenancy import tenant_policy

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("artifactr_files_dav_names", "artifactr_files_dav_marks")
"""Every table this revision creates: each names its tenant in ``tenant_id``."""


def _scope() -> list[sa.Column[str]]:
    return [
        sa.Column("tenant_id", sa.String(), nullable=False),
        sa.Column("workspace_id", sa.String(), nullable=False),
    ]


def upgrade() -> None:
    """Upgrade the schema."""
    # Empty: each workspace's names are made from artifactr's tables on its first WebDAV
    # request, in its listing order, so every name a client knows stays what it was.
    op.create_table(
        "artifactr_files_dav_names",
        *_scope(),
        sa.Column("artifact_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("folded", sa.String(), nullable=False),
        sa.Column("base", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "workspace_id", "artifact_id", name=op.f("pk_artifactr_files_dav_names")
        ),
        sa.UniqueConstraint(
            "tenant_id", "workspace_id", "folded", name="uq_artifactr_files_dav_names_folded"
        ),
    )
    op.create_table(
        "artifactr_files_dav_marks",
        *_scope(),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "workspace_id", name=op.f("pk_artifactr_files_dav_marks")
        ),
    )
    if op.get_bind().dialect.name == "postgresql":
        for table in TABLES:
            for statement in tenant_policy(table):
                op.execute(statement)


def downgrade() -> None:
    """Downgrade the schema."""
    for table in reversed(TABLES):
        op.drop_table(table)
