"""SQL state: blobs, renders, leases, check-outs, a file's history, in PostgreSQL or SQLite.

Needs the ``postgres`` or ``sqlite`` extra. Share artifactr's engine: migrate it with artifactr's
``migrate`` first, then with this package's :func:`migrate`, and build the adapters over it::

    from artifactr.files.sql import (
        SqlBlobs,
        SqlCheckouts,
        SqlHistory,
        SqlLeases,
        SqlRenders,
        migrate,
    )

    await migrate(engine)
    files = NativeFiles(
        blobs=SqlBlobs(engine),
        leases=SqlLeases(engine),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
        history=SqlHistory(engine),
        app=app,
    )

The tables are ``artifactr_files_*``, keyed by tenant and workspace first, under artifactr's
row-level security on PostgreSQL: every transaction sets its tenant. Bytes stream in 1 MiB rows.
The embedded SQLite file is opened with :func:`sqlite_engine` (WAL mode, commits synced).
"""

from artifactr.files.sql._connections import sqlite_engine
from artifactr.files.sql.blobs import SqlBlobs
from artifactr.files.sql.checkouts import SqlCheckouts
from artifactr.files.sql.history import SqlHistory
from artifactr.files.sql.leases import SqlLeases
from artifactr.files.sql.renders import SqlRenders
from artifactr.files.sql.schema import migrate

__all__ = [
    "SqlBlobs",
    "SqlCheckouts",
    "SqlHistory",
    "SqlLeases",
    "SqlRenders",
    "migrate",
    "sqlite_engine",
]
