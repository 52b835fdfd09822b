"""Shared fixtures: the corpus, fresh databases, a SeaweedFS, and hypothesis's bounded profile."""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from sqlalchemy.ext.asyncio import AsyncEngine

from tests.databases import SQL_BACKENDS, sql_engine
from tests.seaweed import SeaweedFS, seaweedfs
from tests.statements import Statements

settings.register_profile(
    "bounded",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
settings.load_profile("bounded")

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "real"
"""The 62 real .docx files beside the project (../shared), present in CI."""


def corpus_files() -> list[Path]:
    """Return the corpus's files, sorted; empty where ../shared is absent."""
    return sorted(CORPUS.glob("*.docx")) if CORPUS.is_dir() else []


@pytest.fixture
def corpus() -> list[Path]:
    """The corpus's files, or a skip saying why there are none."""
    files = corpus_files()
    if not files:
        pytest.skip(f"the corpus is not here: {CORPUS} (it is in CI)")
    return files


@pytest.fixture(params=SQL_BACKENDS)
async def engine(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncEngine]:
    """A fresh, empty SQLite file or PostgreSQL schema."""
    async with sql_engine(request.param, tmp_path) as engine:
        yield engine


@pytest.fixture(scope="session")
def seaweed() -> Iterator[SeaweedFS]:
    """A SeaweedFS for the session (each xdist worker its own), with the ``blobs`` bucket."""
    with seaweedfs() as store:
        store.bucket("blobs")
        yield store


@pytest.fixture
def statements(engine: AsyncEngine) -> Statements:
    """Counts the SQL statements the test's engine runs inside ``statements.counting()``."""
    return Statements(engine)
