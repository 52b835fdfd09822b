"""A deployment's settings (ADR-0025): read once from the environment, each refusal one line.

Nothing set is the embedded default. A shared database needs both secrets; workers need their
token's file; a blobs URL is the database's or an object store's. ``--migrate`` migrates once, and
a replica refuses a database it hasn't migrated, or migrated to an older schema, with one line
that says to run it. On SQLite for the schema's checks, and on PostgreSQL (always in CI) for a
replica's start.
"""

import asyncio
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx2
import pytest
from alembic import command
from artifactr.sql import create_sqlite_engine, migrate
from artifactr.workspace import Scope
from scripts.bench.cluster import database
from sqlalchemy.engine import make_url

from artifactr.files.apps.worker import Worker
from artifactr.files.core.clock import utc_now
from artifactr.files.programs import serve
from artifactr.files.programs.settings import (
    DATABASE_URL,
    MIGRATE,
    PREFIX,
    Deployment,
    Misconfigured,
    app_from,
    blobs_from,
    database_url,
    read_deployment,
    schema_behind,
)
from artifactr.files.s3 import S3Blobs
from artifactr.files.sql import SqlBlobs
from artifactr.files.sql import migrate as migrate_files
from artifactr.files.sql.schema import alembic_config
from tests.databases import need_postgres
from tests.programs.test_serve import free_port
from tests.seaweed import ACCESS_KEY, SECRET_KEY, SeaweedFS

SECRET = "s" * 32
WOPI = "w" * 32
TOKEN = "t" * 40


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``ARTIFACTR_FILES_*`` setting from the machine reaches a test."""
    for name in Deployment.model_fields:
        monkeypatch.delenv(PREFIX + name.upper(), raising=False)


def refusal(monkeypatch: pytest.MonkeyPatch, **settings: str) -> Misconfigured:
    for name, value in settings.items():
        monkeypatch.setenv(PREFIX + name.upper(), value)
    with pytest.raises(Misconfigured) as refused:
        read_deployment()
    return refused.value


def test_nothing_set_is_the_embedded_default() -> None:
    deployment = read_deployment()
    assert not deployment.shared
    assert (deployment.blobs_url, deployment.worker_urls, deployment.secret) == (None, (), None)
    assert app_from(deployment) is None


def test_a_shared_database_needs_both_secrets_and_names_the_one_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "postgresql://app@db/files"
    refused = refusal(monkeypatch, database_url=url)
    assert refused.setting == "ARTIFACTR_FILES_SECRET"
    assert str(refused).startswith("ARTIFACTR_FILES_SECRET: required with ")
    refused = refusal(monkeypatch, database_url=url, secret=SECRET)
    assert refused.setting == "ARTIFACTR_FILES_WOPI_SECRET"
    monkeypatch.setenv(f"{PREFIX}WOPI_SECRET", WOPI)
    deployment = read_deployment()
    assert deployment.shared
    assert database_url(deployment) == "postgresql+asyncpg://app@db/files"


@pytest.mark.parametrize(
    ("settings", "setting", "said"),
    [
        ({"database_url": "mysql://db/files"}, "DATABASE_URL", "expected a PostgreSQL URL"),
        ({"secret": "short"}, "SECRET", "at least 32 characters"),
        ({"wopi_secret": "short"}, "WOPI_SECRET", "at least 32 characters"),
        ({"worker_urls": "worker:8000"}, "WORKER_URLS", "expected http(s):// URLs"),
        ({"worker_urls": "http://w:8000"}, "WORKER_TOKEN_FILE", "required with"),
        ({"worker_app": "excel"}, "WORKER_APP", "expected the workers' app"),
    ],
    ids=["not postgres", "short secret", "short wopi secret", "no scheme", "no token", "app"],
)
def test_a_bad_setting_is_refused_in_one_line_that_names_it(
    monkeypatch: pytest.MonkeyPatch, settings: dict[str, str], setting: str, said: str
) -> None:
    refused = refusal(monkeypatch, **settings)
    assert refused.setting == PREFIX + setting
    assert said in str(refused)
    assert "\n" not in str(refused)


def test_the_workers_token_is_read_from_its_file_and_a_bad_file_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    token = tmp_path / "worker_token"
    urls = "http://worker-1:8000, http://worker-2:8000/"
    refused = refusal(monkeypatch, worker_urls=urls, worker_token_file=str(token))
    assert "can't read" in str(refused)
    token.write_text("short\n")
    assert "expected a token of 32+" in str(refusal(monkeypatch))
    token.write_text(TOKEN + "\n")
    monkeypatch.setenv(f"{PREFIX}WORKER_APP", "libreoffice")
    app = app_from(read_deployment())
    assert isinstance(app, Worker)
    assert (app.urls, app.name) == (("http://worker-1:8000", "http://worker-2:8000"), "libreoffice")
    assert serve.pick_app(read_deployment())[1] == (
        "workers: http://worker-1:8000, http://worker-2:8000/"
    )


async def test_the_blobs_are_the_database_s_unless_a_url_names_an_object_store(
    tmp_path: Path,
) -> None:
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{tmp_path / 'blobs.db'}")
    try:
        assert isinstance(blobs_from(None, engine, utc_now), SqlBlobs)
        with pytest.raises(Misconfigured, match="ARTIFACTR_FILES_BLOBS_URL: expected s3://"):
            blobs_from("file:///blobs", engine, utc_now)
        with pytest.raises(
            Misconfigured, match="ARTIFACTR_FILES_BLOBS_URL: unknown parameters endpoint; expected"
        ):
            blobs_from("s3://bucket/files?endpoint=http://s3:8333", engine, utc_now)
    finally:
        await engine.dispose()


async def test_an_s3_url_is_the_object_store_s_and_holds_the_files_bytes(
    seaweed: SeaweedFS, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{tmp_path / 'blobs.db'}")
    try:
        url = f"s3://blobs/served?endpoint_url={seaweed.endpoint}&region=us-east-1"
        blobs = blobs_from(url, engine, utc_now)
        assert isinstance(blobs, S3Blobs)
        scope = Scope(tenant_id="t1", workspace_id="w1")
        blob = await blobs.put(scope, "art_1", _chunks(b"the contract's bytes"), "text/plain")
        read = await blobs.get(scope, "art_1", blob.sha256)
        assert read == b"the contract's bytes"
    finally:
        await engine.dispose()


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    yield data


def test_help_lists_every_setting(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        serve.main(["--help"])
    assert done.value.code == 0
    said = capsys.readouterr().out
    for name in Deployment.model_fields:
        assert PREFIX + name.upper() in said
    for option in ("--host", "--port", "--migrate", "--database"):
        assert option in said


async def test_a_schema_is_behind_until_both_chains_are_at_their_heads(tmp_path: Path) -> None:
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{tmp_path / 'schema.db'}")
    try:
        behind = await schema_behind(engine)
        assert behind is not None
        assert behind.startswith("the database is not migrated (artifactr_alembic_version")
        assert behind.endswith(f"run {MIGRATE}")
        await migrate(engine)
        behind = await schema_behind(engine)
        assert behind is not None
        assert "artifactr_files_alembic_version is empty" in behind
        await migrate_files(engine)
        assert await schema_behind(engine) is None
        async with engine.begin() as connection:
            await connection.run_sync(lambda sync: command.downgrade(alembic_config(sync), "0002"))
        behind = await schema_behind(engine)
        assert behind is not None
        assert re.match(
            r"the database's schema is 0002\S* in artifactr_files_alembic_version", behind
        )
    finally:
        await engine.dispose()


def test_migrate_migrates_the_embedded_file_and_exits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "out" / "serve.db"
    serve.main(["--migrate", "--database", str(file)])
    assert capsys.readouterr().out == (
        "migrated artifactr's tables and artifactr.files' to their latest schema\n"
    )
    engine = create_sqlite_engine(f"sqlite+aiosqlite:///{file}")
    try:
        assert asyncio.run(schema_behind(engine)) is None
    finally:
        asyncio.run(engine.dispose())


def shared(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    monkeypatch.setenv(DATABASE_URL, url)
    monkeypatch.setenv(f"{PREFIX}SECRET", SECRET)
    monkeypatch.setenv(f"{PREFIX}WOPI_SECRET", WOPI)


@pytest.mark.parametrize("argv", [[], ["--migrate"]], ids=["start", "migrate"])
def test_a_database_that_can_t_be_reached_stops_the_start_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str]
) -> None:
    shared(monkeypatch, f"postgresql://app@127.0.0.1:{free_port()}/files")
    with pytest.raises(SystemExit) as stopped:
        serve.main([*argv, "--database", str(tmp_path / "unused.db")])
    said = str(stopped.value.code)
    assert said.startswith("serve: ARTIFACTR_FILES_DATABASE_URL: can't ")
    assert "\n" not in said


def test_a_bad_setting_stops_the_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(f"{PREFIX}WORKER_APP", "excel")
    with pytest.raises(SystemExit) as stopped:
        serve.main([])
    assert str(stopped.value.code).startswith("serve: ARTIFACTR_FILES_WORKER_APP: ")


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """A fresh PostgreSQL database of its own, as a deployment has; dropped afterwards."""
    admin = need_postgres()
    name = f"settings_{uuid.uuid4().hex[:12]}"
    asyncio.run(database(admin, name, create=True))
    try:
        yield make_url(admin).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(database(admin, name, create=False))


@pytest.mark.postgres
@pytest.mark.timeout(120)
def test_a_replica_refuses_an_unmigrated_database_and_serves_once_it_is_migrated(
    postgres_database: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shared(monkeypatch, postgres_database)
    monkeypatch.setenv("ARTIFACTR_FILES_APP", "fake")
    with pytest.raises(SystemExit) as stopped:
        serve.main([])
    assert stopped.value.code == (
        f"serve: {DATABASE_URL}: the database is not migrated (artifactr_alembic_version is "
        f"empty): run {MIGRATE}"
    )
    serve.main(["--migrate"])
    port = free_port()
    argv = ["--port", str(port), "--database", str(tmp_path / "unused.db")]
    job = threading.Thread(target=serve.main, args=([*argv, "--limit-max-requests", "1"],))
    job.start()
    said = ""
    while "serving documents, workbooks and decks" not in said:
        assert job.is_alive(), said
        time.sleep(0.05)
        said += capsys.readouterr().out
    # A replica seeds nothing: it says where it serves, on the shared database.
    assert f"a replica at http://127.0.0.1:{port}, on the shared database" in said
    assert "seeded" not in said
    with httpx2.Client(timeout=30) as client:
        for _ in range(200):
            try:
                files = client.get(
                    f"http://127.0.0.1:{port}/workspaces/w1/artifacts", headers={"x-user": "rita"}
                )
                break
            except httpx2.ConnectError:
                time.sleep(0.05)
        else:
            pytest.fail("the replica didn't listen")
    assert files.status_code == 200, files.text
    job.join(timeout=60)
    assert not job.is_alive()
    assert not (tmp_path / "unused.db").exists()


def test_the_local_office_s_pool_is_the_machine_s_unless_set_and_never_negative(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert read_deployment().pool is None  # the served program sizes it from the machine
    monkeypatch.setenv(f"{PREFIX}POOL", "0")
    assert read_deployment().pool == 0
    refused = refusal(monkeypatch, pool="-1")
    assert refused.setting == f"{PREFIX}POOL"
