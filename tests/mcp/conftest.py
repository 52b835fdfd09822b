"""Fixtures for the native file tools over MCP: a real ArtifactrMcp app, and the official client.

A :class:`Server` is the usual world (tests/world.py) on SQLite or PostgreSQL, and artifactr's
MCP server with :func:`add_native_file_tools` added. :meth:`Server.client`
connects the MCP SDK's ``Client`` to the server's Streamable HTTP app, in process through
httpx2's ASGI transport, inside the server's lifespan: every call is a real HTTP request.
"""

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, ClassVar

import httpx2
import pytest
from artifactr import Workspaces
from artifactr.agent import Runner, Session, function_model
from artifactr.core import Actor, ExternalAgentActor, TenantId, Visibility
from artifactr.mcp import ArtifactrMcp
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent
from pydantic_ai import Agent, ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo
from sqlalchemy.ext.asyncio import AsyncEngine

from artifactr.files import WordDocument
from artifactr.files.mcp import add_native_file_tools
from tests.agent.conftest import DirectDocument, Note
from tests.world import DEADLINE, World, world_on

CLAUDE = ExternalAgentActor(client_id="claude-desktop", name="Claude Desktop")
"""The MCP client: an external agent with credentials of its own."""

URL = "http://127.0.0.1:8000/mcp"
"""Where the client finds the server (the SDK's DNS-rebinding guard accepts a loopback host)."""


async def _says_nothing(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart("Noted.")])


def quiet_runner() -> Runner[None]:
    """The runner the server is given for its own tools: an agent that only says "Noted."."""
    return Runner(Agent(function_model(_says_nothing), deps_type=Session[None]), app=None)


@dataclass(kw_only=True)
class Server(World):
    """The world (tests/world.py) on SQL, and the MCP server over it."""

    runner: Runner[None]
    hidden: set[str] = field(default_factory=set[str])
    """The artifacts hidden from the MCP client."""
    mcp: ArtifactrMcp = field(init=False)
    """The server: artifactr's, with the native file tools added."""

    document: ClassVar[str] = "report.docx"

    def __post_init__(self) -> None:
        self.serve(self.workspaces)

    def serve(
        self, workspaces: Workspaces, *, view: bool = True, client: ExternalAgentActor = CLAUDE
    ) -> None:
        """Build the server again: over other workspaces, without ``view_page``, or for another
        client (one acting for a person)."""

        async def resolve(ctx: object) -> tuple[TenantId, ExternalAgentActor]:
            return "t1", client

        self.mcp = ArtifactrMcp(workspaces, self.runner, resolve=resolve)
        add_native_file_tools(
            self.mcp, self.files, workspaces=workspaces, resolve=resolve, view=view
        )

    async def note(self) -> str:
        """Create an artifact that is not a native file, as Alice; return its id."""
        return (await (await self.ws()).create(Note(text="Not a file."))).artifact_id

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
    hidden: set[str] = set()

    async def hides(tenant_id: str, workspace_id: str, actor: Actor) -> Visibility:
        return Visibility(artifacts=frozenset(hidden if actor == CLAUDE else ()))

    usual = await world_on(
        engine,
        types=(WordDocument, DirectDocument),
        kinds=(Note,),
        hidden=hides,
        hidden_refresh=timedelta(0),
        deadline=DEADLINE,
        render_deadline=DEADLINE,
    )
    runner = quiet_runner()
    yield Server(**usual.parts(), runner=runner, hidden=hidden)
    await runner.aclose()
