"""Schema: creating and upgrading artifactr.files' tables with its own Alembic chain (RFC-0003).

The migrations ship in the package and record their version in
``artifactr_files_alembic_version``; run them after artifactr's, on the same engine::

    await artifactr.sql.migrate(engine, application_role="app")
    await artifactr.files.sql.migrate(engine, application_role="app")

On PostgreSQL every table gets artifactr's row-level security policy.
"""

from alembic import command
from alembic.config import Config
from artifactr.sql.tenancy import grant
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.sql.tables import TABLES, VERSION_TABLE, metadata, owned

SCRIPT_LOCATION = "artifactr.files.migrations:."
"""Where Alembic finds the chain, from an editable install or a wheel."""


async def migrate(engine: AsyncEngine, *, application_role: str | None = None) -> None:
    """Upgrade the database to this package's latest schema, creating the tables if needed.

    Run it as the tables' owner when the application deploys or starts, after artifactr's own
    ``migrate``. It runs in one transaction and is safe to run on every start: a database that
    is up to date is left alone.

    Args:
        engine: The database, as the tables' owner.
        application_role: A role that owns nothing, which the application connects as so that
            row-level security holds: it is granted this package's tables, on PostgreSQL. It
            must exist.
    """
    async with engine.begin() as connection:
        await connection.run_sync(_upgrade)
        if application_role is not None:
            await connection.run_sync(grant, application_role, TABLES)


def alembic_config(connection: Connection) -> Config:
    """Return the Alembic configuration that runs the chain on an open connection.

    It carries what ``env.py`` needs: the connection, the tables (for autogenerate), the
    version table and the filter that keeps autogenerate to this package's tables.
    """
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    config.attributes.update(
        connection=connection,
        metadata=metadata,
        version_table=VERSION_TABLE,
        include_name=owned,
    )
    return config


def _upgrade(connection: Connection) -> None:
    command.upgrade(alembic_config(connection), "head")
