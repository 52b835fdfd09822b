"""The usual world: one workspace, NativeFiles on FakeApp, the switch, in memory or on SQL.

:func:`open_world` builds it on a backend (``memory``, ``sqlite``, ``postgres``) and
:func:`world_on` on a migrated engine; each folder's conftest adds what its surface needs (an
HTTP client, an MCP server, grantr) by subclassing :class:`World` with keyword-only fields.
"""

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, ClassVar

from artifactr import UserActor, Workspaces
from artifactr.core import Actor, Visibility
from artifactr.sql import SqlStorage, migrate
from artifactr.workspace import Access, InMemoryStorage, Scope, Storage, Workspace
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files import InMemoryBlobs, InMemoryCheckouts, InMemoryLeases, WordDocument
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.app_port import App
from artifactr.files.core.blobs import Blobs
from artifactr.files.core.checkouts import Checkouts
from artifactr.files.core.integrations import InMemoryIntegrations, integration_gate
from artifactr.files.core.leases import Leases
from artifactr.files.core.manifests import NativeFile
from artifactr.files.core.renders import InMemoryRenders, Renders
from artifactr.files.native import NativeFiles
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlHistory, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from tests.clock import Clock
from tests.databases import sql_engine
from tests.documents import build_docx

ALICE = UserActor(id="alice", name="Alice")

DEADLINE = 15.0
"""Seconds the app may take in the tests' worlds: ample for FakeApp on a loaded machine (an edit
of 57 comments outran 0.5 s in CI, and an upload's parse 2 s beside a CPU hog). A timeout a test
tells is the app's own (``fail_next``), at a deadline the test sets short for that call."""

Authorize = Callable[[str, str | None, Actor, Access], Awaitable[bool]]
Hidden = Callable[[str, str, Actor], Awaitable[Visibility]]


@dataclass(kw_only=True)
class World:
    """One workspace's world: storage, the service and its parts, the switch, the clock."""

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
    clock: Clock | None = None
    """The clock the parts read, if the test moves it; else they read the real time."""
    opened: dict[str, Workspace] = field(default_factory=dict[str, Workspace])
    sample: bytes = field(default_factory=build_docx)
    """What :meth:`upload` uploads unless told otherwise."""

    tenant: ClassVar[str] = "t1"
    workspace: ClassVar[str] = "w1"
    document: ClassVar[str] = "contract.docx"
    """The name :meth:`upload` gives a file."""

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant, self.workspace)

    async def ws(self, actor: Actor = ALICE) -> Workspace:
        return await self.workspaces.open(self.tenant, self.workspace, actor=actor)

    async def upload(self, data: bytes | None = None, name: str | None = None) -> str:
        """Upload a file as Alice (:attr:`sample` by default); return its id."""
        outcome = await self.files.upload(
            await self.ws(), name or self.document, chunks(data or self.sample)
        )
        assert outcome.type == "applied"
        return outcome.artifact_id

    def with_deadline(self, seconds: float) -> NativeFiles:
        """The service on the same parts, for Word documents, its app deadline ``seconds``."""
        timing = {} if self.clock is None else {"clock": self.clock}
        return NativeFiles(
            blobs=self.blobs,
            app=self.app,
            leases=self.leases,
            checkouts=self.checkouts,
            renders=self.renders,
            integrations=self.switch,
            deadline=seconds,
            **timing,
        )

    def off(self) -> None:
        """Switch the app off in the workspace."""
        self.switch.set(self.tenant, self.workspace, self.files.key, enabled=False)

    def parts(self) -> dict[str, Any]:
        """The world's fields, to build a folder's subclass of it with."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(World)}


async def chunks(data: bytes, size: int = 4096) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def assemble(
    backend: str,
    storage: Storage,
    blobs: Blobs,
    leases: Leases,
    checkouts: Checkouts,
    renders: Renders,
    *,
    app: App | None = None,
    switch: InMemoryIntegrations | None = None,
    clock: Clock | None = None,
    types: Sequence[type[NativeFile]] = (WordDocument,),
    kinds: Sequence[type[Any]] = (),
    authorize: Authorize | None = None,
    hidden: Hidden | None = None,
    hidden_refresh: timedelta | None = None,
    **options: Any,
) -> World:
    """Return the world over these parts: NativeFiles on ``app`` (FakeApp by default) and the
    workspaces, gated by the switch, holding ``types`` and the other ``kinds`` of artifact.

    Other keyword arguments go to NativeFiles (deadlines, ttl, sizes).
    """
    fake = FakeApp()
    switch = switch or InMemoryIntegrations()
    timing = {} if clock is None else {"clock": clock}
    files = NativeFiles(
        blobs=blobs,
        app=app or fake,
        leases=leases,
        checkouts=checkouts,
        renders=renders,
        integrations=switch,
        types=tuple(types),
        **timing,
        **options,
    )
    gate = integration_gate(switch, files.key_of, storage, **_given(authorize=authorize))
    workspaces = Workspaces(
        storage,
        types=[*types, *kinds],
        authorize=gate,
        **_given(hidden=hidden, hidden_refresh=hidden_refresh),
    )
    return World(
        backend=backend,
        storage=storage,
        workspaces=workspaces,
        files=files,
        app=fake,
        blobs=blobs,
        leases=leases,
        checkouts=checkouts,
        renders=renders,
        switch=switch,
        clock=clock,
    )


def _given(**options: object) -> dict[str, object]:
    return {name: value for name, value in options.items() if value is not None}


async def world_on(engine: AsyncEngine, *, clock: Clock | None = None, **options: Any) -> World:
    """Return the world on a database: artifactr's and the package's tables, migrated."""
    await migrate(engine)
    await migrate_files(engine)
    return assemble(
        engine.dialect.name,
        SqlStorage(engine),
        SqlBlobs(engine, clock=clock),
        SqlLeases(engine, clock=clock),
        SqlCheckouts(engine),
        SqlRenders(engine),
        clock=clock,
        history=SqlHistory(engine),
        **options,
    )


def world_in_memory(*, clock: Clock | None = None, **options: Any) -> World:
    """Return the world in memory."""
    timing = {} if clock is None else {"clock": clock}
    return assemble(
        "memory",
        InMemoryStorage(),
        InMemoryBlobs(**timing),
        InMemoryLeases(**timing),
        InMemoryCheckouts(),
        InMemoryRenders(),
        clock=clock,
        **options,
    )


@asynccontextmanager
async def open_world(backend: str, tmp_path: Path, **options: Any) -> AsyncIterator[World]:
    """Open the world on a backend (``memory``, ``sqlite``, ``postgres``) for a block."""
    if backend == "memory":
        yield world_in_memory(**options)
        return
    async with sql_engine(backend, tmp_path) as engine:
        yield await world_on(engine, **options)
