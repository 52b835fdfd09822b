"""Settings: one deployment's database, blobs, workers and secrets, from its environment (ADR-0025).

``python -m artifactr.files.programs.serve`` reads :class:`Deployment` once, at start, with
pydantic-settings. With nothing set it is the embedded default: a SQLite file, the local office,
secrets of its own. A deployment of several replicas sets :data:`DATABASE_URL`, and then must set
:data:`SECRET` and :data:`WOPI_SECRET` as well: a link or token one replica signs, another must
accept. A missing or bad setting is :class:`Misconfigured`, one line that names it and says what
it expects.

The choice of the blobs' adapter is :func:`blobs_from` alone, and the workers' :func:`app_from`.
:func:`schema_behind` tells a replica whether ``serve --migrate`` has run on its database: a
replica never migrates a shared database itself, so replicas never race to.
"""

from pathlib import Path
from typing import Annotated, Final, Literal

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files.apps.worker import Worker
from artifactr.files.core.app_port import App
from artifactr.files.core.blobs import Blobs
from artifactr.files.core.clock import Clock
from artifactr.files.s3 import InvalidStoreUrl, S3Blobs
from artifactr.files.sql import SqlBlobs
from artifactr.files.sql.schema import SCRIPT_LOCATION
from artifactr.files.sql.tables import VERSION_TABLE

PREFIX: Final = "ARTIFACTR_FILES_"
"""What every setting's variable starts with."""

DATABASE_URL: Final = f"{PREFIX}DATABASE_URL"
"""The variable that names the shared PostgreSQL database."""

BLOBS_URL: Final = f"{PREFIX}BLOBS_URL"
"""The variable that names the object store the bytes go to."""

WORKER_URLS: Final = f"{PREFIX}WORKER_URLS"
"""The variable that lists the workers."""

WORKER_TOKEN_FILE: Final = f"{PREFIX}WORKER_TOKEN_FILE"
"""The variable that names the file holding the workers' bearer token."""

SECRET: Final = f"{PREFIX}SECRET"
"""The variable that holds the secret signing capability links and the portal's notices."""

WOPI_SECRET: Final = f"{PREFIX}WOPI_SECRET"
"""The variable that holds the secret signing WOPI access tokens."""

MIN_SECRET: Final = 32
"""The fewest characters a secret or a token may have."""

MIGRATE: Final = "python -m artifactr.files.programs.serve --migrate"
"""The command that migrates a deployment's database, as a refusal names it."""

ARTIFACTR_SCRIPTS: Final = "artifactr.sql:migrations"
"""Where artifactr's own Alembic chain is."""

ARTIFACTR_VERSION_TABLE: Final = "artifactr_alembic_version"
"""The table artifactr's chain records its version in."""

S3_FORM: Final = "s3://bucket/prefix?endpoint_url=http://host:8333&region=us-east-1"
"""What an object store's URL looks like (``S3Blobs.from_url``)."""


class Misconfigured(Exception):
    """A setting is missing or not valid: the start stops with one line that names it.

    Args:
        setting: The variable (``ARTIFACTR_FILES_SECRET``) or option.
        expected: What it must be, in a few words.
    """

    def __init__(self, setting: str, expected: str) -> None:
        super().__init__(f"{setting}: {expected}")
        self.setting = setting
        """The variable or option at fault."""
        self.expected = expected
        """What it must be."""


class Deployment(BaseSettings):
    """The deployment's settings, each from its ``ARTIFACTR_FILES_*`` variable; none required alone.

    Each field's description is what ``--help``, the guide and a refusal say about it.
    """

    model_config = SettingsConfigDict(env_prefix=PREFIX, extra="ignore", frozen=True)

    database_url: str | None = Field(
        default=None,
        description="PostgreSQL shared by every replica (postgresql://user@host/db); "
        "a SQLite file of this process's own if unset",
    )
    """The shared database, or None for the embedded SQLite file."""
    blobs_url: str | None = Field(
        default=None,
        description="the object store for the files' bytes "
        "(s3://bucket/prefix?endpoint_url=...&region=...); the database if unset",
    )
    """The object store, or None for the database's blobs."""
    worker_urls: Annotated[tuple[str, ...], NoDecode] = Field(
        default=(),
        description="one or more workers, comma-separated (http://worker-1:8000,"
        "http://worker-2:8000); the local app if unset",
    )
    """The workers' base URLs; none for the local app."""
    worker_token_file: Path | None = Field(
        default=None,
        description="the file holding the workers' bearer token (at least 32 characters); "
        f"required with {WORKER_URLS}",
    )
    """The file the workers' token is read from."""
    worker_app: Literal["wordcraft", "libreoffice"] = Field(
        default="wordcraft",
        description="the workers' app, their WORKER_APP: wordcraft or libreoffice",
    )
    """The workers' app."""
    pool: int | None = Field(
        default=None,
        ge=0,
        description="LibreOffice offices started ahead of the jobs, each for exactly one job "
        "(0: none); one a core, as memory allows, at most 4, if unset",
    )
    """The local LibreOffice's pool, or None to size it from the machine (ADR-0033)."""
    secret: SecretStr | None = Field(
        default=None,
        description="signs capability links and the portal's notices (at least 32 characters); "
        f"required with {DATABASE_URL}, a random one per process if unset",
    )
    """The secret of links and notices."""
    wopi_secret: SecretStr | None = Field(
        default=None,
        description="signs WOPI access tokens (at least 32 characters); "
        f"required with {DATABASE_URL}, a random one per process if unset",
    )
    """The secret of WOPI tokens."""
    public_url: str | None = Field(
        default=None,
        description="where people and editors reach the service, the balancer's URL "
        "(https://files.example.com), the same on every replica; http://<host>:<port> if unset",
    )
    """The service's public URL, if not this process's own address."""
    wopi_discovery: str | None = Field(
        default=None,
        description="an editor's discovery URL (https://host/hosting/discovery), whose keys "
        "verify WOPI proofs; none if unset",
    )
    """The editor's discovery URL, if any."""

    @field_validator("worker_urls", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(url.strip() for url in value.split(",") if url.strip())
        return value

    @property
    def shared(self) -> bool:
        """Whether the database is a deployment's, which several replicas may share."""
        return self.database_url is not None


def variable(field: str) -> str:
    """Return the environment variable of a :class:`Deployment` field."""
    return PREFIX + field.upper()


def settings_help() -> str:
    """Return every setting, a line each, as ``--help`` and the guide list them."""
    return "\n".join(
        f"  {variable(name)}: {field.description}"
        for name, field in Deployment.model_fields.items()
    )


def read_deployment() -> Deployment:
    """Return the environment's settings, checked.

    Raises:
        Misconfigured: If a setting is missing or not valid.
    """
    try:
        deployment = Deployment()
    except ValidationError as error:
        first = error.errors()[0]
        name = str(first["loc"][0])
        description = Deployment.model_fields[name].description
        raise Misconfigured(variable(name), f"{first['msg']}; expected {description}") from error
    check(deployment)
    return deployment


def check(deployment: Deployment) -> None:
    """Check the settings that depend on each other, and each value's form.

    Raises:
        Misconfigured: Naming the first setting that is missing or not valid.
    """
    url = deployment.database_url
    if url is not None and not url.startswith(("postgresql://", "postgresql+asyncpg://")):
        raise Misconfigured(DATABASE_URL, "expected a PostgreSQL URL, postgresql://user@host/db")
    for name, value in (("secret", deployment.secret), ("wopi_secret", deployment.wopi_secret)):
        if value is None and deployment.shared:
            raise Misconfigured(
                variable(name),
                f"required with {DATABASE_URL}: every replica must sign and accept the same "
                f"links; expected at least {MIN_SECRET} characters (openssl rand -hex 32)",
            )
        if value is not None and len(value.get_secret_value()) < MIN_SECRET:
            raise Misconfigured(variable(name), f"expected at least {MIN_SECRET} characters")
    for worker in deployment.worker_urls:
        if not worker.startswith(("http://", "https://")):
            raise Misconfigured(WORKER_URLS, f"expected http(s):// URLs, not {worker!r}")
    if deployment.worker_urls:
        worker_token(deployment)


def worker_token(deployment: Deployment) -> str:
    """Return the workers' bearer token, read from its file.

    Raises:
        Misconfigured: If the file is not set, can't be read, or holds a short token.
    """
    path = deployment.worker_token_file
    if path is None:
        raise Misconfigured(WORKER_TOKEN_FILE, f"required with {WORKER_URLS}: the token's file")
    try:
        token = path.read_text().strip()
    except OSError as error:
        raise Misconfigured(WORKER_TOKEN_FILE, f"can't read {path}: {error.strerror}") from error
    if len(token) < MIN_SECRET:
        raise Misconfigured(WORKER_TOKEN_FILE, f"expected a token of {MIN_SECRET}+ characters")
    return token


def database_url(deployment: Deployment) -> str:
    """Return the shared database's URL with the driver SQLAlchemy needs, asyncpg."""
    url = deployment.database_url or ""
    return url.replace("postgresql://", "postgresql+asyncpg://", 1)


def blobs_from(url: str | None, engine: AsyncEngine, clock: Clock) -> Blobs:
    """Return the blobs' adapter a URL names: the object store's for ``s3://``, else the database's.

    Raises:
        Misconfigured: If the URL is neither, or the object store's adapter can't use it.
    """
    if url is None:
        return SqlBlobs(engine, clock=clock)
    if not url.startswith("s3://"):
        raise Misconfigured(BLOBS_URL, "expected s3://bucket/prefix, or unset for the database")
    try:
        return S3Blobs.from_url(url, clock=clock)
    except InvalidStoreUrl as refused:
        raise Misconfigured(BLOBS_URL, f"{refused.why}; expected {S3_FORM}") from None


def app_from(deployment: Deployment) -> App | None:
    """Return the workers' adapter over every worker URL, or None for the local app."""
    if not deployment.worker_urls:
        return None
    return Worker(deployment.worker_urls, token=worker_token(deployment), app=deployment.worker_app)


async def schema_behind(engine: AsyncEngine) -> str | None:
    """Return why the database's schema is not this program's, or None if it is.

    Both chains are read, artifactr's and this package's, without changing anything.
    """
    async with engine.connect() as connection:
        return await connection.run_sync(_behind)


def _behind(connection: Connection) -> str | None:
    for location, table in (
        (ARTIFACTR_SCRIPTS, ARTIFACTR_VERSION_TABLE),
        (SCRIPT_LOCATION, VERSION_TABLE),
    ):
        config = Config()
        config.set_main_option("script_location", location)
        heads = set(ScriptDirectory.from_config(config).get_heads())
        context = MigrationContext.configure(connection, opts={"version_table": table})
        current = set(context.get_current_heads())
        if not current:
            return f"the database is not migrated ({table} is empty): run {MIGRATE}"
        if current != heads:
            return (
                f"the database's schema is {', '.join(sorted(current))} in {table}, "
                f"not {', '.join(sorted(heads))}: run {MIGRATE}"
            )
    return None
