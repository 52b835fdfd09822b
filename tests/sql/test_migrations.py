"""Migrations: the package's own Alembic chain builds exactly its tables, beside artifactr's.

Autogenerate finds no difference between the chain and the models, a second ``migrate`` changes
nothing, downgrade reaches base without touching artifactr's tables, and the revisions follow
the naming rules. Also the pieces the schema rests on: the timestamp type and the database's
clock, on each dialect.
"""

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from artifactr import UserActor
from artifactr.sql import create_sqlite_engine
from artifactr.sql import migrate as migrate_artifactr
from artifactr.workspace import Scope
from sqlalchemy import Connection, bindparam, inspect, select, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.sql import SqlCheckouts, migrate
from artifactr.files.sql._connections import DatabaseNow
from artifactr.files.sql.schema import SCRIPT_LOCATION, alembic_config
from artifactr.files.sql.tables import TABLES, VERSION_TABLE, UtcDateTime, metadata, owned


def tables(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


def differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(
        connection,
        opts={"include_name": owned, "version_table": VERSION_TABLE, "compare_type": True},
    )
    return list(compare_metadata(context, metadata))


def version(connection: Connection) -> str | None:
    return connection.scalar(text(f"SELECT version_num FROM {VERSION_TABLE}"))


def scripts() -> ScriptDirectory:
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    return ScriptDirectory.from_config(config)


async def test_migrate_creates_every_table_and_records_the_head(engine: AsyncEngine) -> None:
    await migrate(engine)
    async with engine.connect() as connection:
        assert set(TABLES) | {VERSION_TABLE} <= await connection.run_sync(tables)
        assert await connection.run_sync(version) == scripts().get_current_head()


async def test_the_chain_needs_none_of_artifactrs_tables(engine: AsyncEngine) -> None:
    await migrate(engine)
    async with engine.connect() as connection:
        assert {
            name for name in await connection.run_sync(tables) if not owned(name, "table", {})
        } == set()


async def test_autogenerate_finds_no_difference_beside_artifactrs_tables(
    engine: AsyncEngine,
) -> None:
    await migrate_artifactr(engine)
    await migrate(engine)
    async with engine.connect() as connection:
        assert "artifactr_leases" in await connection.run_sync(tables)
        assert await connection.run_sync(differences) == []


async def test_a_second_migrate_changes_nothing(engine: AsyncEngine) -> None:
    await migrate_artifactr(engine)
    await migrate(engine)
    async with engine.connect() as connection:
        before = await connection.run_sync(tables), await connection.run_sync(version)
    await migrate(engine)
    async with engine.connect() as connection:
        assert (await connection.run_sync(tables), await connection.run_sync(version)) == before
        assert await connection.run_sync(differences) == []


async def test_downgrade_reaches_base_and_leaves_artifactrs_tables(engine: AsyncEngine) -> None:
    await migrate_artifactr(engine)
    await migrate(engine)
    async with engine.begin() as connection:
        await connection.run_sync(lambda c: command.downgrade(alembic_config(c), "base"))
    async with engine.connect() as connection:
        left = await connection.run_sync(tables)
        assert left & set(TABLES) == set()
        assert {"artifactr_artifacts", "artifactr_leases"} <= left
        assert await connection.run_sync(version) is None
    await migrate(engine)
    async with engine.connect() as connection:
        assert await connection.run_sync(differences) == []


async def test_on_sqlite_migrating_with_an_application_role_grants_nothing(tmp_path: Path) -> None:
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{tmp_path / 'roles.db'}")
    try:
        await migrate(engine, application_role="app")
        async with engine.connect() as connection:
            assert set(TABLES) <= await connection.run_sync(tables)
    finally:
        await engine.dispose()


def test_revisions_are_sequential_and_each_says_what_it_does_in_one_sentence() -> None:
    revisions = list(reversed(list(scripts().walk_revisions())))
    assert [revision.revision for revision in revisions] == [
        f"{n:04d}" for n in range(1, len(revisions) + 1)
    ]
    for previous, revision in zip([None, *revisions], revisions, strict=False):
        assert revision.down_revision == (previous and previous.revision)
        assert revision.path is not None
        assert re.fullmatch(rf"{revision.revision}_[a-z0-9_]+\.py", Path(revision.path).name)
        summary = (revision.module.__doc__ or "").split("\n\n")[0]
        assert summary.endswith(".")
        assert summary.count(". ") == 0


def test_autogenerate_compares_only_this_packages_tables() -> None:
    assert owned("artifactr_files_blobs", "table", {})
    assert not owned("artifactr_leases", "table", {})
    assert not owned("orders", "table", {})
    assert owned("ix_orders_total", "index", {})
    assert owned(None, "schema", {})


def test_the_databases_clock_is_current_timestamp_and_microseconds_on_sqlite() -> None:
    now = select(DatabaseNow())
    assert str(now.compile(dialect=postgresql.dialect())) == "SELECT CURRENT_TIMESTAMP AS anon_1"
    assert "strftime('%Y-%m-%d %H:%M:%f000', 'now')" in str(now.compile(dialect=sqlite.dialect()))


def test_timestamps_are_written_and_read_as_utc() -> None:
    kind = UtcDateTime()
    dialect = sqlite.dialect()
    zoned = datetime(2026, 11, 30, 14, tzinfo=timezone(timedelta(hours=2)))
    noon = datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert kind.process_bind_param(zoned, dialect) == noon
    assert kind.process_bind_param(zoned, dialect).tzinfo == UTC
    assert kind.process_bind_param(None, dialect) is None
    assert kind.process_result_value(datetime(2026, 11, 30, 12), dialect) == noon
    assert kind.process_result_value(zoned, dialect).tzinfo == UTC
    assert kind.process_result_value(None, dialect) is None


async def test_a_check_out_checked_in_before_0002_reads_as_checked_in_by_its_actor(
    engine: AsyncEngine,
) -> None:
    def to(revision: str) -> Any:
        def run(connection: Connection) -> None:
            command.upgrade(alembic_config(connection), revision)

        return run

    async with engine.begin() as connection:
        await connection.run_sync(to("0001"))
        for checkout_id, checked_in in (("co_done", True), ("co_open", False)):
            await connection.execute(
                text(
                    "INSERT INTO artifactr_files_checkouts (tenant_id, workspace_id, id, "
                    "artifact_id, base_version, base_sha256, actor, expires_at, checked_in, "
                    "created_at) VALUES ('t1', 'w1', :id, 'a1', 1, :sha, :actor, :at, :done, :at)"
                ).bindparams(bindparam("at", type_=UtcDateTime())),
                {
                    "id": checkout_id,
                    "sha": "a" * 64,
                    "actor": '{"kind": "user", "id": "alice"}',
                    "at": datetime(2026, 11, 30, 12, tzinfo=UTC),
                    "done": checked_in,
                },
            )
    await migrate(engine)
    checkouts = SqlCheckouts(engine)
    scope = Scope(tenant_id="t1", workspace_id="w1")
    done = await checkouts.get(scope, "co_done")
    still = await checkouts.get(scope, "co_open")
    assert done is not None
    assert still is not None
    assert (done.state, done.ended_by, done.outcome) == ("checked_in", UserActor(id="alice"), None)
    assert done.ended_at == datetime(2026, 11, 30, 12, tzinfo=UTC)
    assert (still.state, still.ended_by) == ("open", None)
    await checkouts.end(scope, "co_open", "discarded", by=UserActor(id="bob"), at=still.expires_at)
    async with engine.begin() as connection:
        await connection.run_sync(_down_to("0001"))
        rows = await connection.execute(
            text("SELECT id, checked_in FROM artifactr_files_checkouts ORDER BY id")
        )
        assert [(row[0], bool(row[1])) for row in rows] == [("co_done", True)]


def _down_to(revision: str) -> Any:
    def run(connection: Connection) -> None:
        command.downgrade(alembic_config(connection), revision)

    return run
