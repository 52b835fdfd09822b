"""Databases for tests: SQLite files and PostgreSQL schemas, one per test.

PostgreSQL runs when ``ARTIFACTR_TEST_POSTGRES_URL`` is set (always in CI, where
``ARTIFACTR_TEST_REQUIRE_POSTGRES=1`` turns a skip into a failure). Each test gets a schema of
its own, dropped afterwards, so tests never see each other's rows.
"""

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from artifactr.files.sql import sqlite_engine

POSTGRES_URL = os.environ.get("ARTIFACTR_TEST_POSTGRES_URL")
REQUIRE_POSTGRES = os.environ.get("ARTIFACTR_TEST_REQUIRE_POSTGRES") == "1"

BACKENDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
"""Every storage a behaviour suite runs on."""

SQL_BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
"""Every SQL database."""


def need_postgres() -> str:
    """Return the PostgreSQL URL, or skip (fail in CI) when there is none."""
    if POSTGRES_URL is None:
        if REQUIRE_POSTGRES:
            pytest.fail("ARTIFACTR_TEST_POSTGRES_URL is required here")
        pytest.skip("PostgreSQL not configured: set ARTIFACTR_TEST_POSTGRES_URL")
    return POSTGRES_URL


@asynccontextmanager
async def postgres_schema(**engine_args: object) -> AsyncIterator[AsyncEngine]:
    """Yield an engine whose search path is a new, empty schema; drop it afterwards."""
    url = need_postgres()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_async_engine(url)
    async with admin.begin() as connection:
        await connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    engine = create_async_engine(
        url, connect_args={"server_settings": {"search_path": schema}}, **engine_args
    )
    try:
        yield engine
    finally:
        await engine.dispose()
        async with admin.begin() as connection:
            await connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        await admin.dispose()


@asynccontextmanager
async def sql_engine(kind: str, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """Yield a fresh, empty database of a kind: ``sqlite`` (a file) or ``postgres``."""
    if kind == "postgres":
        async with postgres_schema() as engine:
            yield engine
        return
    engine = sqlite_engine(tmp_path / "test.db")
    try:
        yield engine
    finally:
        await engine.dispose()


async def schema_of(engine: AsyncEngine) -> str:
    """Return the schema a PostgreSQL engine's connections work in."""
    async with engine.connect() as connection:
        return str((await connection.exec_driver_sql("SELECT current_schema()")).scalar())


async def another_engine(engine: AsyncEngine, **server_settings: str) -> AsyncEngine:
    """Return a second engine on the same database, as another process would open it.

    On PostgreSQL it works in the same schema, with ``server_settings`` (such as ``role``) set
    on each connection; dispose of it before the schema is dropped.
    """
    if engine.dialect.name == "sqlite":
        assert engine.url.database is not None
        return sqlite_engine(engine.url.database)
    settings = {"search_path": await schema_of(engine), **server_settings}
    return create_async_engine(engine.url, connect_args={"server_settings": settings})
