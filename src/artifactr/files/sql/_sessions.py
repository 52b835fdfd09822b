"""Sessions: tenant sessions on a shared engine, the database's clock, calls that finish (RFC-0003).

Every adapter opens its sessions as artifactr's :class:`~artifactr.sql.tenancy.TenantSession`
with the scope's tenant, so PostgreSQL's row-level security holds when the application connects
as a role that owns nothing. The time comes from the database unless a clock is injected, so
processes whose clocks disagree still agree on a lease. And every database call runs to its end
even if its caller is cancelled: a statement abandoned half-way can keep SQLite's write lock, or
an engine's only connection.
"""

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable, Coroutine
from datetime import UTC, datetime
from types import CoroutineType
from typing import Any

from artifactr.sql.tenancy import TENANT, TenantSession
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement

from artifactr.files.blobs import Clock
from artifactr.files.sql.tables import UtcDateTime


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


class Sessions:
    """Tenant sessions on an engine, and the time on the engine's (or an injected) clock.

    Args:
        engine: The database. It is shared, never disposed of here.
        clock: Replaces the database's clock when given.
    """

    def __init__(self, engine: AsyncEngine, clock: Clock | None = None) -> None:
        self._sessions = async_sessionmaker(
            engine, expire_on_commit=False, sync_session_class=TenantSession
        )
        self._clock = clock

    def __call__(self, tenant_id: str) -> AsyncSession:
        """Return a new session in a tenant."""
        return self._sessions(info={TENANT: tenant_id})

    def stamp(self) -> datetime | DatabaseNow:
        """Return the time to write: the clock's, or else the database's, as SQL."""
        return DatabaseNow() if self._clock is None else self._clock().astimezone(UTC)

    async def now(self, session: AsyncSession) -> datetime:
        """Return the current time in UTC, from the clock or else the session's database."""
        if self._clock is not None:
            return self._clock().astimezone(UTC)
        return (await session.execute(select(DatabaseNow()))).scalar_one()


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
