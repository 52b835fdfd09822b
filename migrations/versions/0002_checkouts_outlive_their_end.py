"""Check-outs outlive their end: their state, who ended them and when, and their check-in's outcome.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "artifactr_files_checkouts"
"""The table this revision changes."""


def upgrade() -> None:
    """Upgrade the schema."""
    # A batch: PostgreSQL alters the table in place (its tenant policy stays); SQLite, which
    # can't drop a default, copies it.
    with op.batch_alter_table(TABLE) as batch:
        batch.add_column(sa.Column("state", sa.String(), nullable=False, server_default="open"))
        batch.add_column(sa.Column("ended_by", sa.JSON(), nullable=True))
        batch.add_column(sa.Column("ended_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("outcome", sa.String(), nullable=True))
        batch.add_column(sa.Column("outcome_version", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("proposal_id", sa.String(), nullable=True))
        batch.add_column(sa.Column("fingerprint", sa.String(), nullable=True))
        batch.add_column(sa.Column("claim", sa.String(), nullable=True))
        batch.add_column(sa.Column("claimed_until", sa.DateTime(timezone=True), nullable=True))
    # A check-out checked in before this revision was checked in by its own actor, when its
    # expiry says; what its check-in did was not kept.
    op.execute(
        f"UPDATE {TABLE} SET state = 'checked_in', ended_by = actor, ended_at = expires_at "
        "WHERE checked_in"
    )
    with op.batch_alter_table(TABLE) as batch:
        batch.alter_column("state", server_default=None)
        batch.drop_column("checked_in")


def downgrade() -> None:
    """Downgrade the schema."""
    with op.batch_alter_table(TABLE) as batch:
        batch.add_column(
            sa.Column("checked_in", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    # Before this revision a discarded check-out was forgotten.
    op.execute(f"DELETE FROM {TABLE} WHERE state = 'discarded'")
    op.execute(f"UPDATE {TABLE} SET checked_in = (state = 'checked_in')")
    with op.batch_alter_table(TABLE) as batch:
        batch.alter_column("checked_in", server_default=None)
        for column in (
            "state",
            "ended_by",
            "ended_at",
            "outcome",
            "outcome_version",
            "proposal_id",
            "fingerprint",
            "claim",
            "claimed_until",
        ):
            batch.drop_column(column)
