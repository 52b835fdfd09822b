"""Fixtures for NativeFiles: a workspace on every storage, FakeApp, and a clock that moves."""

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from artifactr import AgentActor, UserActor, Workspaces
from artifactr.core import Actor
from artifactr.sql import SqlStorage, migrate
from artifactr.workspace import InMemoryStorage, Scope, Storage, Workspace

from artifactr.files import InMemoryBlobs, InMemoryCheckouts, InMemoryLeases, WordDocument
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.blobs import Blobs
from artifactr.files.core.checkouts import Checkouts
from artifactr.files.core.integrations import InMemoryIntegrations, integration_gate
from artifactr.files.core.leases import Leases
from artifactr.files.core.renders import InMemoryRenders, Renders
from artifactr.files.native import NativeFiles
from tests.clock import Clock
from tests.databases import BACKENDS, sql_engine
from tests.documents import build_docx

ALICE = UserActor(id="alice", name="Alice")
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


@dataclass
class Env:
    """One workspace's world: storage, the service and its parts."""

    backend: str
    storage: Storage
    workspaces: Workspaces
    files: NativeFiles
    app: FakeApp
    blobs: Blobs
    leases: Leases
    checkouts: Checkouts
    renders: Renders
    switch: InMemoryIntegrations
    clock: Clock
    opened: dict[str, Workspace] = field(default_factory=dict[str, Workspace])

    @property
    def scope(self) -> Scope:
        return Scope("t1", "w1")

    async def ws(self, actor: Actor = ALICE) -> Workspace:
        return await self.workspaces.open("t1", "w1", actor=actor)

    async def upload(self, data: bytes | None = None, name: str = "contract.docx") -> str:
        outcome = await self.files.upload(await self.ws(), name, chunks(data or sample_docx()))
        assert outcome.type == "applied"
        return outcome.artifact_id


async def chunks(data: bytes, size: int = 4096) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def make_env(backend: str, tmp_path: Path, **options: object) -> AsyncIterator[Env]:
    clock = Clock()
    app = FakeApp()
    switch = InMemoryIntegrations()
    if backend == "memory":
        storage: Storage = InMemoryStorage()
        blobs: Blobs = InMemoryBlobs(clock=clock)
        leases: Leases = InMemoryLeases(clock=clock)
        checkouts: Checkouts = InMemoryCheckouts()
        renders: Renders = InMemoryRenders()
        yield build(
            backend, storage, app, blobs, leases, checkouts, renders, switch, clock, options
        )
        return
    from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
    from artifactr.files.sql import migrate as migrate_files

    async with sql_engine(backend, tmp_path) as engine:
        await migrate(engine)
        await migrate_files(engine)
        yield build(
            backend,
            SqlStorage(engine),
            app,
            SqlBlobs(engine, clock=clock),
            SqlLeases(engine, clock=clock),
            SqlCheckouts(engine),
            SqlRenders(engine),
            switch,
            clock,
            options,
        )


def build(
    backend: str,
    storage: Storage,
    app: FakeApp,
    blobs: Blobs,
    leases: Leases,
    checkouts: Checkouts,
    renders: Renders,
    switch: InMemoryIntegrations,
    clock: Clock,
    options: dict[str, object],
) -> Env:
    files = NativeFiles(
        blobs=blobs,
        app=app,
        leases=leases,
        checkouts=checkouts,
        renders=renders,
        integrations=switch,
        clock=clock,
        deadline=2.0,
        render_deadline=2.0,
        **options,  # the tests' own settings: ttl, sizes
    )
    gate = integration_gate(switch, files.key_of, storage)
    workspaces = Workspaces(storage, types=[WordDocument], authorize=gate)
    return Env(
        backend, storage, workspaces, files, app, blobs, leases, checkouts, renders, switch, clock
    )


@pytest.fixture(params=BACKENDS)
async def env(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Env]:
    async for made in make_env(request.param, tmp_path):
        yield made


@pytest.fixture
async def memory_env(tmp_path: Path) -> AsyncIterator[Env]:
    async for made in make_env("memory", tmp_path):
        yield made
