"""Row-level security: under an application role, a tenant sees and writes only its own rows.

On PostgreSQL the migrations give every ``artifactr_files_*`` table artifactr's tenant policy,
and ``migrate(engine, application_role=...)`` grants a role that owns nothing the tables. Here
the application connects as such a role: the adapters work for each tenant, a transaction that
names tenant A sees, changes and adds no row of tenant B, and one that names no tenant sees
nothing, even on a connection whose last user set a tenant for its whole session. The owner,
which migrates, is not held.
"""

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from artifactr import UserActor, Workspaces
from artifactr.sql import SqlStorage
from artifactr.sql import migrate as migrate_artifactr
from artifactr.sql.tenancy import SETTING, TENANT, TenantSession
from artifactr.workspace import Scope
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)

from artifactr.files import DOCX, Blob, Checkout, Provenance, RenderKey, WordDocument
from artifactr.files.sql import (
    SqlBlobs,
    SqlCheckouts,
    SqlHistory,
    SqlLeases,
    SqlRenders,
    migrate,
)
from artifactr.files.sql.tables import PREFIX, TABLES
from tests.databases import another_engine, postgres_schema, schema_of

pytestmark = pytest.mark.postgres

A = Scope(tenant_id="tenant-a", workspace_id="w1")
B = Scope(tenant_id="tenant-b", workspace_id="w1")
NOON = datetime(2026, 11, 30, 12, tzinfo=UTC)


@pytest.fixture
async def owner() -> AsyncIterator[AsyncEngine]:
    async with postgres_schema() as engine:
        yield engine


@pytest.fixture
async def role(owner: AsyncEngine) -> AsyncIterator[str]:
    name = f"app_{uuid.uuid4().hex[:12]}"
    async with owner.begin() as connection:
        await connection.exec_driver_sql(f'CREATE ROLE "{name}" NOLOGIN')
    yield name
    async with owner.begin() as connection:
        await connection.exec_driver_sql(f'DROP OWNED BY "{name}"')
        await connection.exec_driver_sql(f'DROP ROLE "{name}"')


@pytest.fixture
async def app(owner: AsyncEngine, role: str) -> AsyncIterator[AsyncEngine]:
    """The application's engine: every connection acts as the role."""
    await migrate_artifactr(owner, application_role=role)
    await migrate(owner, application_role=role)
    engine = await another_engine(owner, role=role)
    try:
        yield engine
    finally:
        await engine.dispose()


async def fill(engine: AsyncEngine, scope: Scope) -> None:
    """Give a tenant a row in every table, through the adapters."""
    data = b"bytes of " + scope.tenant_id.encode()
    blob = await SqlBlobs(engine).put(scope, "a1", aiter_of(data), "text/plain")
    await SqlRenders(engine).put(
        RenderKey(scope.tenant_id, scope.workspace_id, "a1", blob.sha256, 1, 1.0, "b1"), b"png"
    )
    assert await SqlLeases(engine).acquire(scope, "a1", "edit:1", timedelta(hours=1)) is not None
    await SqlCheckouts(engine).add(
        scope,
        Checkout(
            id="co_1",
            artifact_id="a1",
            base_version=1,
            base_sha256=blob.sha256,
            actor=UserActor(id="alice"),
            expires_at=NOON,
        ),
    )
    workspaces = Workspaces(SqlStorage(engine, row_level_security=True), types=[WordDocument])
    ws = await workspaces.open(scope.tenant_id, scope.workspace_id, actor=UserActor(id="alice"))
    manifest = WordDocument(
        name="a.docx",
        content=Blob(sha256=blob.sha256, size=blob.size, media_type=DOCX),
        fingerprint=blob.sha256,
        provenance=Provenance(source="upload"),
        outline="",
        pages=None,
    )
    await ws.create(manifest, artifact_id="a1")
    assert await SqlHistory(engine).named(ws, "A.DOCX") == ("a1", "a.docx")  # names kept


def sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, sync_session_class=TenantSession)


async def test_the_application_role_uses_every_adapter_within_its_tenant(
    app: AsyncEngine,
) -> None:
    await fill(app, A)
    await fill(app, B)
    blobs = SqlBlobs(app)
    digest = (await blobs.put(A, "a1", aiter_of(b"more"), "text/plain")).sha256
    assert await blobs.get(A, "a1", digest) == b"more"
    assert await blobs.get(B, "a1", digest) is None
    assert await SqlLeases(app).acquire(A, "a1", "edit:2", timedelta(hours=1)) is None
    assert await SqlLeases(app).release(A, "a1", "edit:1") is True
    checkout = await SqlCheckouts(app).get(A, "co_1")
    assert checkout is not None
    assert await SqlCheckouts(app).active(A, now=NOON - timedelta(hours=1)) == [checkout]
    assert await blobs.collect(A, set(), before=datetime.now(UTC) + timedelta(hours=1)) == 2
    assert await blobs.collect(B, set(), before=datetime.now(UTC) + timedelta(hours=1)) == 1


async def test_no_row_of_another_tenant_is_visible_or_writable(
    app: AsyncEngine, owner: AsyncEngine
) -> None:
    await fill(app, A)
    await fill(app, B)
    async with sessions(app)(info={TENANT: A.tenant_id}) as session:
        for table in TABLES:
            seen = await session.scalars(text(f"SELECT DISTINCT tenant_id FROM {table}"))
            assert list(seen) == [A.tenant_id], table
            changed = await session.execute(
                text(f"UPDATE {table} SET workspace_id = 'moved' WHERE tenant_id = :b"),
                {"b": B.tenant_id},
            )
            assert changed.rowcount == 0, table
            deleted = await session.execute(
                text(f"DELETE FROM {table} WHERE tenant_id = :b"), {"b": B.tenant_id}
            )
            assert deleted.rowcount == 0, table
            with pytest.raises(DBAPIError, match="row-level security"):
                async with session.begin_nested():
                    await session.execute(
                        text(f"UPDATE {table} SET tenant_id = :b"), {"b": B.tenant_id}
                    )
        await session.commit()
    async with owner.connect() as connection:
        for table in TABLES:
            rows = await connection.execute(
                text(f"SELECT tenant_id, workspace_id FROM {table} ORDER BY tenant_id")
            )
            assert {tuple(row) for row in rows} == {("tenant-a", "w1"), ("tenant-b", "w1")}, table


async def test_a_transaction_that_names_no_tenant_sees_nothing(app: AsyncEngine) -> None:
    await fill(app, A)
    async with app.connect() as connection:
        for table in TABLES:
            assert await connection.scalar(text(f"SELECT count(*) FROM {table}")) == 0, table


async def test_a_tenant_set_for_a_session_is_gone_once_its_connection_is_reused(
    app: AsyncEngine, owner: AsyncEngine, role: str
) -> None:
    await fill(app, A)
    settings = {"search_path": await schema_of(owner), "role": role}
    # One connection, so the second user gets the first one's back from the pool.
    engine = create_async_engine(
        owner.url, pool_size=1, max_overflow=0, connect_args={"server_settings": settings}
    )
    try:
        SqlLeases(engine)  # an adapter on the engine: its pool now resets the tenant
        async with engine.connect() as connection:
            used = await connection.scalar(text("SELECT pg_backend_pid()"))
            # Something outside the package sets the tenant for the whole session.
            await connection.execute(
                text("SELECT set_config(:setting, :tenant, false)"),
                {"setting": SETTING, "tenant": A.tenant_id},
            )
            await connection.commit()
            assert await connection.scalar(text(f"SELECT count(*) FROM {TABLES[0]}")) == 1
        async with engine.connect() as connection:
            assert await connection.scalar(text("SELECT pg_backend_pid()")) == used
            assert await connection.scalar(text(f"SELECT current_setting('{SETTING}', true)")) in {
                None,
                "",
            }
            for table in TABLES:
                assert await connection.scalar(text(f"SELECT count(*) FROM {table}")) == 0, table
        async with engine.connect() as connection:
            # A connection taken out of the pool is closed, not reset, when it is let go.
            await connection.run_sync(lambda sync: sync.detach())
        async with engine.connect() as connection:
            assert await connection.scalar(text("SELECT pg_backend_pid()")) != used
    finally:
        await engine.dispose()


async def test_every_table_has_the_tenant_policy_and_the_owner_is_not_held(
    app: AsyncEngine, owner: AsyncEngine
) -> None:
    await fill(app, A)
    await fill(app, B)
    async with owner.connect() as connection:
        policies = await connection.execute(
            text(
                "SELECT tablename, policyname FROM pg_policies WHERE schemaname = current_schema()"
            )
        )
        ours = {(table, policy) for table, policy in policies if table.startswith(PREFIX)}
        assert ours == {(table, f"{table}_tenant") for table in TABLES}
        for table in TABLES:
            assert await connection.scalar(text(f"SELECT count(*) FROM {table}")) == 2, table


async def aiter_of(data: bytes) -> AsyncIterator[bytes]:
    yield data
