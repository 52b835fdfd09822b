"""Alembic's environment for artifactr.files' migrations (RFC-0003).

:func:`artifactr.files.sql.migrate` runs it on a connection it has already opened, inside the
transaction it commits, so the chain is atomic wherever the database's DDL is. Everything else
comes from the configuration that :func:`artifactr.files.sql.schema.alembic_config` builds: the
tables, the version table, and the filter that keeps autogenerate to this package's tables,
never artifactr's or the application's beside them.
"""

from alembic import context

attributes = context.config.attributes
context.configure(
    connection=attributes["connection"],
    target_metadata=attributes["metadata"],
    version_table=attributes["version_table"],
    include_name=attributes["include_name"],
)
with context.begin_transaction():
    context.run_migrations()
