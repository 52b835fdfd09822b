"""Check-outs carry an editor's lock string, so a WOPI or WebDAV session is a check-out.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "artifactr_files_checkouts"
"""The table this revision changes."""


def upgrade() -> None:
    """Upgrade the schema."""
    with op.batch_alter_table(TABLE) as batch:
        batch.add_column(sa.Column("lock", sa.String(), nullable=True))


def downgrade() -> None:
    """Downgrade the schema."""
    # An editor's session outlives the column as a person's check-out of the same base.
    with op.batch_alter_table(TABLE) as batch:
        batch.drop_column("lock")
