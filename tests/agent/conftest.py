"""Fixtures for the native file tools: a workspace on SQL, FakeApp, and a scripted agent.

A :class:`World` is the usual world (tests/world.py) on SQLite or PostgreSQL, its switch
counting its reads. :meth:`World.run` sends a
message through artifactr's ``Runner`` to an agent with the ``ArtifactWorkspace`` capability and
the native file tools, whose model is a script: each step answers one request, and every request
is kept, with the tools it offered, so a test asserts on what the model was sent.
"""

import inspect
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
from artifactr import UserActor
from artifactr.agent import ArtifactWorkspace, Runner, Session, function_model
from artifactr.core import Artifact, Envelope, RunEnded, ToolReturned, WritePolicy
from pydantic_ai import (
    Agent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo
from sqlalchemy.ext.asyncio import AsyncEngine

import tests.world
from artifactr.files import NativeFile, WordDocument
from artifactr.files.agent.tools import native_file_tools
from artifactr.files.core.integrations import InMemoryIntegrations
from artifactr.files.native import NativeFiles
from tests.documents import build_docx
from tests.world import DEADLINE, chunks, world_on

ALICE = UserActor(id="alice", name="Alice")
BOB = UserActor(id="bob", name="Bob")

RFC3339_Z = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z")
"""A time as every answer gives one: RFC 3339 in UTC, with a Z (never ``+00:00``)."""


class DirectDocument(WordDocument, name="tools_direct_document"):
    """A Word document an agent edits directly: an application's own kind, as a user would."""

    write_policy: ClassVar[WritePolicy] = "direct"


class Note(Artifact, name="tools_note"):
    """An artifact that is not a native file."""

    text: str


class CountingIntegrations(InMemoryIntegrations):
    """Switches in a dict that count how often they are read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def is_enabled(self, tenant_id: str, workspace_id: str, key: str) -> bool:
        self.reads += 1
        return await super().is_enabled(tenant_id, workspace_id, key)


Step = ModelResponse | Callable[["Request"], ModelResponse | Awaitable[ModelResponse]]
"""One scripted answer: a response, or a function of the request it answers."""


@dataclass
class Request:
    """One request the model was sent: the messages and the tools offered."""

    messages: list[ModelMessage]
    info: AgentInfo

    @property
    def tools(self) -> list[str]:
        return sorted(tool.name for tool in self.info.function_tools)

    def returns(self) -> list[ToolReturnPart]:
        """The tool results the last message carries: the ones this request answers."""
        last = self.messages[-1]
        assert isinstance(last, ModelRequest)
        return [part for part in last.parts if isinstance(part, ToolReturnPart)]

    def returned(self) -> ToolReturnPart:
        """The one tool result the last message carries."""
        [part] = self.returns()
        return part


@dataclass
class Transcript:
    """What a run did: the requests its model was sent, and the thread's log from its message."""

    requests: list[Request]
    events: list[Envelope]
    error: BaseException | None = None

    def tool_returns(self) -> list[tuple[str, str]]:
        """Each ``tool_returned`` in the log: the tool's name and status, in order."""
        return [
            (e.event.tool_name, e.event.status)
            for e in self.events
            if isinstance(e.event, ToolReturned)
        ]

    def ended(self) -> RunEnded:
        [ended] = [e.event for e in self.events if isinstance(e.event, RunEnded)]
        return ended


def call(tool: str, **args: Any) -> ModelResponse:
    """Return a response that calls one tool."""
    return ModelResponse(parts=[ToolCallPart(tool, args)])


def calls(*tools: tuple[str, dict[str, Any]]) -> ModelResponse:
    """Return a response that calls several tools at once."""
    return ModelResponse(parts=[ToolCallPart(tool, args) for tool, args in tools])


def say(text: str) -> ModelResponse:
    """Return a response that ends the run with a message."""
    return ModelResponse(parts=[TextPart(text)])


@dataclass(kw_only=True)
class World(tests.world.World):
    """The world (tests/world.py) on SQL, and a scripted agent's runs in its threads."""

    threads: dict[str, str] = field(default_factory=dict[str, str])

    document: ClassVar[str] = "report.docx"

    async def upload(
        self,
        data: bytes | None = None,
        name: str | None = None,
        kind: type[NativeFile] = WordDocument,
    ) -> str:
        """Upload a file as Alice, of a kind; return its id."""
        if kind is WordDocument:
            return await super().upload(data, name)
        files = NativeFiles(
            blobs=self.blobs,
            app=self.app,
            leases=self.leases,
            checkouts=self.checkouts,
            types=(kind,),
        )
        outcome = await files.upload(
            await self.ws(), name or self.document, chunks(data or build_docx())
        )
        assert outcome.type == "applied"
        return outcome.artifact_id

    async def run(
        self,
        steps: Sequence[Step],
        prompt: str = "Please work on the report.",
        *,
        view: bool = False,
        thread: str = "main",
    ) -> Transcript:
        """Send a message to a scripted agent in a thread, wait for its run, return what it did.

        A run that fails is returned with its error rather than raised, so its log is kept.
        """
        requests: list[Request] = []
        script = iter(steps)

        async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            request = Request(list(messages), info)
            requests.append(request)
            step = next(script)
            if isinstance(step, ModelResponse):
                return step
            answered = step(request)
            return await answered if inspect.isawaitable(answered) else answered

        agent = Agent(
            function_model(respond),
            deps_type=Session[None],
            capabilities=[ArtifactWorkspace(types=[WordDocument])],
            toolsets=[native_file_tools(self.files, view=view)],
        )
        runner = Runner(agent, app=None)
        ws = await self.ws()
        if thread not in self.threads:
            self.threads[thread] = (await ws.create_thread()).id
        thread_id = self.threads[thread]
        before = await ws.read(threads={thread_id}, last=1)
        error: BaseException | None = None
        try:
            sent = await runner.send(ws, thread_id, prompt)
            assert sent.run is not None
            await sent.run.wait()
        except Exception as failed:
            error = failed
        finally:
            await runner.aclose()
        events = await ws.read(after_seq=before[-1].seq, threads={thread_id})
        return Transcript(requests, events, error)


@pytest.fixture
async def world(engine: AsyncEngine) -> World:
    """A fresh workspace on SQLite or PostgreSQL, its app on."""
    usual = await world_on(
        engine,
        switch=CountingIntegrations(),
        types=(WordDocument, DirectDocument),
        kinds=(Note,),
        deadline=DEADLINE,
        render_deadline=DEADLINE,
    )
    return World(**usual.parts())
