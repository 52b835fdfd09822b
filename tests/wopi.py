"""A WOPI host for tests: the files and WOPI routers over a database, people, and tokens.

eddie and erin are editors, rita a viewer (she may read, never edit), mallory no member. A test
uploads a file as eddie, mints a token for a person and that file, and calls the WOPI
operations as an editor would: through an in-process client, or over real HTTP with uvicorn.
"""

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import uvicorn
from artifactr import AgentActor, UserActor, Workspaces
from artifactr.core import Actor, Visibility
from artifactr.fastapi import Unauthorized
from artifactr.sql import SqlStorage, migrate
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import HTTPConnection

from artifactr.files import DOCX, WordDocument
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.integrations import InMemoryIntegrations, integration_gate
from artifactr.files.fastapi.router import files_router
from artifactr.files.fastapi.wopi import WopiSettings, wopi_router
from artifactr.files.fastapi.wopi_discovery import DiscoveryCache
from artifactr.files.fastapi.wopi_tokens import mint_access_token
from artifactr.files.native import NativeFiles
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from tests.clock import Clock
from tests.documents import build_docx

SECRET = "a deployment secret of at least 32 bytes, for tests"
TENANT = "t1"
WORKSPACE = "w1"
EDDIE = UserActor(id="eddie", name="Eddie")
ERIN = UserActor(id="erin", name="Erin")
RITA = UserActor(id="rita", name="Rita")
MALLORY = UserActor(id="mallory", name="Mallory")
CAROL = UserActor(id="carol", name="Carol")
"""An editor who may not read the workspace's log: her editor is given no time."""
AGENT = AgentActor(thread_id="thr_1", run_id="run_1", on_behalf_of=EDDIE)
WRITES = {"artifactr:edit_artifact", "artifactr:create_artifact", "artifactr:archive_artifact"}


def document(*words: str) -> bytes:
    """A real one-page .docx whose body says ``words``."""
    return build_docx((("Title", "Validator file"), " ".join(words) or "Empty body."))


async def resolve_actor(connection: HTTPConnection) -> tuple[str, Actor]:
    """The files router's caller: ``x-user`` names a person, ``x-agent`` an agent for eddie."""
    if user := connection.headers.get("x-user"):
        return TENANT, UserActor(id=user, name=user.title())
    if connection.headers.get("x-agent"):
        return TENANT, AGENT
    raise Unauthorized("who?")


@dataclass
class Host:
    """The routers in an app, a client, and the parts behind them."""

    app: FastAPI
    files: NativeFiles
    fake: FakeApp
    workspaces: Workspaces
    switch: InMemoryIntegrations
    clock: Clock
    settings: WopiSettings
    client: httpx2.AsyncClient | None = None
    hidden: dict[str, set[str]] = field(default_factory=dict[str, set[str]])

    @property
    def http(self) -> httpx2.AsyncClient:
        assert self.client is not None
        return self.client

    def token(self, artifact_id: str, person: UserActor = EDDIE, **options: Any) -> str:
        return mint_access_token(
            SECRET,
            tenant_id=TENANT,
            workspace_id=WORKSPACE,
            artifact_id=artifact_id,
            person=person,
            clock=self.clock,
            **options,
        ).token

    async def upload(self, data: bytes | None = None, name: str = "contract.docx") -> str:
        ws = await self.workspaces.open(TENANT, WORKSPACE, actor=EDDIE)
        outcome = await self.files.upload(
            ws, name, _once(data or document("Draft")), media_type=DOCX
        )
        assert outcome.type == "applied"
        return outcome.artifact_id

    async def ws(self, actor: Actor = EDDIE) -> Any:
        return await self.workspaces.open(TENANT, WORKSPACE, actor=actor)

    async def call(
        self,
        artifact_id: str,
        override: str | None = None,
        *,
        person: UserActor = EDDIE,
        token: str | None = None,
        body: bytes | None = None,
        contents: bool = False,
        **headers: str,
    ) -> httpx2.Response:
        """Make one WOPI request: CheckFileInfo with no override, else the override's."""
        path = f"/wopi/files/{artifact_id}" + ("/contents" if contents else "")
        params = {"access_token": self.token(artifact_id, person) if token is None else token}
        sent = {name.replace("_", "-"): value for name, value in headers.items()}
        if override is not None:
            sent["X-WOPI-Override"] = override
        if override is None and not contents:
            return await self.http.get(path, params=params, headers=sent)
        if override is None:
            return await self.http.get(path, params=params, headers=sent)
        return await self.http.post(path, params=params, headers=sent, content=body or b"")


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def build_host(
    engine: AsyncEngine,
    *,
    discovery: DiscoveryCache | None = None,
    origin: str | None = "https://cool.test",
    clock: Clock | None = None,
    migrated: bool = False,
    **options: Any,
) -> Host:
    """Return a host over a migrated database: the files and WOPI routers in one app."""
    if not migrated:
        await migrate(engine)
        await migrate_files(engine)
    clock = clock or Clock()
    switch = InMemoryIntegrations()
    storage = SqlStorage(engine)
    fake = FakeApp()
    files = NativeFiles(
        blobs=SqlBlobs(engine, clock=clock),
        app=fake,
        leases=SqlLeases(engine, clock=clock),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
        integrations=switch,
        clock=clock,
        **options,
    )
    hidden: dict[str, set[str]] = {}

    async def hides(tenant: str, workspace: str, actor: Actor) -> Visibility:
        return Visibility(artifacts=frozenset(hidden.get(actor.participant, set())))

    async def allow(tenant: str, workspace: str | None, actor: Actor, access: Any) -> bool:
        if actor.participant == "user:mallory":
            return False
        if actor.participant == "user:carol":
            return access.action != "artifactr:read_events"
        return actor.participant != "user:rita" or access.action not in WRITES

    workspaces = Workspaces(
        storage,
        types=[WordDocument],
        authorize=integration_gate(switch, files.key_of, storage, authorize=allow),
        hidden=hides,
    )
    settings = WopiSettings(
        secret=SECRET, discovery=discovery, clock=clock, post_message_origin=origin
    )
    app = FastAPI(title="wopi host")
    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    app.include_router(wopi_router(files, workspaces, settings))
    return Host(app, files, fake, workspaces, switch, clock, settings, hidden=hidden)


@asynccontextmanager
async def in_process(host: Host) -> AsyncIterator[Host]:
    """Yield the host with a client that calls the app in process."""
    transport = httpx2.ASGITransport(app=host.app)
    async with httpx2.AsyncClient(transport=transport, base_url="http://host.test") as client:
        host.client = client
        yield host


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@asynccontextmanager
async def served(host: Host) -> AsyncIterator[Host]:
    """Yield the host served by uvicorn on a free port, with a client over real HTTP."""
    port = free_port()
    config = uvicorn.Config(
        host.app, host="127.0.0.1", port=port, log_config=None, access_log=False, lifespan="off"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    for _ in range(1000):
        if server.started:
            break
        await asyncio.sleep(0.01)
    assert server.started, "the host did not start"
    try:
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            host.client = client
            yield host
    finally:
        server.should_exit = True
        await task
