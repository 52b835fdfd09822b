"""Fixtures for the native file tools over MCP: a real ArtifactrMcp app, and the official client.

A :class:`Server` is one workspace on SQLite or PostgreSQL (artifactr's ``SqlStorage`` and this
package's SQL adapters, both migrated), a :class:`NativeFiles` on FakeApp whose switch the test
holds, and artifactr's MCP server with :func:`add_native_file_tools` added. :meth:`Server.client`
connects the MCP SDK's ``Client`` to the server's Streamable HTTP app, in process through
httpx2's ASGI transport, inside the server's lifespan: every call is a real HTTP request.
"""

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx2
import pytest
from artifactr import Workspaces
from artifactr.agent import Runner, Session, function_model
from artifactr.core import Actor, ExternalAgentActor, TenantId, Visibility
from artifactr.mcp import ArtifactrMcp
from artifactr.sql import SqlStorage, migrate
from artifactr.workspace import Scope, Storage, Workspace
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent
from pydantic_ai import Agent, ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files import WordDocument
from artifactr.files.apps.fake import FakeApp
from artifactr.files.core.integrations import InMemoryIntegrations, integration_gate
from artifactr.files.mcp import add_native_file_tools
from artifactr.files.native import NativeFiles
from artifactr.files.sql import SqlBlobs, SqlCheckouts, SqlLeases, SqlRenders
from artifactr.files.sql import migrate as migrate_files
from tests.agent.conftest import ALICE, DEADLINE, Note, chunks
from tests.documents import build_docx

CLAUDE = ExternalAgentActor(client_id="claude-desktop", name="Claude Desktop")
"""The MCP client: an external agent with credentials of its own."""

URL = "http://127.0.0.1:8000/mcp"
"""Where the client finds the server (the SDK's DNS-rebinding guard accepts a loopback host)."""


async def resolve(ctx: object) -> tuple[TenantId, ExternalAgentActor]:
    """Authenticate every call as :data:`CLAUDE`, of tenant ``t1``."""
    return "t1", CLAUDE


async def _says_nothing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("Noted.")])


@dataclass
class Server:
    """One workspace on SQL, its native files on FakeApp, the switch, and the MCP server."""

    storage: Storage
    workspaces: Workspaces
    files: NativeFiles
    app: FakeApp
    switch: InMemoryIntegrations
    runner: Runner[None]
    hidden: set[str] = field(default_factory=set[str])
    """The artifacts hidden from the MCP client."""
    mcp: ArtifactrMcp = field(init=False)
    """The server: artifactr's, with the native file tools added."""

    def __post_init__(self) -> None:
        self.serve(self.workspaces)

    def serve(self, workspaces: Workspaces, *, view: bool = True) -> None:
        """Build the server again, over other workspaces or without ``view_page``."""
        self.mcp = ArtifactrMcp(workspaces, self.runner, resolve=resolve)
        add_native_file_tools(
            self.mcp, self.files, workspaces=workspaces, resolve=resolve, view=view
        )

    scope = Scope("t1", "w1")

    async def ws(self, actor: Actor = ALICE) -> Workspace:
        return await self.workspaces.open("t1", "w1", actor=actor)

    async def upload(self, data: bytes | None = None, name: str = "report.docx") -> str:
        """Upload a file as Alice; return its id."""
        outcome = await self.files.upload(await self.ws(), name, chunks(data or build_docx()))
        assert outcome.type == "applied"
        return outcome.artifact_id

    async def note(self) -> str:
        """Create an artifact that is not a native file, as Alice; return its id."""
        return (await (await self.ws()).create(Note(text="Not a file."))).artifact_id

    def off(self) -> None:
        self.switch.set("t1", "w1", self.files.key, enabled=False)

    @asynccontextmanager
    async def client(self) -> AsyncIterator[Client]:
        """Connect the official MCP client over Streamable HTTP, in the server's lifespan."""
        app = self.mcp.http_app(streamable_http_path="/mcp")
        transport = httpx2.ASGITransport(app=app)
        async with (
            self.mcp.lifespan(),
            httpx2.AsyncClient(transport=transport) as http,
            Client(streamable_http_client(URL, http_client=http)) as client,
        ):
            yield client


async def call(client: Client, tool: str, **args: Any) -> CallToolResult:
    """Call a tool in workspace ``w1``."""
    return await client.call_tool(tool, {"workspace_id": "w1", **args})


def text(result: CallToolResult) -> str:
    """The text a tool answered (its first content block)."""
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


def refusal(result: CallToolResult) -> str:
    """The words of a tool error, after the SDK's frame ("Error executing tool <name>: ")."""
    assert result.is_error
    framed = text(result)
    frame = re.match(r"Error executing tool \w+: ", framed)
    assert frame is not None, framed
    return framed[frame.end() :]


@pytest.fixture
async def server(engine: AsyncEngine) -> AsyncIterator[Server]:
    """A fresh workspace on SQLite or PostgreSQL, its app on, and the MCP server over it."""
    await migrate(engine)
    await migrate_files(engine)
    storage = SqlStorage(engine)
    app = FakeApp()
    switch = InMemoryIntegrations()
    files = NativeFiles(
        blobs=SqlBlobs(engine),
        app=app,
        leases=SqlLeases(engine),
        checkouts=SqlCheckouts(engine),
        renders=SqlRenders(engine),
        integrations=switch,
        deadline=DEADLINE,
        render_deadline=DEADLINE,
    )
    hidden: set[str] = set()

    async def hides(tenant_id: str, workspace_id: str, actor: Actor) -> Visibility:
        return Visibility(artifacts=frozenset(hidden if actor == CLAUDE else ()))

    workspaces = Workspaces(
        storage,
        types=[WordDocument, Note],
        authorize=integration_gate(switch, files.key_of, storage),
        hidden=hides,
        hidden_refresh=timedelta(0),
    )

    runner = Runner(Agent(function_model(_says_nothing), deps_type=Session[None]), app=None)
    yield Server(storage, workspaces, files, app, switch, runner, hidden)
    await runner.aclose()
