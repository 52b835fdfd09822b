"""Fixtures for access through grantr: its real hooks, the gate, a workspace on SQL, FakeApp.

A :class:`World` is one tenant's workspace on SQLite or PostgreSQL (artifactr's ``SqlStorage``
and this package's SQL adapters, both migrated), with a :class:`NativeFiles` on FakeApp. Access
is grantr's: a :class:`~grantr.Grants` over its in-memory storage, handed artifactr's
``ACTIONS`` and nothing else, whose ``authorize`` hook the switch's :func:`integration_gate`
wraps, and whose ``hidden`` hook the ``Workspaces`` takes. Every ``authorize`` answer is
recorded, so a test can say which actions were asked.

The people, each a member of the tenant with one role on the workspace:

- Rita, a ``viewer``: she may only read.
- Abe, an ``asker``: the tenant's own role, a viewer who may also talk to the agent.
- Eddie and Erin, ``editor`` s.
- Carl, a ``contributor``: the tenant's own role, an editor's actions without archiving.
- Ada, the workspace's ``admin``.
- Olive, the tenant's owner, who restricts artifacts.
"""

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from artifactr import AgentActor, UserActor
from artifactr.agent import ArtifactWorkspace, Runner, Session, function_model
from artifactr.core import (
    Actor,
    Envelope,
    ExternalAgentActor,
    SystemActor,
    ToolReturned,
)
from artifactr.workspace import ACTIONS, Access
from grantr import Agent as GrantrAgent
from grantr import (
    Grants,
    InMemoryStorage,
    Resource,
    Role,
    ServicePrincipal,
    Subject,
    TenantId,
    User,
    WorkspaceId,
)
from pydantic_ai import (
    Agent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo
from sqlalchemy.ext.asyncio import AsyncEngine

import tests.world
from artifactr.files import WordDocument
from artifactr.files.agent.tools import native_file_tools
from tests.documents import build_docx
from tests.world import DEADLINE, chunks, world_on

TENANT = "t1"
WORKSPACE = "w1"

RITA = UserActor(id="rita", name="Rita")
"""A viewer: she may only read."""

EDDIE = UserActor(id="eddie", name="Eddie")
"""An editor."""

ERIN = UserActor(id="erin", name="Erin")
"""Another editor."""

CARL = UserActor(id="carl", name="Carl")
"""A contributor: an editor's actions, but not archiving."""

ABE = UserActor(id="abe", name="Abe")
"""An asker: a viewer who may talk to the agent."""

ADA = UserActor(id="ada", name="Ada")
"""The workspace's admin."""

OLIVE = UserActor(id="olive", name="Olive")
"""The tenant's owner."""

APPLICATION = ServicePrincipal(id="artifactr-files")
"""The application's own principal: the runner and the collector act as it."""

CONTRIBUTOR = Role(
    name="contributor",
    actions=frozenset(
        {
            "artifactr:open",
            "artifactr:read_artifacts",
            "artifactr:read_threads",
            "artifactr:read_proposals",
            "artifactr:read_runs",
            "artifactr:read_history",
            "artifactr:read_events",
            "artifactr:create_thread",
            "artifactr:post_message",
            "artifactr:record",
            "artifactr:set_focus",
            "artifactr:create_artifact",
            "artifactr:edit_artifact",
            "artifactr:propose_change",
        }
    ),
)
"""The tenant's own role: what an editor does to files, without archiving one."""

ASKER = Role(
    name="asker",
    actions=frozenset(
        {
            "artifactr:open",
            "artifactr:read_artifacts",
            "artifactr:read_threads",
            "artifactr:read_proposals",
            "artifactr:read_runs",
            "artifactr:read_history",
            "artifactr:read_events",
            "artifactr:create_thread",
            "artifactr:post_message",
            "artifactr:record",
            "artifactr:set_focus",
        }
    ),
)
"""The tenant's own role: a viewer who may talk to the agent, and so start its runs, which
record what they do and follow the files they read; it changes no artifact."""


def subject_of(tenant: TenantId, workspace: WorkspaceId | None, actor: Actor) -> Subject:
    """Map artifactr's actor to grantr's subject, as the application's template does.

    A person is themselves; an agent's run or an MCP client is the person it acts for, or an
    agent that holds nothing; the system is the application's own principal.
    """
    match actor:
        case UserActor(id=user):
            return User(id=user)
        case AgentActor(on_behalf_of=UserActor(id=user)):
            return User(id=user)
        case AgentActor(on_behalf_of=ExternalAgentActor(on_behalf_of=UserActor(id=user))):
            return User(id=user)
        case ExternalAgentActor(on_behalf_of=UserActor(id=user)):
            return User(id=user)
        case SystemActor():
            return APPLICATION
        case _:
            return GrantrAgent()


@dataclass(kw_only=True)
class World(tests.world.World):
    """The world (tests/world.py) on SQL: one tenant's workspace, grantr deciding who may do
    what in it."""

    grants: Grants
    asked: list[tuple[Actor, Access]] = field(default_factory=list[tuple[Actor, Access]])
    threads: dict[str, str] = field(default_factory=dict[str, str])

    async def upload(self, actor: Actor = EDDIE, data: bytes | None = None) -> str:
        """Upload a small document as an actor; return its id."""
        sample = data or build_docx(("Draft agreement", "The quick brown fox pays a fee."))
        outcome = await self.files.upload(await self.ws(actor), "contract.docx", chunks(sample))
        assert outcome.type == "applied"
        return outcome.artifact_id

    async def restrict(self, artifact_id: str) -> None:
        """Restrict an artifact: hidden from all but its grantees and the admins."""
        item = Resource(kind="artifact", workspace=WORKSPACE, id=artifact_id)
        await self.grants.restrict(TENANT, item, by=User(id=OLIVE.id))

    def actions(self) -> set[str]:
        """Every action ``authorize`` was asked, by anyone."""
        return {access.action for _, access in self.asked}

    async def run(
        self, sender: Actor, steps: Sequence[ModelResponse], *, thread: str | None = None
    ) -> "Transcript":
        """Send a message as ``sender`` to a scripted agent, wait for its run; what it did.

        It runs in ``thread``, or in a thread of the sender's own, made the first time.
        """
        requests: list[list[ModelMessage]] = []
        script = iter(steps)

        async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            requests.append(list(messages))
            return next(script)

        agent = Agent(
            function_model(respond),
            deps_type=Session[None],
            capabilities=[ArtifactWorkspace(types=[WordDocument])],
            toolsets=[native_file_tools(self.files, view=True)],
        )
        runner = Runner(agent, app=None)
        ws = await self.ws(sender)
        if thread is None and sender.participant not in self.threads:
            self.threads[sender.participant] = (await ws.create_thread()).id
        thread_id = thread or self.threads[sender.participant]
        before = await ws.read(threads={thread_id}, last=1)
        try:
            sent = await runner.send(ws, thread_id, "Please work on the contract.")
            assert sent.run is not None
            await sent.run.wait()
        finally:
            await runner.aclose()
        events = await ws.read(after_seq=before[-1].seq, threads={thread_id})
        return Transcript(requests, events)


@dataclass
class Transcript:
    """What a run did: the requests its model was sent, and its thread's log."""

    requests: list[list[ModelMessage]]
    events: list[Envelope]

    def answers(self) -> list[str]:
        """What each tool call gave back to the model, in order: a result or a retry."""
        answered: list[str] = []
        for messages in self.requests:
            last = messages[-1]
            for part in last.parts if isinstance(last, ModelRequest) else ():
                if isinstance(part, ToolReturnPart):
                    answered.append(str(part.content))
                elif isinstance(part, RetryPromptPart):
                    answered.append(part.model_response())
        return answered

    def tool_returns(self) -> list[tuple[str, str]]:
        """Each ``tool_returned`` in the log: the tool's name and status, in order."""
        return [
            (e.event.tool_name, e.event.status)
            for e in self.events
            if isinstance(e.event, ToolReturned)
        ]


def call(tool: str, **args: Any) -> ModelResponse:
    """Return a response that calls one tool."""
    return ModelResponse(parts=[ToolCallPart(tool, args)])


def say(text: str) -> ModelResponse:
    """Return a response that ends the run with a message."""
    return ModelResponse(parts=[TextPart(text)])


def recording(
    authorize: Callable[[str, str | None, Actor, Access], Awaitable[bool]],
    asked: list[tuple[Actor, Access]],
) -> Callable[[str, str | None, Actor, Access], Awaitable[bool]]:
    """Wrap an ``authorize`` hook so each access it is asked is kept, in order."""

    async def recorded(tenant: str, workspace: str | None, actor: Actor, access: Access) -> bool:
        asked.append((actor, access))
        return await authorize(tenant, workspace, actor, access)

    return recorded


async def people(grants: Grants) -> None:
    """Make the tenant and its people, each with their role on the workspace."""
    await grants.provision_tenant(TENANT, owner=OLIVE.id)
    owner = User(id=OLIVE.id)
    await grants.define_role(TENANT, CONTRIBUTOR, by=owner)
    await grants.define_role(TENANT, ASKER, by=owner)
    on = Resource(kind="workspace", workspace=WORKSPACE)
    for person, role in (
        (RITA, "viewer"),
        (EDDIE, "editor"),
        (ERIN, "editor"),
        (CARL, CONTRIBUTOR.name),
        (ABE, ASKER.name),
        (ADA, "admin"),
    ):
        user = User(id=person.id)
        await grants.add_member(TENANT, user, by=owner)
        await grants.grant(TENANT, role, on=on, to=user, by=owner)


@pytest.fixture
async def world(engine: AsyncEngine) -> World:
    """A fresh workspace on SQLite or PostgreSQL, its app on, grantr deciding access."""
    grants = Grants(InMemoryStorage(), catalogs=[ACTIONS], application=APPLICATION)
    await grants.bootstrap()
    await people(grants)
    asked: list[tuple[Actor, Access]] = []
    hooks = grants.hooks(subject_of)
    usual = await world_on(
        engine,
        authorize=recording(hooks.authorize, asked),
        hidden=hooks.hidden,
        deadline=DEADLINE,
        render_deadline=DEADLINE,
    )
    return World(**usual.parts(), grants=grants, asked=asked)
