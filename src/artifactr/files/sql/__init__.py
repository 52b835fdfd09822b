"""SQL state: blobs, renders, leases and check-outs in PostgreSQL or SQLite (RFC-0003).

Install the ``artifactr-files-ai[postgres]`` extra (asyncpg) or ``artifactr-files-ai[sqlite]``
(aiosqlite). Share artifactr's engine, not its storage: upgrade the database with artifactr's
``migrate`` first, then with this package's :func:`migrate`, and build the adapters over the
same engine::

    from artifactr.sql import SqlStorage, create_sqlite_engine
    from artifactr.sql import migrate as migrate_artifactr
    from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders, migrate

    engine = create_sqlite_engine("sqlite+aiosqlite:///app.db")
    await migrate_artifactr(engine)
    await migrate(engine)
    files = NativeFiles(
        blobs=SqlBlobs(engine),
        leases=SqlLeases(engine),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
        app=app,
    )

The tables are ``artifactr_files_*``, their primary keys start with the tenant and the
workspace, and on PostgreSQL each has artifactr's row-level security policy. Every transaction
sets its tenant, so connecting as an ``application_role`` keeps each tenant to its own rows.
Bytes live in 1 MiB chunk rows: puts and reads stream, in memory that does not grow with the
file.
"""

from artifactr.files.sql.blobs import SqlBlobs
from artifactr.files.sql.checkouts import SqlCheckouts
from artifactr.files.sql.leases import SqlLeases
from artifactr.files.sql.renders import SqlRenders
from artifactr.files.sql.schema import migrate

__all__ = ["SqlBlobs", "SqlCheckouts", "SqlLeases", "SqlRenders", "migrate"]
