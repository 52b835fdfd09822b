"""Tenant connections on a shared engine, the database's clock, calls that finish.

Every transaction sets the scope's tenant as it begins, so PostgreSQL's row-level security
holds; on an engine an adapter was given, a tenant set for a whole session is reset as each
connection goes back to the pool (ADR-0015). The time is the database's unless a clock is
injected. Every database call runs to its end even if its caller is cancelled, so no statement
is abandoned holding a lock or a connection.

:meth:`TenantConnections.together` runs a block's calls in one transaction: every adapter on the
same engine and tenant joins it (a context variable names it), so a request that reads a
check-out, renews its lease and extends it opens one connection and commits once (ADR-0034).

:func:`sqlite_engine` opens the embedded SQLite file in WAL mode with every commit synced
(``synchronous=FULL``): as durable as the rollback journal it replaces, at one sync a commit
instead of several. A ``together`` block on it, which writes an editor's session (its lease,
its record, its expiry), commits with ``synchronous=NORMAL``: not synced at once, but made
durable by the next synced commit or checkpoint, and never lost to a crash of the process
(ADR-0032).
"""

import asyncio
import contextlib
import functools
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine
from contextvars import ContextVar
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import CoroutineType
from typing import Any, Final, Protocol, cast

from artifactr.sql import create_sqlite_engine
from artifactr.sql.tenancy import SETTING
from sqlalchemy import Double, event, literal, select, text
from sqlalchemy.dialects import postgresql as postgres
from sqlalchemy.dialects import sqlite
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.pool import ConnectionPoolEntry, PoolResetState
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from artifactr.files.core.clock import Clock
from artifactr.files.sql.tables import Base, UtcDateTime


class DatabaseNow(FunctionElement[datetime]):
    """The database's current time, as SQL: PostgreSQL's transaction time, SQLite's to the ms."""

    type = UtcDateTime()
    inherit_cache = True


@compiles(DatabaseNow)
def _now_anywhere(element: DatabaseNow, compiler: SQLCompiler, **kw: Any) -> str:
    del element, compiler, kw
    return "CURRENT_TIMESTAMP"


@compiles(DatabaseNow, "sqlite")
def _now_on_sqlite(element: DatabaseNow, compiler: SQLCompiler, **kw: Any) -> str:
    # SQLite's CURRENT_TIMESTAMP has whole seconds; %f gives milliseconds, padded to the
    # microseconds SQLAlchemy writes, so stored and fresh times compare alike as text.
    del element, compiler, kw
    return "strftime('%Y-%m-%d %H:%M:%f000', 'now')"


class DatabaseLater(FunctionElement[datetime]):
    """The database's current time (as :class:`DatabaseNow`) plus some seconds, as SQL."""

    type = UtcDateTime()
    inherit_cache = True

    def __init__(self, seconds: float) -> None:
        super().__init__(literal(seconds, Double()))


@compiles(DatabaseLater)
def _later_anywhere(element: DatabaseLater, compiler: SQLCompiler, **kw: Any) -> str:
    return f"CURRENT_TIMESTAMP + make_interval(secs => {compiler.process(element.clauses, **kw)})"


@compiles(DatabaseLater, "sqlite")
def _later_on_sqlite(element: DatabaseLater, compiler: SQLCompiler, **kw: Any) -> str:
    seconds = compiler.process(element.clauses, **kw)
    return f"strftime('%Y-%m-%d %H:%M:%f000', 'now', printf('%+f seconds', {seconds}))"


def upsert_into(table: type[Base], dialect: str) -> postgres.Insert | sqlite.Insert:
    """Return an ``INSERT`` into ``table`` that can take ``ON CONFLICT``, for the dialect.

    PostgreSQL and SQLite spell the clause alike, but SQLAlchemy builds it per dialect.
    """
    return (postgres.insert if dialect == "postgresql" else sqlite.insert)(table)


class TenantConnections:
    """Tenant connections on an engine, and the time on the engine's (or an injected) clock.

    A connection is SQLAlchemy Core's, not an ORM unit of work: the adapters write rows by
    statement, and a unit of work would only add its cost to every short transaction.

    Args:
        engine: The database. It is shared, never disposed of here.
        clock: Replaces the database's clock when given.
    """

    def __init__(self, engine: AsyncEngine, clock: Clock | None = None) -> None:
        self._engine = engine
        self._clock = clock
        pool = engine.sync_engine.pool
        if engine.dialect.name == "postgresql" and not event.contains(pool, "reset", _no_tenant):
            event.listen(pool, "reset", _no_tenant)

    @contextlib.asynccontextmanager
    async def begin(self, tenant_id: str) -> AsyncGenerator[AsyncConnection]:
        """Open a transaction in a tenant, committed if the block ends well, else rolled back.

        Inside a :meth:`together` block on the same engine and tenant, the block's transaction.
        """
        shared = self._shared(tenant_id)
        if shared is not None:
            yield shared
            return
        async with self._engine.begin() as connection:
            await _enter(connection, tenant_id)
            yield connection

    @contextlib.asynccontextmanager
    async def read(self, tenant_id: str) -> AsyncGenerator[AsyncConnection]:
        """Open a connection to read in a tenant; its one transaction is rolled back at the end.

        Inside a :meth:`together` block on the same engine and tenant, the block's transaction.
        """
        shared = self._shared(tenant_id)
        if shared is not None:
            yield shared
            return
        async with self._engine.connect() as connection:
            await _enter(connection, tenant_id)
            yield connection

    @contextlib.asynccontextmanager
    async def together(self, tenant_id: str) -> AsyncGenerator[None]:
        """Run the block's calls, of every adapter on this engine, in one transaction.

        Committed if the block ends well, else rolled back. The block must call nothing else
        that opens a connection on the engine (artifactr's storage): on SQLite, whose engine has
        one connection, that call would wait for this block's. On a :func:`sqlite_engine`, the
        commit is not synced at once (``synchronous=NORMAL``, ADR-0032): the block writes an
        editor's session only, never a file's content.
        """
        if self._shared(tenant_id) is not None:
            yield
            return
        async with self._engine.connect() as connection:
            driver = await _relaxable(connection)
            try:
                if driver is not None:
                    await to_the_end(driver.execute_fetchall(_RELAXED))
                async with connection.begin():
                    await _enter(connection, tenant_id)
                    token = _SHARED.set((self._engine, tenant_id, connection))
                    try:
                        yield
                    finally:
                        _SHARED.reset(token)
            finally:
                if driver is not None:
                    await to_the_end(driver.execute_fetchall(_SYNCED))

    def _shared(self, tenant_id: str) -> AsyncConnection | None:
        shared = _SHARED.get()
        if shared is None or shared[0] is not self._engine or shared[1] != tenant_id:
            return None
        return shared[2]

    def stamp(self) -> datetime | DatabaseNow:
        """Return the time to write: the clock's, or else the database's, as SQL."""
        return DatabaseNow() if self._clock is None else self._clock().astimezone(UTC)

    def stamp_after(self, ttl: timedelta) -> datetime | DatabaseLater:
        """Return the time ``ttl`` after :meth:`stamp`'s, the same way: a value, or SQL."""
        if self._clock is None:
            return DatabaseLater(ttl.total_seconds())
        return self._clock().astimezone(UTC) + ttl

    async def now(self, connection: AsyncConnection) -> datetime:
        """Return the current time in UTC, from the clock or else the connection's database."""
        if self._clock is not None:
            return self._clock().astimezone(UTC)
        return (await connection.execute(select(DatabaseNow()))).scalar_one()


_SHARED: ContextVar[tuple[AsyncEngine, str, AsyncConnection] | None] = ContextVar(
    "artifactr_files_together", default=None
)
"""The transaction a :meth:`TenantConnections.together` block runs in: its engine and tenant."""


WAL: Final = "artifactr_files_wal"
"""Set in a connection's pool record when :func:`sqlite_engine` put its file in WAL mode."""

_SYNCED = "PRAGMA synchronous = FULL"
_RELAXED = "PRAGMA synchronous = NORMAL"


class _SqliteDriver(Protocol):
    """aiosqlite's connection, as far as a ``together`` block uses it: one call, one hop."""

    async def execute_fetchall(self, sql: str) -> object: ...


def sqlite_engine(database: Path | str) -> AsyncEngine:
    """Return an engine on the embedded SQLite file: WAL mode, every commit synced.

    artifactr's :func:`~artifactr.sql.create_sqlite_engine` (one connection, every transaction
    ``BEGIN IMMEDIATE``), whose connections each put the file in WAL mode (kept in the file,
    beside it ``-wal`` and ``-shm`` files while it is open) and sync every commit
    (``synchronous=FULL``): a commit acknowledged survives a power loss, as with the rollback
    journal, for one sync instead of several. A :meth:`TenantConnections.together` block on it
    commits without a sync (ADR-0032). WAL needs the file on a local disk, not a network share.

    Args:
        database: The file's path.
    """
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{database}")
    event.listen(engine.sync_engine, "connect", _in_wal)
    return engine


def _in_wal(connection: DBAPIConnection, record: ConnectionPoolEntry) -> None:
    """Put a new connection's file in WAL mode, its commits synced; mark its record if it is."""
    cursor = connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode = WAL")
        mode = cursor.fetchone()
        cursor.execute(_SYNCED)
    finally:
        cursor.close()
    record.info[WAL] = mode is not None and str(mode[0]).lower() == "wal"


async def _relaxable(connection: AsyncConnection) -> _SqliteDriver | None:
    """Return the driver of a connection whose commits may go unsynced, or None.

    Only a :func:`sqlite_engine`'s connection in WAL mode: with the rollback journal, an
    unsynced commit could corrupt the file on a power loss; in WAL mode it can only be lost.
    """
    raw = await connection.get_raw_connection()
    if not raw.info.get(WAL, False):
        return None
    return cast(_SqliteDriver, raw.driver_connection)


async def _enter(connection: AsyncConnection, tenant_id: str) -> None:
    """Tell PostgreSQL the transaction's tenant, as artifactr's tenant transactions do.

    The setting lasts for the transaction only, so a pooled connection never carries a tenant
    into its next one. SQLite has no row-level security: there is nothing to set.
    """
    if connection.dialect.name == "postgresql":
        await connection.execute(_SET_TENANT, {"setting": SETTING, "tenant": tenant_id})


_SET_TENANT = text("SELECT set_config(:setting, :tenant, true)")

_RESET_TENANT = f"RESET {SETTING}"


def _no_tenant(connection: DBAPIConnection, record: object, state: PoolResetState) -> None:
    """Reset the session's tenant as a PostgreSQL connection goes back to the pool.

    The transaction is rolled back first, as the pool would, and the reset runs outside any
    transaction, so no rollback undoes it. A connection being thrown away, or collected
    outside the event loop, is left alone: it never serves anyone again.
    """
    del record
    if state.terminate_only or not state.asyncio_safe:
        return
    connection.rollback()
    autocommit = connection.autocommit
    connection.autocommit = True
    try:
        cursor = connection.cursor()
        cursor.execute(_RESET_TENANT)
        cursor.close()
    finally:
        connection.autocommit = autocommit


async def to_the_end[T](call: Awaitable[T]) -> T:
    """Await a database call to its end, then raise a cancellation that came meanwhile."""
    task = asyncio.ensure_future(call)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])
        # Its outcome no longer matters to anyone; fetch it so asyncio doesn't log it.
        with contextlib.suppress(asyncio.CancelledError, Exception):
            task.result()
        raise


def finished[**P, T](
    method: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[P, "CoroutineType[Any, Any, T]"]:
    """Run every call of an async method to its end, with :func:`to_the_end`.

    The wrapper's calls are typed as ``async def`` methods' are (``CoroutineType``, which can
    be subscripted at run time only from Python 3.13), so an adapter still matches its port.
    """

    @functools.wraps(method)
    async def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return await to_the_end(method(*args, **kwargs))

    return call
