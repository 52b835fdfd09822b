"""Fixtures for NativeFiles: the world (tests/world.py) on every storage, and a clock that moves."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from artifactr import AgentActor, UserActor

from tests.clock import Clock
from tests.databases import BACKENDS
from tests.documents import build_docx
from tests.world import ALICE, DEADLINE, World, chunks, open_world

__all__ = ["AGENT", "ALICE", "BOB", "World", "chunks", "make_env", "sample_docx"]

BOB = UserActor(id="bob", name="Bob")
AGENT = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=ALICE)


def sample_docx() -> bytes:
    """A small contract whose words the tests edit: "Draft" is in its title and body."""
    return build_docx(
        (
            ("Title", "Draft agreement"),
            ("Heading1", "Terms"),
            "This Draft binds a party to pay a fee.",
            ("Heading2", "Payment"),
            "Payment is due in thirty days.",
        )
    )


async def make_env(backend: str, tmp_path: Path, **options: object) -> AsyncIterator[World]:
    """Yield the world on a backend, with a clock that moves and the tests' app deadlines."""
    async with open_world(
        backend, tmp_path, clock=Clock(), deadline=DEADLINE, render_deadline=DEADLINE, **options
    ) as world:
        world.sample = sample_docx()
        yield world


@pytest.fixture(params=BACKENDS)
async def env(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[World]:
    async for made in make_env(request.param, tmp_path):
        yield made


@pytest.fixture
async def memory_env(tmp_path: Path) -> AsyncIterator[World]:
    async for made in make_env("memory", tmp_path):
        yield made
