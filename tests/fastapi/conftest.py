"""Fixtures for the files router: the world (tests/world.py) on SQL, the router, a client."""

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
import uvicorn
from artifactr import AgentActor, UserActor, Workspaces
from artifactr.core import Actor, Visibility
from artifactr.fastapi import Unauthorized
from artifactr.sql import SqlStorage, migrate
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import HTTPConnection

from artifactr.files import DOCX, App
from artifactr.files.fastapi.capability import Capabilities
from artifactr.files.fastapi.router import files_router
from artifactr.files.fastapi.webdav import file_link, webdav_router
from artifactr.files.native import NativeFiles
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlHistory, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from tests.clock import Clock
from tests.documents import build_docx
from tests.world import World, assemble

TENANT = "t1"
WORKSPACE = "w1"

ALICE = {"x-user": "alice"}
BOB = {"x-user": "bob"}
RITA = {"x-user": "rita"}
"""A viewer: she may read every file and edit none."""
VIEWER_REFUSED = frozenset(
    {"artifactr:edit_artifact", "artifactr:create_artifact", "artifactr:respond_to_proposal"}
)
"""What a viewer (rita) is refused: editing a file, adding one, and deciding a proposal."""
MALLORY = {"x-user": "mallory"}
"""Refused every workspace by the application's ``authorize``."""
AGENT = {"x-agent": "alice"}
"""An agent's run acting for alice."""

DOCX_BODY = {"content-type": DOCX}


async def resolve_actor(connection: HTTPConnection) -> tuple[str, Actor]:
    """Return the tenant (``x-tenant``, else t1) and the user (``x-user``) or agent."""
    tenant = connection.headers.get("x-tenant", TENANT)
    if user := connection.headers.get("x-user"):
        return tenant, UserActor(id=user, name=user.title())
    if person := connection.headers.get("x-agent"):
        return tenant, AgentActor(
            thread_id="thr_1", run_id="run_1", on_behalf_of=UserActor(id=person)
        )
    raise Unauthorized("who?")


@dataclass(kw_only=True)
class Api(World):
    """The world (tests/world.py) on SQL, the router in an app over it, and its client."""

    client: httpx2.AsyncClient
    hidden: dict[str, set[str]] = field(default_factory=dict[str, set[str]])
    """The artifacts each participant (``user:bob``) may not see."""

    def url(self, path: str = "", workspace: str = WORKSPACE) -> str:
        return f"/workspaces/{workspace}/files{path}"

    async def upload(
        self, data: bytes | None = None, name: str = "contract.docx", workspace: str = WORKSPACE
    ) -> str:
        """Upload a file over HTTP as Alice; return its id."""
        response = await self.client.post(
            self.url(workspace=workspace),
            params={"name": name},
            content=build_docx() if data is None else data,
            headers={**ALICE, **DOCX_BODY},
        )
        assert response.status_code == 201, response.text
        return response.json()["artifact_id"]

    async def check_out(self, artifact_id: str, who: dict[str, str] = ALICE) -> dict[str, Any]:
        response = await self.client.post(self.url(f"/{artifact_id}/checkouts"), headers=who)
        assert response.status_code == 200, response.text
        return response.json()

    async def check_in(
        self, artifact_id: str, checkout_id: str, data: bytes, who: dict[str, str] = ALICE
    ) -> httpx2.Response:
        return await self.client.post(
            self.url(f"/{artifact_id}/checkouts/{checkout_id}/check-in"), content=data, headers=who
        )


MakeApi = Callable[..., Awaitable[Api]]
"""Builds an :class:`Api` on the test's database; ``app`` replaces FakeApp, ``on`` names another
engine on it, ``clock`` shares a clock, and other keyword arguments go to NativeFiles."""


def build_app(files: NativeFiles, workspaces: Workspaces) -> FastAPI:
    """Return an app that mounts the files router alone."""
    app = FastAPI(title="artifactr.files", version="1")
    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    return app


async def open_api(
    engine: AsyncEngine,
    stack: AsyncExitStack,
    *,
    app: App | None = None,
    on: AsyncEngine | None = None,
    clock: Clock | None = None,
    **options: Any,
) -> Api:
    """Return an :class:`Api` on a migrated database, its client closed with ``stack``."""
    # ``on``: another engine on the same database, as a second process would open it.
    db = on or engine
    hidden: dict[str, set[str]] = {}

    async def hides(tenant: str, workspace: str, actor: Actor) -> Visibility:
        return Visibility(artifacts=frozenset(hidden.get(actor.participant, set())))

    async def allow(tenant: str, workspace: str | None, actor: Actor, access: object) -> bool:
        # carol may do anything but read the log (WebDAV's times are then fixed).
        if actor.participant == "user:carol":
            return getattr(access, "action", None) != "artifactr:read_events"
        if actor.participant == "user:rita":  # a viewer: she reads, and never edits nor adds
            return getattr(access, "action", None) not in VIEWER_REFUSED
        return actor.participant != "user:mallory"

    clock = clock or Clock()
    storage = SqlStorage(db, clock=clock)
    usual = assemble(
        engine.dialect.name,
        storage,
        SqlBlobs(db, clock=clock),
        SqlLeases(db, clock=clock),
        SqlCheckouts(db),
        SqlRenders(db),
        app=app,
        clock=clock,
        authorize=allow,
        hidden=hides,
        history=SqlHistory(db),
        **options,
    )
    transport = httpx2.ASGITransport(app=build_app(usual.files, usual.workspaces))
    client = await stack.enter_async_context(
        httpx2.AsyncClient(transport=transport, base_url="http://files.test")
    )
    return Api(**usual.parts(), client=client, hidden=hidden)


@pytest.fixture
async def make_api(engine: AsyncEngine) -> AsyncIterator[MakeApi]:
    await migrate(engine)
    await migrate_files(engine)
    async with AsyncExitStack() as stack:

        async def make(**options: Any) -> Api:
            return await open_api(engine, stack, **options)

        yield make


@pytest.fixture
async def api(make_api: MakeApi) -> Api:
    return await make_api()


# ─── WebDAV ───────────────────────────────────────────────────────────────────

SECRET = "a test secret of at least thirty-two bytes"
"""The capability links' signing secret in tests."""


@dataclass
class Dav:
    """The WebDAV router beside the files router, on the same service, and its client."""

    api: Api
    client: httpx2.AsyncClient
    links: Capabilities
    app: FastAPI

    def url(self, name: str = "", workspace: str = WORKSPACE) -> str:
        return f"/dav/workspaces/{workspace}/{name}"

    async def link(self, artifact_id: str, name: str = "contract.docx", who: str = "alice") -> str:
        ws = await self.api.workspaces.open(TENANT, WORKSPACE, actor=UserActor(id=who, name=who))
        return file_link("", self.links, ws, artifact_id, name)


def build_dav_app(api: Api, links: Capabilities) -> FastAPI:
    """Return an app that mounts the files router and the WebDAV router on one service."""
    app = build_app(api.files, api.workspaces)
    app.include_router(
        webdav_router(
            api.files,
            api.workspaces,
            resolve_actor=resolve_actor,
            capabilities=links,
            clock=api.clock,
        )
    )
    return app


MakeDav = Callable[..., Awaitable[Dav]]
"""Builds a :class:`Dav` on the test's database; keyword arguments go to NativeFiles."""


async def open_dav(api: Api, stack: AsyncExitStack) -> Dav:
    """Return a :class:`Dav` on an :class:`Api`'s service, its client closed with ``stack``."""
    links = Capabilities(SECRET, clock=api.clock)
    app = build_dav_app(api, links)
    transport = httpx2.ASGITransport(app=app)
    client = await stack.enter_async_context(
        httpx2.AsyncClient(transport=transport, base_url="http://files.test")
    )
    return Dav(api, client, links, app)


@pytest.fixture
async def make_dav(make_api: MakeApi) -> AsyncIterator[MakeDav]:
    async with AsyncExitStack() as stack:

        async def make(**options: Any) -> Dav:
            return await open_dav(await make_api(**options), stack)

        yield make


@pytest.fixture
async def dav(make_dav: MakeDav) -> Dav:
    return await make_dav()


@dataclass
class Served:
    """The WebDAV app served on a real port, in the test's own event loop, and what it was asked."""

    dav: Dav
    base: str
    """``http://127.0.0.1:<port>``."""
    requests: list[tuple[str, str, int]]
    """Each request's method, path and status, in order."""

    def methods(self) -> list[str]:
        return [method for method, _, _ in self.requests]


@asynccontextmanager
async def serving(app: Any, requests: list[tuple[str, str, int]]) -> AsyncIterator[str]:
    """Serve an ASGI app on a real port, in the test's own event loop; yield its base URL.

    Each request's method, path and status goes to ``requests``, in order.
    """

    async def recorded(scope: Any, receive: Any, send: Any) -> None:
        status: list[int] = [500]

        async def sending(message: Any) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await app(scope, receive, sending)
        finally:
            if scope["type"] == "http":
                requests.append((scope["method"], scope["path"], status[0]))

    config = uvicorn.Config(
        recorded, host="127.0.0.1", port=0, log_config=None, access_log=False, lifespan="off"
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "the app did not start"
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


@pytest.fixture
async def served(dav: Dav) -> AsyncIterator[Served]:
    requests: list[tuple[str, str, int]] = []
    async with serving(dav.app, requests) as base:
        yield Served(dav, base, requests)
