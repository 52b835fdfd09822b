"""Fixtures for the files router: an app over SQLite or PostgreSQL, FakeApp, a clock, a client."""

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

import httpx2
import pytest
from artifactr import AgentActor, UserActor, Workspaces
from artifactr.core import Actor, Visibility
from artifactr.fastapi import Unauthorized
from artifactr.sql import SqlStorage, migrate
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.requests import HTTPConnection

from artifactr.files import DOCX, App, WordDocument
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.integrations import InMemoryIntegrations, integration_gate
from artifactr.files.fastapi.router import files_router
from artifactr.files.native import NativeFiles
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from fastapi import FastAPI
from tests.clock import Clock
from tests.documents import build_docx

TENANT = "t1"
WORKSPACE = "w1"

ALICE = {"x-user": "alice"}
BOB = {"x-user": "bob"}
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


@dataclass
class Api:
    """The router in an app, its client, and the parts behind it."""

    client: httpx2.AsyncClient
    files: NativeFiles
    workspaces: Workspaces
    app: FakeApp
    switch: InMemoryIntegrations
    clock: Clock
    hidden: dict[str, set[str]] = field(default_factory=dict[str, set[str]])
    """The artifacts each participant (``user:bob``) may not see."""

    def url(self, path: str = "", workspace: str = WORKSPACE) -> str:
        return f"/workspaces/{workspace}/files{path}"

    async def upload(
        self, data: bytes | None = None, name: str = "contract.docx", workspace: str = WORKSPACE
    ) -> str:
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
"""Builds an :class:`Api` on the test's database; ``app`` replaces FakeApp, and other keyword
arguments go to NativeFiles."""


def build_app(files: NativeFiles, workspaces: Workspaces) -> FastAPI:
    """Return an app that mounts the files router alone."""
    app = FastAPI(title="artifactr.files", version="1")
    app.include_router(files_router(files, workspaces, resolve_actor=resolve_actor))
    return app


@pytest.fixture
async def make_api(engine: AsyncEngine) -> AsyncIterator[MakeApi]:
    await migrate(engine)
    await migrate_files(engine)
    storage = SqlStorage(engine)
    async with AsyncExitStack() as stack:

        async def make(*, app: App | None = None, **options: Any) -> Api:
            clock = Clock()
            fake = FakeApp()
            switch = InMemoryIntegrations()
            files = NativeFiles(
                blobs=SqlBlobs(engine, clock=clock),
                app=app or fake,
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

            async def allow(
                tenant: str, workspace: str | None, actor: Actor, access: object
            ) -> bool:
                return actor.participant != "user:mallory"

            workspaces = Workspaces(
                storage,
                types=list(options.get("types", [WordDocument])),
                authorize=integration_gate(switch, files.key_of, storage, authorize=allow),
                hidden=hides,
            )
            transport = httpx2.ASGITransport(app=build_app(files, workspaces))
            client = await stack.enter_async_context(
                httpx2.AsyncClient(transport=transport, base_url="http://files.test")
            )
            return Api(client, files, workspaces, fake, switch, clock, hidden)

        yield make


@pytest.fixture
async def api(make_api: MakeApi) -> Api:
    return await make_api()
